package io.lockwatch.api;

import java.util.Map;

import com.atlassian.oai.validator.OpenApiInteractionValidator;
import com.atlassian.oai.validator.model.SimpleRequest;
import com.atlassian.oai.validator.report.JsonValidationReportFormat;
import com.atlassian.oai.validator.report.LevelResolver;
import com.atlassian.oai.validator.report.SimpleValidationReportFormat;
import com.atlassian.oai.validator.report.ValidationReport;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import io.swagger.v3.oas.models.OpenAPI;
import org.apache.camel.Exchange;
import org.apache.camel.component.rest.openapi.RestOpenApiComponent;
import org.apache.camel.component.rest.openapi.RestOpenApiHelper;
import org.apache.camel.http.base.HttpHeaderFilterStrategy;
import org.apache.camel.spi.RestClientRequestValidator.ValidationError;

/**
 * A request checked against the contract by the Atlassian validator, as Camel's {@code OpenApiRestClientRequestValidator}
 * checks it, with one difference: the validator is built once for the contract, not for every request. Built, it
 * turns the contract's schemas into JSON and transforms them; Camel 4.14 built it per request, which was 55% of the
 * service's CPU with 1,000 clients long-polling their feeds (a JFR profile; BENCHMARKS). The contract's security is
 * not for it to check: Camel hands it no Authorization header, and Spring Security and ClientScope decide.
 */
final class ContractValidator {

    private static final String SECURITY = "validation.request.security";
    private static final JsonFactory JSON = new JsonFactory();
    private static final String A_READING = "{\"sensor_id\":\"A\",\"data\":0}";

    private final HttpHeaderFilterStrategy filter = new HttpHeaderFilterStrategy();
    private volatile Built built;

    private record Built(OpenAPI contract, OpenApiInteractionValidator validator, String basePath) {
    }

    ContractValidator() {
        // the request's headers the validator is not given, as Camel leaves them out
        for (String h : new String[] {"accept", "authorization", "content-encoding", "cookie", "origin", "user-agent"}) {
            filter.getOutFilter().add(h);
        }
    }

    /** The validator's 400 with its report, or null when the request keeps to the contract (or none is at hand). */
    ValidationError validate(Exchange exchange) {
        OpenAPI contract = exchange.getProperty("CamelRestOpenAPI", OpenAPI.class);
        if (contract == null) {
            return null;
        }
        Built b = builtFor(exchange, contract);
        String method = exchange.getMessage().getHeader(Exchange.HTTP_METHOD, String.class);
        String path = exchange.getMessage().getHeader(Exchange.HTTP_PATH, String.class);
        if (path != null && b.basePath() != null && path.startsWith(b.basePath())) {
            path = path.substring(b.basePath().length());
        }
        String accept = exchange.getMessage().getHeader("Accept", String.class);
        String contentType = org.apache.camel.support.ExchangeHelper.getContentType(exchange);
        String body = org.apache.camel.support.MessageHelper.extractBodyAsString(exchange.getIn());
        SimpleRequest.Builder request = new SimpleRequest.Builder(method, path, false);
        if (contentType != null) {
            request.withContentType(contentType);
        }
        if (accept != null) {
            request.withAccept(accept);
        }
        boolean readings = "POST".equals(method) && "/readings".equals(path);
        if (body != null) {
            request.withBody(readings && wellFormedJson(body) ? A_READING : body);
        }
        for (Map.Entry<String, Object> h : exchange.getMessage().getHeaders().entrySet()) {
            String name = h.getKey();
            if (!name.regionMatches(true, 0, "Camel", 0, 5) && !filter.applyFilterToCamelHeaders(name, h.getValue(), exchange)) {
                request.withHeader(name, exchange.getMessage().getHeader(name, String.class));
            }
        }
        String query = exchange.getMessage().getHeader(Exchange.HTTP_QUERY, String.class);
        if (query != null) {
            for (String pair : query.split("&")) {
                String[] kv = pair.split("=");
                if (kv.length == 2) {
                    request.withQueryParam(kv[0], kv[1]);
                } else {
                    request.withQueryParam(kv[0], "");
                }
            }
        }
        ValidationReport report = b.validator().validateRequest(request.build());
        if (readings) {
            report = withoutBodySchema(report);
        }
        if (!report.hasErrors()) {
            return null;
        }
        String text = accept != null && accept.contains("application/json")
                ? JsonValidationReportFormat.getInstance().apply(report)
                : SimpleValidationReportFormat.getInstance().apply(report);
        return new ValidationError(400, text);
    }

    /**
     * Whether the body is one JSON value and nothing else, read as tokens without building a tree. A body of readings
     * that is JSON is given to the validator as one reading instead: what it says of their schema is not kept
     * ({@link #withoutBodySchema}), and walking an array of 1,000 through the contract's oneOf took 70 ms a request
     * (issue 55). A body that is not JSON goes to the validator as it is, which says so as for any other operation.
     */
    private static boolean wellFormedJson(String body) {
        try (JsonParser p = JSON.createParser(body)) {
            if (p.nextToken() == null) {
                return false;
            }
            p.skipChildren();
            return p.nextToken() == null;
        } catch (java.io.IOException e) {
            return false;
        }
    }

    /**
     * The report without what it says of the body's schema: readings are checked one by one as ingest checks them
     * (ReadingsApi), which names the bad one ({@code [3].data}); the validator would say only that the body matches
     * neither a reading nor an array of them. A body that is not JSON stays the validator's to say. The contract
     * declares their schema for the API's clients.
     */
    private static ValidationReport withoutBodySchema(ValidationReport report) {
        return ValidationReport.from(report.getMessages().stream()
                .filter(m -> !m.getKey().startsWith("validation.request.body.schema") || m.getKey().endsWith(".invalidJson"))
                .toList());
    }

    private Built builtFor(Exchange exchange, OpenAPI contract) {
        Built b = built;
        if (b != null && b.contract() == contract) {
            return b;
        }
        synchronized (this) {
            if (built == null || built.contract() != contract) {
                LevelResolver.Builder levels = LevelResolver.create();
                Map<String, String> configured = exchange.getContext().getRestConfiguration().getValidationLevels();
                if (configured != null) {
                    configured.forEach((key, level) -> {
                        ValidationReport.Level l = ValidationReport.Level.valueOf(level);
                        if (key.equalsIgnoreCase("defaultLevel")) {
                            levels.withDefaultLevel(l);
                        } else {
                            levels.withLevel(key, l);
                        }
                    });
                }
                levels.withLevel(SECURITY, ValidationReport.Level.IGNORE);
                RestOpenApiComponent component = (RestOpenApiComponent) exchange.getContext().hasComponent("rest-openapi");
                built = new Built(contract, OpenApiInteractionValidator.createFor(contract)
                        .withLevelResolver(levels.build()).build(),
                        RestOpenApiHelper.determineBasePath(exchange.getContext(), component, null, contract));
            }
            return built;
        }
    }
}
