package io.lockwatch.api;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.csv.CsvMapper;
import com.fasterxml.jackson.dataformat.csv.CsvParser;
import com.fasterxml.jackson.dataformat.csv.CsvSchema;
import io.lockwatch.notify.TargetGuard;
import io.lockwatch.registry.RegistryFile;
import io.lockwatch.registry.RegistryFile.Row;
import org.apache.camel.Exchange;

/**
 * The registry as a file ({@link RegistryFile}): imported from CSV or JSON, all or nothing, with every refused row
 * named by its number; exported as the same CSV (or JSON). A row's fields are checked against the contract's
 * RegistryRow, the rules of the sensor and client operations.
 */
public class RegistryFileApi {

    /** The columns, in the order of an export. */
    static final List<String> COLUMNS = List.of("sensor_id", "address", "heartbeat_timeout_seconds",
            "open_alarm_seconds", "client_name", "client_url");
    /** Refused rows named in one answer; the count says how many there were. */
    static final int MAX_ERRORS = 100;
    private static final CsvMapper CSV = new CsvMapper().enable(CsvParser.Feature.TRIM_SPACES)
            .enable(CsvParser.Feature.FAIL_ON_MISSING_COLUMNS)
            // quote a value only where it must be (a comma, a quote, a line break), so the export reads as it was written
            .enable(com.fasterxml.jackson.dataformat.csv.CsvGenerator.Feature.STRICT_CHECK_FOR_QUOTING);
    private static final CsvSchema HEADER = CsvSchema.emptySchema().withHeader().withStrictHeaders(false);

    private final RegistryFile file;
    private final TargetGuard guard;
    private final FlatSchema rowSchema;

    RegistryFileApi(RegistryFile file, TargetGuard guard, FlatSchema rowSchema) {
        this.file = file;
        this.guard = guard;
        this.rowSchema = rowSchema;
    }

    public void importFile(Exchange exchange) {
        byte[] body = exchange.getMessage().getBody(byte[].class);
        if (body == null || body.length == 0) {
            throw ApiProblem.badRequest(null, "the file is empty");
        }
        String type = String.valueOf(exchange.getMessage().getHeader(Exchange.CONTENT_TYPE, String.class));
        List<Map<String, JsonNode>> records = type.toLowerCase(java.util.Locale.ROOT).startsWith("text/csv")
                ? csv(body) : json(body);
        if (records.isEmpty()) {
            throw ApiProblem.badRequest(null, "the file has no rows");
        }
        List<Row> rows = new ArrayList<>(records.size());
        List<String> errors = new ArrayList<>();
        int refused = 0;
        Map<String, First> sensorFirst = new HashMap<>();
        Map<String, First> clientFirst = new HashMap<>();
        for (int i = 0; i < records.size(); i++) {
            String problem;
            try {
                Row row = row(records.get(i));
                rows.add(row);
                problem = agrees(row, i, sensorFirst, clientFirst);
            } catch (ApiProblem p) {
                problem = (p.field() == null ? "" : p.field() + ": ") + p.getMessage();
            }
            if (problem != null) {
                refused++;
                if (errors.size() < MAX_ERRORS) {
                    errors.add("row " + (i + 1) + ": " + problem);
                }
            }
        }
        if (refused > 0) {
            throw ApiProblem.badRequest(refused + (refused == 1 ? " row is" : " rows are") + " refused (row 1 is the first "
                    + "after the header); nothing was imported", errors);
        }
        RegistryFile.Outcome outcome;
        try {
            outcome = file.importRows(rows);
        } catch (RegistryFile.Refused e) {
            throw ApiProblem.badRequest(e.problems().size() + " rows are refused; nothing was imported", e.problems()
                    .stream().limit(MAX_ERRORS).map(p -> "row " + p.row() + ": " + p.field() + ": " + p.detail()).toList());
        }
        var sensors = new ResponseBodies.RegistryImported.Sensors(outcome.sensorsCreated(), outcome.sensorsUpdated(),
                outcome.sensorsUnchanged());
        var clients = new ResponseBodies.RegistryImported.Clients(outcome.clientsCreated(), outcome.clientsUpdated());
        var links = new ResponseBodies.RegistryImported.Links(outcome.linksAdded(), outcome.linksRemoved());
        Json.respond(exchange, 200, new ResponseBodies.RegistryImported(rows.size(), sensors, clients, links,
                outcome.newClients()));
    }

    public void exportFile(Exchange exchange) {
        List<Row> rows = file.export();
        String format = Json.header(exchange, "format"); // csv or json: the contract has checked it
        if ("json".equals(format)) {
            Json.respond(exchange, 200, rows); // each a RegistryRow (Json's mapper names a Row's fields as the contract does)
            return;
        }
        CsvSchema.Builder schema = CsvSchema.builder().setUseHeader(true);
        COLUMNS.forEach(schema::addColumn);
        List<List<Object>> values = new ArrayList<>(rows.size());
        for (Row r : rows) {
            // a cell a spreadsheet would run as a formula is marked as text; the import takes the mark off
            values.add(java.util.Arrays.asList(r.sensorId(), SpreadsheetCells.neutralised(r.address()), r.heartbeatTimeoutSeconds(),
                    r.openAlarmSeconds(), SpreadsheetCells.neutralised(r.clientName()), SpreadsheetCells.neutralised(r.clientUrl())));
        }
        String csv;
        try {
            csv = CSV.writer(schema.build()).writeValueAsString(values);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        exchange.getMessage().removeHeaders("*");
        exchange.getMessage().setHeader(Exchange.HTTP_RESPONSE_CODE, 200);
        exchange.getMessage().setHeader(Exchange.CONTENT_TYPE, "text/csv; charset=utf-8");
        exchange.getMessage().setHeader("Content-Disposition", "attachment; filename=\"lockwatch-registry.csv\"");
        exchange.getMessage().setBody(csv);
    }

    /**
     * The CSV's rows as fields: text as it came (less the mark an export puts before a formula-like cell), a whole
     * number where a number belongs, an empty cell none.
     */
    private static List<Map<String, JsonNode>> csv(byte[] body) {
        String text = new String(body, StandardCharsets.UTF_8);
        if (text.startsWith("\uFEFF")) {
            text = text.substring(1); // a spreadsheet's byte order mark
        }
        List<Map<String, JsonNode>> records = new ArrayList<>();
        try (MappingIterator<Map<String, String>> it = CSV.readerForMapOf(String.class).with(HEADER).readValues(text)) {
            CsvSchema read = (CsvSchema) it.getParserSchema();
            List<String> unknown = new ArrayList<>();
            Set<String> present = new java.util.HashSet<>();
            for (CsvSchema.Column c : read) {
                present.add(c.getName());
                if (!COLUMNS.contains(c.getName())) {
                    unknown.add(c.getName());
                }
            }
            if (!unknown.isEmpty() || !present.contains("sensor_id") || !present.contains("address")) {
                throw ApiProblem.badRequest(null, "the header must name the columns " + String.join(",", COLUMNS)
                        + " (sensor_id and address at least)" + (unknown.isEmpty() ? "" : "; unknown: " + unknown));
            }
            while (it.hasNextValue()) {
                Map<String, String> cells = it.nextValue();
                Map<String, JsonNode> fields = new HashMap<>();
                cells.forEach((name, value) -> fields.put(name, cell(name, value)));
                records.add(fields);
            }
        } catch (IOException | RuntimeException e) {
            if (e instanceof ApiProblem p) {
                throw p;
            }
            throw ApiProblem.badRequest(null, "the file is not CSV with a header row (RFC 4180): "
                    + firstLine(e.getMessage()) + " (row " + (records.size() + 1) + ")");
        }
        return records;
    }

    private static JsonNode cell(String column, String value) {
        if (value == null || value.isEmpty()) {
            return null;
        }
        if (column.endsWith("_seconds")) {
            try {
                return JsonNodeFactory.instance.numberNode(Long.parseLong(value));
            } catch (NumberFormatException e) {
                return JsonNodeFactory.instance.textNode(value); // refused by the field's check, which says why
            }
        }
        return JsonNodeFactory.instance.textNode(SpreadsheetCells.restored(value));
    }

    /** A JSON array of row objects with the same fields as the CSV's columns. */
    private static List<Map<String, JsonNode>> json(byte[] body) {
        JsonNode root;
        try {
            root = Json.MAPPER.readTree(body);
        } catch (IOException e) {
            throw ApiProblem.notJson();
        }
        if (root == null || !root.isArray()) {
            throw ApiProblem.badRequest(null, "the request body must be a JSON array of rows (or text/csv)");
        }
        List<Map<String, JsonNode>> records = new ArrayList<>(root.size());
        for (int i = 0; i < root.size(); i++) {
            JsonNode element = root.get(i);
            if (!element.isObject()) {
                throw ApiProblem.badRequest(null, "row " + (i + 1) + " is not a JSON object");
            }
            Map<String, JsonNode> fields = new HashMap<>();
            for (Iterator<Map.Entry<String, JsonNode>> it = element.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> f = it.next();
                fields.put(f.getKey(), f.getValue().isNull() ? null : f.getValue());
            }
            records.add(fields);
        }
        return records;
    }

    /**
     * One row's fields, checked against the contract's RegistryRow (the rules of the sensor and client operations),
     * then for what a schema cannot say: plain text, a client given whole, a URL the target guard allows.
     */
    private Row row(Map<String, JsonNode> fields) {
        ObjectNode f = Json.MAPPER.createObjectNode();
        fields.forEach((name, value) -> {
            if (value != null) {
                f.set(name, value);
            }
        });
        List<String> problems = rowSchema.problems(f);
        if (!problems.isEmpty()) {
            throw ApiProblem.badRequest(null, String.join("; ", problems));
        }
        Row row = new Row(f.get("sensor_id").textValue(), f.get("address").textValue(), number(f, "heartbeat_timeout_seconds"),
                number(f, "open_alarm_seconds"), text(f, "client_name"), text(f, "client_url"));
        RequestBodies.plain("address", row.address());
        RequestBodies.plain("client_name", row.clientName());
        RequestBodies.plain("client_url", row.clientUrl());
        if ((row.clientName() == null) != (row.clientUrl() == null)) {
            throw ApiProblem.badRequest(row.clientName() == null ? "client_name" : "client_url",
                    "a client is given by client_name and client_url together, or not at all");
        }
        if (row.clientUrl() != null) {
            String problem = guard.problemWith(row.clientUrl());
            if (problem != null) {
                throw ApiProblem.badRequest("client_url", "client_url refused: " + problem);
            }
        }
        return row;
    }

    private static String text(ObjectNode row, String field) {
        JsonNode v = row.get(field);
        return v == null || v.isNull() ? null : v.textValue();
    }

    private static Integer number(ObjectNode row, String field) {
        JsonNode v = row.get(field);
        return v == null || v.isNull() ? null : v.intValue();
    }

    /** Where a sensor or a client name was first given: its file row (from 0) and that row. */
    private record First(int index, Row row) {
    }

    /** The row against those before it: one address and timeouts per sensor, one URL per client name. */
    private static String agrees(Row row, int index, Map<String, First> sensors, Map<String, First> clients) {
        First s = sensors.putIfAbsent(row.sensorId(), new First(index, row));
        if (s != null && (!Objects.equals(s.row().address(), row.address())
                || !Objects.equals(s.row().heartbeatTimeoutSeconds(), row.heartbeatTimeoutSeconds())
                || !Objects.equals(s.row().openAlarmSeconds(), row.openAlarmSeconds()))) {
            return "sensor " + row.sensorId() + " has another address or timeout than on row " + (s.index() + 1);
        }
        if (row.clientName() != null) {
            First c = clients.putIfAbsent(row.clientName(), new First(index, row));
            if (c != null && !Objects.equals(c.row().clientUrl(), row.clientUrl())) {
                return "client " + row.clientName() + " has another client_url than on row " + (c.index() + 1);
            }
        }
        return null;
    }

    private static String firstLine(String message) {
        if (message == null) {
            return "unreadable";
        }
        int nl = message.indexOf('\n');
        return nl < 0 ? message : message.substring(0, nl);
    }
}
