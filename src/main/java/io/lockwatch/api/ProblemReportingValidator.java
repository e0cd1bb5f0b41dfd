package io.lockwatch.api;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.camel.Exchange;
import org.apache.camel.component.rest.openapi.validator.client.OpenApiRestClientRequestValidator;
import org.apache.camel.spi.RestClientRequestValidator;

/**
 * Camel's OpenAPI request validator, answering in the API's {@code application/problem+json} with the field
 * the first error points at, and without echoing the request's headers back.
 */
public class ProblemReportingValidator implements RestClientRequestValidator {

    private static final ObjectMapper JSON = new ObjectMapper();
    private final OpenApiRestClientRequestValidator openApi = new OpenApiRestClientRequestValidator();

    @Override
    public ValidationError validate(Exchange exchange, ValidationContext context) {
        Object accept = exchange.getMessage().getHeader("Accept");
        exchange.getMessage().setHeader("Accept", "application/json"); // the validator then reports in JSON
        ValidationError error;
        try {
            error = openApi.validate(exchange, context);
        } finally {
            exchange.getMessage().setHeader("Accept", accept);
        }
        if (error == null) {
            return null;
        }
        exchange.getMessage().removeHeaders("*");
        exchange.getMessage().setHeader(Exchange.CONTENT_TYPE, Problems.CONTENT_TYPE);
        try {
            return new ValidationError(error.statusCode(), JSON.writeValueAsString(problem(error.statusCode(), error.body())));
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    static Map<String, Object> problem(int status, String report) {
        String detail = "the request does not match the API description";
        String field = null;
        List<String> errors = new ArrayList<>();
        if (report != null) {
            try {
                for (JsonNode m : JSON.readTree(report.getBytes(StandardCharsets.UTF_8)).path("messages")) {
                    errors.add(m.path("message").asText());
                    if (field == null) {
                        String pointer = m.path("context").path("pointers").path("instance").asText("");
                        String parameter = m.path("context").path("parameter").path("name").asText("");
                        field = !pointer.isEmpty() && !pointer.equals("/") ? pointer.replaceFirst("^/", "").replace('/', '.')
                                : !parameter.isEmpty() ? parameter : null;
                    }
                }
            } catch (IOException e) {
                errors.add(report.lines().findFirst().orElse(report));
            }
        }
        if (!errors.isEmpty()) {
            detail = errors.get(0);
        }
        Map<String, Object> problem = Problems.body(status, status == 400 ? "Bad request" : "Request not acceptable", detail, field);
        if (errors.size() > 1) {
            problem.put("errors", errors);
        }
        return problem;
    }
}
