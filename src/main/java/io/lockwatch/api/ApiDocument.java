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

    /** An operation as the contract declares it: who may call it, and the names of its query parameters. */
    record Operation(String id, java.util.Set<String> roles, java.util.Set<String> queryParameters) {
    }

    /** Every operation of the contract by its id. */
    java.util.Map<String, Operation> operations() {
        java.util.Map<String, Operation> operations = new java.util.HashMap<>();
        java.util.Set<String> defaultRoles = roles(document.path("security"));
        document.path("paths").forEach(path -> path.fields().forEachRemaining(entry -> {
            JsonNode op = entry.getValue();
            if (!op.has("operationId")) {
                return; // the path's own parameters
            }
            java.util.Set<String> query = new java.util.HashSet<>();
            for (JsonNode list : java.util.List.of(path.path("parameters"), op.path("parameters"))) {
                for (JsonNode p : list) {
                    JsonNode parameter = resolved(p);
                    if ("query".equals(parameter.path("in").asText())) {
                        query.add(parameter.path("name").asText());
                    }
                }
            }
            operations.put(op.get("operationId").asText(), new Operation(op.get("operationId").asText(),
                    op.has("security") ? roles(op.get("security")) : defaultRoles, java.util.Set.copyOf(query)));
        }));
        return java.util.Map.copyOf(operations);
    }

    /** A method and path template of the contract (as under {@code servers}, e.g. {@code /clients/{clientId}}) and its operation. */
    public record Endpoint(String method, String path, String operationId) {
    }

    /** Every method and path of the contract, with the operation that answers it. */
    public java.util.List<Endpoint> endpoints() {
        java.util.List<Endpoint> endpoints = new java.util.ArrayList<>();
        document.path("paths").fields().forEachRemaining(path -> path.getValue().fields().forEachRemaining(entry -> {
            if (entry.getValue().has("operationId")) {
                endpoints.add(new Endpoint(entry.getKey().toUpperCase(java.util.Locale.ROOT), path.getKey(),
                        entry.getValue().get("operationId").asText()));
            }
        }));
        return java.util.List.copyOf(endpoints);
    }

    /** The names of every header parameter the contract declares, of any operation. */
    java.util.Set<String> headerParameters() {
        java.util.Set<String> names = new java.util.HashSet<>();
        document.path("paths").forEach(path -> {
            java.util.List<JsonNode> lists = new java.util.ArrayList<>(java.util.List.of(path.path("parameters")));
            path.forEach(op -> lists.add(op.path("parameters")));
            for (JsonNode list : lists) {
                for (JsonNode p : list) {
                    JsonNode parameter = resolved(p);
                    if ("header".equals(parameter.path("in").asText())) {
                        names.add(parameter.path("name").asText());
                    }
                }
            }
        });
        return java.util.Set.copyOf(names);
    }

    private static java.util.Set<String> roles(JsonNode security) {
        java.util.Set<String> roles = new java.util.HashSet<>();
        security.forEach(requirement -> requirement.fieldNames().forEachRemaining(roles::add));
        return java.util.Set.copyOf(roles);
    }

    private JsonNode resolved(JsonNode node) {
        String ref = node.path("$ref").asText("");
        return ref.startsWith("#/") ? document.at(ref.substring(1)) : node;
    }

    public void serve(Exchange exchange) {
        Json.respond(exchange, 200, document);
    }
}
