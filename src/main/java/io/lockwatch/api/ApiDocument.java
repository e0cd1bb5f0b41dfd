package io.lockwatch.api;

import java.io.IOException;
import java.io.InputStream;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import org.apache.camel.Exchange;

/**
 * The contract the REST DSL was built from ({@code openapi.yaml} on the classpath, the same resource
 * {@code api.camel.yaml} names), served as JSON at {@code GET /api/v1/openapi.json} for API clients, code
 * generators and tools. It is read once at start-up: the routes, too, are built from it once.
 */
public final class ApiDocument {

    /** The classpath resource of the contract. */
    static final String CONTRACT = "openapi.yaml";

    private final JsonNode document;

    private ApiDocument(JsonNode document) {
        this.document = document;
    }

    static ApiDocument load(String resource) throws IOException {
        try (InputStream in = ApiDocument.class.getClassLoader().getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException(resource + " is not on the classpath");
            }
            return new ApiDocument(new ObjectMapper(new YAMLFactory()).readTree(in));
        }
    }

    /** The schema of that name in the contract's components (a missing node if there is none). */
    JsonNode schema(String name) {
        return document.path("components").path("schemas").path(name);
    }

    public void serve(Exchange exchange) {
        Json.respond(exchange, 200, document);
    }
}
