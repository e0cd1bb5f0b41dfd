package io.lockwatch.api;

import java.util.ArrayList;
import java.util.List;

import com.atlassian.oai.validator.report.MessageResolver;
import com.atlassian.oai.validator.report.ValidationReport;
import com.atlassian.oai.validator.schema.SchemaValidator;
import com.fasterxml.jackson.databind.JsonNode;
import io.swagger.v3.oas.models.OpenAPI;
import io.swagger.v3.oas.models.media.Schema;
import io.swagger.v3.parser.OpenAPIV3Parser;

/**
 * The contract's schemas, checked by the same validator Camel runs on request bodies, for what that validator never
 * sees: the rows of a registry file (a CSV row is read into JSON first). So a row and the sensor operations it
 * stands for are held to one set of rules, written once in openapi.yaml.
 */
final class ContractSchemas {

    private final OpenAPI contract;
    private final SchemaValidator validator;

    ContractSchemas(String resource) {
        contract = new OpenAPIV3Parser().read(resource);
        if (contract == null) {
            throw new IllegalStateException("the contract " + resource + " is not on the classpath or does not parse");
        }
        validator = new SchemaValidator(contract, new MessageResolver());
    }

    /** What is wrong with the value against the named schema, a line each ("field: why"); empty if nothing is. */
    List<String> problems(String schemaName, JsonNode value) {
        Schema<?> schema = contract.getComponents().getSchemas().get(schemaName);
        if (schema == null) {
            throw new IllegalArgumentException("the contract has no schema " + schemaName);
        }
        ValidationReport report = validator.validate(() -> value, schema, null);
        List<String> problems = new ArrayList<>();
        for (ValidationReport.Message m : report.getMessages()) {
            if (m.getLevel() != ValidationReport.Level.ERROR) {
                continue;
            }
            String field = m.getContext().flatMap(ValidationReport.MessageContext::getPointers)
                    .map(ValidationReport.MessageContext.Pointers::getInstance)
                    .filter(p -> !p.isEmpty() && !p.equals("/")).map(p -> p.substring(1).replace('/', '.')).orElse(null);
            String why = m.getMessage().replaceFirst("^\\[Path '[^']*'] ", ""); // the field is named once, in front
            problems.add(field == null ? why : field + ": " + why);
        }
        return problems;
    }
}
