package io.lockwatch.api;

import java.util.Iterator;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;
import io.lockwatch.ingest.ReadingParser;

/**
 * Field checks with a problem naming the field. The OpenAPI validator checks the same schema first; these keep
 * the rules where the code relies on them and give the same answer whichever runs.
 */
final class Validation {

    private Validation() {
    }

    static JsonNode object(JsonNode body, String... allowed) {
        if (body == null || !body.isObject()) {
            throw ApiProblem.badRequest(null, "the request body must be a JSON object");
        }
        Set<String> known = Set.of(allowed);
        for (Iterator<String> names = body.fieldNames(); names.hasNext(); ) {
            String name = names.next();
            if (!known.contains(name)) {
                throw ApiProblem.badRequest(name, "unknown field " + name);
            }
        }
        return body;
    }

    static String sensorId(JsonNode node, String field) {
        if (node == null || node.isNull()) {
            throw ApiProblem.badRequest(field, field + " is required");
        }
        if (!node.isTextual() || !ReadingParser.SENSOR_ID.matcher(node.textValue()).matches()) {
            throw ApiProblem.badRequest(field, field + " must be 1 to 16 letters and digits");
        }
        return node.textValue();
    }

    static String text(JsonNode node, String field, int max, boolean required) {
        if (node == null || node.isNull()) {
            if (required) {
                throw ApiProblem.badRequest(field, field + " is required");
            }
            return null;
        }
        if (!node.isTextual() || node.textValue().isBlank() || node.textValue().length() > max) {
            throw ApiProblem.badRequest(field, field + " must be a non-empty string of at most " + max + " characters");
        }
        if (!ReadingParser.isPlainText(node.textValue(), true)) {
            throw ApiProblem.badRequest(field, field + " must not contain control characters other than tabs and line "
                    + "breaks (NUL, for example), nor a broken UTF-16 escape");
        }
        return node.textValue();
    }

    /** A number of seconds from 1 to 30 days, or null. */
    static Integer seconds(JsonNode node, String field) {
        if (node == null || node.isNull()) {
            return null;
        }
        if (!node.isIntegralNumber() || node.asLong() < 1 || node.asLong() > 2_592_000) {
            throw ApiProblem.badRequest(field, field + " must be a whole number of seconds from 1 to 2592000 (30 days)");
        }
        return node.intValue();
    }

    static Integer timeout(JsonNode node) {
        if (node == null || node.isNull()) {
            return null;
        }
        if (!node.isIntegralNumber() || node.asLong() < 1 || node.asLong() > 2_592_000) {
            throw ApiProblem.badRequest("heartbeat_timeout_seconds",
                    "heartbeat_timeout_seconds must be a whole number of seconds from 1 to 2592000 (30 days)");
        }
        return node.intValue();
    }
}
