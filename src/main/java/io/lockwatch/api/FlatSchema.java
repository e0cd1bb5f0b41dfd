package io.lockwatch.api;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * A flat object schema of the contract, checked for what no request validator sees: the rows of a registry file (a
 * CSV row is read into JSON first). The rules are read from openapi.yaml, so a row and the sensor and client
 * operations keep one set of them, written once; they are checked here in plain Java because the OpenAPI validator
 * costs about 40 µs a row in the service, which tripled the time of a 100,000-row import (docs/BENCHMARKS.md).
 * Only the keywords listed here may appear in the schema: any other is refused when it is read, so no rule of the
 * contract is silently skipped.
 */
final class FlatSchema {

    private static final Set<String> OBJECT_KEYWORDS = Set.of("type", "additionalProperties", "required", "properties",
            "description");
    private static final Set<String> FIELD_KEYWORDS = Set.of("type", "nullable", "minLength", "maxLength", "pattern",
            "enum", "minimum", "maximum", "description", "example");

    private record Field(String type, boolean nullable, Integer minLength, Integer maxLength, Pattern pattern,
                         List<String> oneOf, BigDecimal minimum, BigDecimal maximum) {
    }

    private final String name;
    private final Map<String, Field> fields = new LinkedHashMap<>();
    private final Set<String> required = new HashSet<>();

    private FlatSchema(String name) {
        this.name = name;
    }

    /** The schema of that name in the contract's components: a closed object of string and integer fields. */
    static FlatSchema of(String name, JsonNode schema) {
        if (schema == null || schema.isMissingNode() || !"object".equals(schema.path("type").asText())
                || !schema.path("additionalProperties").isBoolean() || schema.path("additionalProperties").asBoolean()
                || !schema.path("properties").isObject()) {
            throw new IllegalStateException(name + " is not a closed object schema");
        }
        onlyKeywords(name, schema, OBJECT_KEYWORDS);
        FlatSchema flat = new FlatSchema(name);
        schema.path("required").forEach(r -> flat.required.add(r.asText()));
        schema.path("properties").fields().forEachRemaining(p -> {
            String field = p.getKey();
            JsonNode s = p.getValue();
            String type = s.path("type").asText();
            if (!type.equals("string") && !type.equals("integer")) {
                throw new IllegalStateException(name + "." + field + " is neither a string nor an integer");
            }
            onlyKeywords(name + "." + field, s, FIELD_KEYWORDS);
            flat.fields.put(field, new Field(type, s.path("nullable").asBoolean(false), integer(s, "minLength"),
                    integer(s, "maxLength"), s.has("pattern") ? Pattern.compile(s.get("pattern").asText()) : null,
                    s.has("enum") ? values(s.get("enum")) : null,
                    s.has("minimum") ? s.get("minimum").decimalValue() : null,
                    s.has("maximum") ? s.get("maximum").decimalValue() : null));
        });
        return flat;
    }

    private static void onlyKeywords(String where, JsonNode schema, Set<String> known) {
        for (Iterator<String> keywords = schema.fieldNames(); keywords.hasNext(); ) {
            String keyword = keywords.next();
            if (!known.contains(keyword)) {
                throw new IllegalStateException(where + " uses " + keyword + ", which this check does not apply; "
                        + "check it with the OpenAPI validator");
            }
        }
    }

    private static List<String> values(JsonNode list) {
        List<String> values = new ArrayList<>();
        list.forEach(v -> values.add(v.asText()));
        return values;
    }

    private static Integer integer(JsonNode schema, String keyword) {
        return schema.has(keyword) ? schema.get(keyword).intValue() : null;
    }

    /** What is wrong with the value, a line each ("field: why"); empty if nothing is. */
    List<String> problems(JsonNode value) {
        List<String> problems = new ArrayList<>();
        for (Iterator<String> names = value.fieldNames(); names.hasNext(); ) {
            String field = names.next();
            if (!fields.containsKey(field)) {
                problems.add(field + ": not a field of " + name);
            }
        }
        fields.forEach((field, rule) -> {
            JsonNode v = value.get(field);
            if (v == null || v.isNull()) {
                if (required.contains(field)) {
                    problems.add(field + ": required");
                } else if (v != null && !rule.nullable()) {
                    problems.add(field + ": may not be null");
                }
                return;
            }
            String why = "string".equals(rule.type()) ? text(v, rule) : integer(v, rule);
            if (why != null) {
                problems.add(field + ": " + why);
            }
        });
        return problems;
    }

    private static String text(JsonNode v, Field rule) {
        if (!v.isTextual()) {
            return "must be text";
        }
        // lengths in code points, as JSON Schema counts them
        int length = v.textValue().codePointCount(0, v.textValue().length());
        if (rule.minLength() != null && length < rule.minLength()) {
            return "must be at least " + rule.minLength() + " characters long";
        }
        if (rule.maxLength() != null && length > rule.maxLength()) {
            return "must be at most " + rule.maxLength() + " characters long";
        }
        if (rule.pattern() != null && !rule.pattern().matcher(v.textValue()).find()) {
            return "must match " + rule.pattern().pattern();
        }
        if (rule.oneOf() != null && !rule.oneOf().contains(v.textValue())) {
            return "must be one of " + String.join(", ", rule.oneOf());
        }
        return null;
    }

    private static String integer(JsonNode v, Field rule) {
        if (!v.isIntegralNumber()) {
            return "must be a whole number";
        }
        BigDecimal n = v.decimalValue();
        if (rule.minimum() != null && n.compareTo(rule.minimum()) < 0) {
            return "must be at least " + rule.minimum();
        }
        if (rule.maximum() != null && n.compareTo(rule.maximum()) > 0) {
            return "must be at most " + rule.maximum();
        }
        return null;
    }
}
