package io.lockwatch.api;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

import com.fasterxml.jackson.databind.JsonNode;
import io.swagger.v3.oas.models.OpenAPI;
import io.swagger.v3.oas.models.media.Schema;
import io.swagger.v3.parser.OpenAPIV3Parser;

/**
 * A flat schema of the contract, checked for what no request validator sees: the rows of a registry file (a CSV row
 * is read into JSON first). The rules are read from openapi.yaml, so a row and the sensor and client operations
 * keep one set of them, written once; they are checked here in plain Java because the OpenAPI validator costs about
 * 40 µs a row in the service, which tripled the time of a 100,000-row import (docs/BENCHMARKS.md). A schema that
 * uses a keyword this does not check is refused when it is read, so no rule of the contract is silently skipped.
 */
final class ContractSchemas {

    /** The one schema checked this way, read from the contract once. */
    static FlatSchema registryRow(String resource) {
        OpenAPI contract = new OpenAPIV3Parser().read(resource);
        if (contract == null) {
            throw new IllegalStateException("the contract " + resource + " is not on the classpath or does not parse");
        }
        return FlatSchema.of("RegistryRow", contract.getComponents().getSchemas().get("RegistryRow"));
    }

    private ContractSchemas() {
    }

    /** An object of string and integer fields: required ones, lengths, a pattern, bounds, null where allowed. */
    static final class FlatSchema {

        private record Field(String type, boolean nullable, Integer minLength, Integer maxLength, Pattern pattern,
                             BigDecimal minimum, BigDecimal maximum) {
        }

        private final String name;
        private final Map<String, Field> fields = new LinkedHashMap<>();
        private final Set<String> required;

        private FlatSchema(String name, Set<String> required) {
            this.name = name;
            this.required = required;
        }

        static FlatSchema of(String name, Schema<?> schema) {
            if (schema == null || !"object".equals(schema.getType()) || !Boolean.FALSE.equals(schema.getAdditionalProperties())
                    || schema.getProperties() == null) {
                throw new IllegalStateException(name + " is not a closed object schema");
            }
            FlatSchema flat = new FlatSchema(name, schema.getRequired() == null ? Set.of() : Set.copyOf(schema.getRequired()));
            schema.getProperties().forEach((field, s) -> {
                boolean plain = s.getFormat() == null && s.getEnum() == null && s.get$ref() == null && s.getMultipleOf() == null
                        && s.getExclusiveMinimum() == null && s.getExclusiveMaximum() == null && s.getAllOf() == null
                        && s.getOneOf() == null && s.getAnyOf() == null && s.getNot() == null;
                if (!plain || !("string".equals(s.getType()) || "integer".equals(s.getType()))) {
                    throw new IllegalStateException(name + "." + field + " uses more than a string's or an integer's "
                            + "length, pattern and bounds; check it with the OpenAPI validator");
                }
                flat.fields.put(field, new Field(s.getType(), Boolean.TRUE.equals(s.getNullable()), s.getMinLength(),
                        s.getMaxLength(), s.getPattern() == null ? null : Pattern.compile(s.getPattern()), s.getMinimum(),
                        s.getMaximum()));
            });
            return flat;
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
}
