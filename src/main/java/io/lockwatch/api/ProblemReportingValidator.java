package io.lockwatch.api;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.camel.Exchange;
import org.apache.camel.spi.RestClientRequestValidator;

/**
 * The contract's request validator ({@link ContractValidator}, Camel's, built once), answering in the API's
 * {@code application/problem+json} with the field the first error points at, and without echoing the request's
 * headers back.
 */
class ProblemReportingValidator implements RestClientRequestValidator {

    private static final ObjectMapper JSON = Json.MAPPER;
    private final ContractValidator openApi = new ContractValidator();

    @Override
    public ValidationError validate(Exchange exchange, ValidationContext context) {
        if (registryFile(exchange)) {
            // read as it streams by the import, each row checked against RegistryRow there: read whole here, a file
            // of hundreds of megabytes would be held in memory. Its media types are checked on a stand-in body.
            Object file = exchange.getMessage().getBody();
            exchange.getMessage().setBody("[]");
            try {
                return checked(exchange);
            } finally {
                exchange.getMessage().setBody(file);
            }
        }
        String notUtf8 = notUtf8(exchange);
        if (notUtf8 == null && onlyWhiteSpace(exchange.getMessage().getBody())) {
            // the validator's parser has no token to read and says so in its own words
            notUtf8 = NOT_JSON + ": it holds only white space";
        }
        if (notUtf8 != null) {
            // JSON is UTF-8 (RFC 8259); the validator and Jackson would fail on these bytes as an internal error
            exchange.getMessage().removeHeaders("*");
            exchange.getMessage().setHeader(Exchange.CONTENT_TYPE, Problems.CONTENT_TYPE);
            return new ValidationError(400, Problems.json(Problems.body(400, "Bad request", notUtf8, null)));
        }
        return checked(exchange);
    }

    private static boolean registryFile(Exchange exchange) {
        String path = exchange.getMessage().getHeader(Exchange.HTTP_PATH, String.class);
        return "POST".equals(exchange.getMessage().getHeader(Exchange.HTTP_METHOD, String.class))
                && path != null && path.endsWith("/import");
    }

    private ValidationError checked(Exchange exchange) {
        Object accept = exchange.getMessage().getHeader("Accept");
        String query = exchange.getMessage().getHeader(Exchange.HTTP_QUERY, String.class);
        exchange.getMessage().setHeader("Accept", "application/json"); // the validator then reports in JSON
        // Camel's validator takes the query's values as they came, still percent-encoded: it is given them decoded
        exchange.getMessage().setHeader(Exchange.HTTP_QUERY, decoded(query));
        ValidationError error;
        try {
            error = openApi.validate(exchange);
        } finally {
            exchange.getMessage().setHeader("Accept", accept);
            exchange.getMessage().setHeader(Exchange.HTTP_QUERY, query);
        }
        if (error == null) {
            return null;
        }
        exchange.getMessage().removeHeaders("*");
        exchange.getMessage().setHeader(Exchange.CONTENT_TYPE, Problems.CONTENT_TYPE);
        return new ValidationError(error.statusCode(), Problems.json(problem(error.statusCode(), error.body())));
    }

    /**
     * What is wrong with a body that is not UTF-8, or null. The body is read into bytes once and kept so, for the
     * steps after this one.
     */
    static String notUtf8(Exchange exchange) {
        Object body = exchange.getMessage().getBody();
        if (body == null || body instanceof String) {
            return null;
        }
        byte[] bytes = exchange.getMessage().getBody(byte[].class);
        if (bytes == null) {
            return null;
        }
        exchange.getMessage().setBody(bytes);
        return notUtf8(bytes);
    }

    static String notUtf8(byte[] bytes) {
        java.nio.ByteBuffer in = java.nio.ByteBuffer.wrap(bytes);
        java.nio.charset.CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(java.nio.charset.CodingErrorAction.REPORT)
                .onUnmappableCharacter(java.nio.charset.CodingErrorAction.REPORT);
        java.nio.CharBuffer out = java.nio.CharBuffer.allocate(1024);
        while (true) {
            java.nio.charset.CoderResult result = decoder.decode(in, out, true);
            if (result.isError()) {
                return "the body is not valid UTF-8: byte 0x%02X at offset %d".formatted(bytes[in.position()] & 0xff, in.position());
            }
            if (result.isUnderflow()) {
                return null;
            }
            out.clear();
        }
    }

    /**
     * The query with each value percent-decoded, for the validator, which splits it at {@code &} and {@code =}:
     * a value that decodes to either, or does not decode, is left as it came.
     */
    static String decoded(String query) {
        if (query == null || query.indexOf('%') < 0 && query.indexOf('+') < 0) {
            return query;
        }
        java.util.StringJoiner out = new java.util.StringJoiner("&");
        for (String part : query.split("&", -1)) {
            int eq = part.indexOf('=');
            String value = eq < 0 ? null : part.substring(eq + 1);
            String plain = value;
            if (value != null) {
                try {
                    plain = java.net.URLDecoder.decode(value, StandardCharsets.UTF_8);
                } catch (IllegalArgumentException e) {
                    plain = value;
                }
                if (plain.indexOf('&') >= 0 || plain.indexOf('=') >= 0) {
                    plain = value;
                }
            }
            out.add(eq < 0 ? part : part.substring(0, eq + 1) + plain);
        }
        return out.toString();
    }

    static Map<String, Object> problem(int status, String report) {
        String detail = "the request does not match the API description";
        String field = null;
        List<String> errors = new ArrayList<>();
        if (report != null) {
            try {
                for (JsonNode m : JSON.readTree(report.getBytes(StandardCharsets.UTF_8)).path("messages")) {
                    JsonNode parameter = m.path("context").path("parameter");
                    String key = m.path("key").asText();
                    if (key.endsWith(".invalidJson")) {
                        // the validator's parser speaks of tokens and sources: say it plainly, with where if it knows;
                        // of a parameter, which has no JSON but a value the parser could not read as its type
                        errors.add(parameter.has("name") ? notOfItsType(parameter) : notJson(m.path("message").asText()));
                    } else {
                        errors.add(m.path("message").asText());
                    }
                    if (field == null) {
                        field = parameter.has("name") ? parameter.path("name").asText()
                                : field(key, m.path("context").path("pointers").path("instance").asText(null),
                                        m.path("message").asText());
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

    /** The first name a message lists, as the validator quotes them: {@code (["a","b"])} or {@code ["a"]}. */
    private static final java.util.regex.Pattern NAMED = java.util.regex.Pattern.compile("\\[\"((?:[^\"\\\\]|\\\\.)*)\"");

    /**
     * The field a body's error concerns, in the service's own style ({@code steps[0].after_seconds}): where it points,
     * and for a property that is missing or not allowed, that property; the body itself (the root) is {@code ""}.
     * Null for an error that points nowhere in the body (a missing body, a media type).
     */
    static String field(String key, String pointer, String message) {
        if (pointer == null) {
            return null;
        }
        String at = path(pointer);
        if (key.endsWith(".required") || key.endsWith(".additionalProperties")) {
            java.util.regex.Matcher named = NAMED.matcher(message);
            if (named.find()) {
                return at.isEmpty() ? named.group(1) : at + "." + named.group(1);
            }
        }
        return at;
    }

    /** A JSON pointer ({@code /steps/0/after_seconds}) as the service names a field: {@code steps[0].after_seconds}. */
    static String path(String pointer) {
        StringBuilder out = new StringBuilder();
        for (String token : pointer.split("/")) {
            if (token.isEmpty()) {
                continue;
            }
            String name = token.replace("~1", "/").replace("~0", "~");
            if (name.chars().allMatch(Character::isDigit)) {
                out.append('[').append(name).append(']');
            } else {
                out.append(out.isEmpty() ? "" : ".").append(name);
            }
        }
        return out.toString();
    }

    /** A query or path parameter whose value the validator could not read as its schema's type. */
    private static String notOfItsType(JsonNode parameter) {
        String name = parameter.path("name").asText();
        String type = parameter.path("schema").path("type").asText("");
        return name + " must be " + switch (type) {
            case "boolean" -> "true or false";
            case "integer" -> "a whole number";
            case "number" -> "a number";
            case "array" -> "a list";
            default -> "a " + (type.isEmpty() ? "value of its schema" : type);
        };
    }

    private static final String NOT_JSON = ApiProblem.NOT_JSON;
    private static final java.util.regex.Pattern WHERE = java.util.regex.Pattern.compile("line: (\\d+), column: (\\d+)");

    /** The parser's complaint as the API says it: not JSON, and where, when the parser said. */
    static String notJson(String parserMessage) {
        java.util.regex.Matcher where = WHERE.matcher(parserMessage);
        return where.find() ? NOT_JSON + " (line " + where.group(1) + ", column " + where.group(2) + ")" : NOT_JSON;
    }

    /** A body of at least one byte, all of them JSON's white space. */
    private static boolean onlyWhiteSpace(Object body) {
        if (!(body instanceof byte[] bytes) || bytes.length == 0) {
            return body instanceof String text && !text.isEmpty() && text.isBlank();
        }
        for (byte b : bytes) {
            if (b != ' ' && b != '\t' && b != '\n' && b != '\r') {
                return false;
            }
        }
        return true;
    }
}
