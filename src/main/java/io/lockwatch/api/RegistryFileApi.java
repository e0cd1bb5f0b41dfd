package io.lockwatch.api;

import java.io.IOException;
import java.io.InputStream;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;

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
import io.lockwatch.registry.RegistryImports;
import org.apache.camel.Exchange;

/**
 * The registry as a file ({@link RegistryFile}): imported from CSV or JSON, all or nothing, with every refused row
 * named by its number; exported as the same CSV (or JSON). A row's fields are checked against the contract's
 * RegistryRow, the rules of the sensor and client operations.
 */
public class RegistryFileApi {

    /** The columns, in the order of an export. */
    static final List<String> COLUMNS = List.of("sensor_id", "address", "heartbeat_timeout_seconds",
            "open_alarm_seconds", "client_name", "client_url", "gateways", "credential", "profile", "device_id");
    /** Refused rows named in one answer; the count says how many there were. */
    static final int MAX_ERRORS = 100;
    private static final CsvMapper CSV = new CsvMapper().enable(CsvParser.Feature.TRIM_SPACES)
            .enable(CsvParser.Feature.FAIL_ON_MISSING_COLUMNS)
            // quote a value only where it must be (a comma, a quote, a line break), so the export reads as it was written
            .enable(com.fasterxml.jackson.dataformat.csv.CsvGenerator.Feature.STRICT_CHECK_FOR_QUOTING);
    private static final CsvSchema HEADER = CsvSchema.emptySchema().withHeader().withStrictHeaders(false);

    private final RegistryImports imports;
    private final RegistryFile file;
    private final TargetGuard guard;
    private final FlatSchema rowSchema;
    private final int maxRowsAtOnce;
    private final long maxRows;
    private final int maxCredentials;
    private final org.apache.camel.ProducerTemplate jobs;
    private final io.lockwatch.adapters.DeviceProfiles profiles;

    /**
     * @param maxRowsAtOnce a file of at most this many rows is applied before the answer (200); a larger one by a
     *                      job after it (202)
     * @param maxRows       a file of more rows is refused (413)
     * @param maxCredentials a file that asks for more new credentials is refused (413): each is hashed, and its secret
     *                       answered, before the answer
     */
    RegistryFileApi(RegistryImports imports, TargetGuard guard, FlatSchema rowSchema, int maxRowsAtOnce, long maxRows,
                    int maxCredentials, org.apache.camel.ProducerTemplate jobs, io.lockwatch.adapters.DeviceProfiles profiles) {
        this.profiles = profiles;
        this.imports = imports;
        this.file = imports.file();
        this.guard = guard;
        this.rowSchema = rowSchema;
        this.maxRowsAtOnce = maxRowsAtOnce;
        this.maxRows = maxRows;
        this.maxCredentials = maxCredentials;
        this.jobs = jobs;
    }

    /**
     * Reads the file as it comes (never whole in memory), each row checked on its own and staged; then the rows
     * checked against each other. A refused row refuses the file: nothing is changed. A small file is then applied
     * before the answer; a large one is accepted (its clients created, their secrets in the answer) and applied by a
     * job, whose resource the answer names.
     */
    public void importFile(Exchange exchange) throws IOException, java.sql.SQLException {
        InputStream body = exchange.getMessage().getBody(InputStream.class);
        String type = String.valueOf(exchange.getMessage().getHeader(Exchange.CONTENT_TYPE, String.class));
        boolean csv = type.toLowerCase(java.util.Locale.ROOT).startsWith("text/csv");
        UUID id = imports.begin();
        int rows = 0;
        String refusedFor = null;
        boolean finished = false;
        try {
            Read read;
            try (RegistryFile.Staging staging = file.stage(id)) {
                read = new Read(staging);
                if (body != null) {
                    if (csv) {
                        readCsv(body, read);
                    } else {
                        readJson(body, read);
                    }
                }
                rows = read.rows;
                if (read.rows == 0) {
                    throw ApiProblem.badRequest(null, body == null ? "the file is empty" : "the file has no rows");
                }
                staging.commit();
            }
            imports.step(id, "checking its " + read.rows + " rows against each other");
            refuseIfAnyRowIs(read, file.conflicts(id, MAX_ERRORS));
            imports.step(id, "making the credentials it asks for");
            List<RegistryFile.NewCredential> credentials = file.issueCredentials(id, maxCredentials);
            if (read.rows <= maxRowsAtOnce) {
                RegistryFile.Outcome outcome = file.applyAll(id, step -> imports.step(id, step))
                        .withNewCredentials(credentials);
                imports.done(id, read.rows, outcome);
                finished = true;
                var sensors = new ResponseBodies.RegistryImported.Sensors(outcome.sensorsCreated(), outcome.sensorsUpdated(),
                        outcome.sensorsUnchanged());
                var clients = new ResponseBodies.RegistryImported.Clients(outcome.clientsCreated(), outcome.clientsUpdated());
                var links = new ResponseBodies.RegistryImported.Links(outcome.linksAdded(), outcome.linksRemoved());
                Json.respond(exchange, 200, new ResponseBodies.RegistryImported(read.rows, sensors, clients, links,
                        ResponseBodies.RegistryImported.Gateways.of(outcome.devices()),
                        ResponseBodies.RegistryImported.Credentials.of(outcome.devices()), outcome.newClients(),
                        outcome.newCredentials()));
                return;
            }
            imports.step(id, "finding and creating its clients");
            RegistryFile.Clients clients = file.clients(id);
            imports.staged(id, read.rows);
            jobs.sendBody("seda:registry-imports", new RegistryImports.Accepted(id, clients.ids(), clients.created().size(),
                    clients.updated()));
            finished = true;
            Json.respond(exchange, 202, ResponseBodies.RegistryImport.of(imports.job(id), clients.created(), credentials));
            exchange.getMessage().setHeader("Location", "/api/v1/imports/" + id);
        } catch (RegistryFile.Refused e) {
            ApiProblem p = refusal(e.count(), e.problems().stream().map(r -> "row " + r.row() + ": "
                    + (r.field() == null ? "" : r.field() + ": ") + r.detail()).toList());
            refusedFor = p.getMessage();
            throw p;
        } catch (RegistryFile.TooManyCredentials e) {
            refusedFor = e.getMessage();
            throw new ApiProblem(413, "Content Too Large", e.getMessage(), null);
        } catch (RegistryFile.Busy | RegistryFile.ChangedMeanwhile e) {
            refusedFor = e.getMessage();
            throw ApiProblem.conflict(e.getMessage());
        } catch (ApiProblem p) {
            refusedFor = p.getMessage();
            throw p;
        } finally {
            if (!finished) {
                // its record says why; its staged rows go
                if (refusedFor != null) {
                    imports.refused(id, rows, refusedFor);
                } else {
                    imports.failed(id, "it could not be imported for a fault of the service or its database (see "
                            + "its log); nothing was changed");
                }
                file.discard(id);
            }
        }
    }

    /** An import, while it runs and once it has finished. */
    public void importJob(Exchange exchange) {
        UUID id = Json.uuid(exchange, "importId", "import");
        RegistryImports.Job job = imports.job(id);
        if (job == null) {
            throw ApiProblem.notFound("import " + id);
        }
        Json.respond(exchange, 200, ResponseBodies.RegistryImport.of(job, null, null));
    }

    /** The latest imports, newest first. */
    public void importJobs(Exchange exchange) {
        Json.respond(exchange, 200, imports.recent(20).stream().map(j -> ResponseBodies.RegistryImport.of(j, null, null)).toList());
    }

    /** What reading a file found: its rows, and the first of those refused on their own. */
    private final class Read {
        final RegistryFile.Staging staging;
        final List<RegistryFile.RowProblem> refused = new ArrayList<>();
        final Map<String, String> urlProblems = new HashMap<>();
        int rows;
        int refusedCount;

        Read(RegistryFile.Staging staging) {
            this.staging = staging;
        }

        /** The next row of the file, as fields, or why it is not one. */
        void row(Map<String, JsonNode> fields, String notARow) throws IOException {
            rows++;
            if (rows > maxRows) {
                throw new ApiProblem(413, "Content Too Large", "the file has more than " + maxRows + " rows, the most one "
                        + "import takes (lockwatch.api.max-import-rows); import it in parts", null);
            }
            String problem = notARow;
            if (problem == null) {
                try {
                    staging.add(rows, RegistryFileApi.this.row(fields, urlProblems));
                } catch (ApiProblem p) {
                    problem = (p.field() == null ? "" : p.field() + ": ") + p.getMessage();
                }
            }
            if (problem != null) {
                refusedCount++;
                if (refused.size() < MAX_ERRORS) {
                    refused.add(new RegistryFile.RowProblem(rows, null, problem));
                }
            }
        }
    }

    /** Refused if a row was, on its own or against another: the first of them by row. */
    private static void refuseIfAnyRowIs(Read read, RegistryFile.Refused conflicts) {
        if (read.refusedCount == 0 && conflicts == null) {
            return;
        }
        List<RegistryFile.RowProblem> all = new ArrayList<>(read.refused);
        if (conflicts != null) {
            all.addAll(conflicts.problems());
        }
        all.sort(java.util.Comparator.comparingInt(RegistryFile.RowProblem::row));
        throw refusal(read.refusedCount + (conflicts == null ? 0 : conflicts.count()), all.stream().limit(MAX_ERRORS)
                .map(p -> "row " + p.row() + ": " + p.detail()).toList());
    }

    private static ApiProblem refusal(int count, List<String> errors) {
        return ApiProblem.badRequest(count + (count == 1 ? " row is" : " rows are") + " refused (row 1 is the first "
                + "after the header); nothing was imported", errors);
    }

    /** The body as UTF-8 text, failing on bytes that are not (a spreadsheet's byte order mark skipped). */
    private static Reader utf8(InputStream body) throws IOException {
        var decoder = StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(java.nio.charset.CodingErrorAction.REPORT)
                .onUnmappableCharacter(java.nio.charset.CodingErrorAction.REPORT);
        java.io.PushbackReader reader = new java.io.PushbackReader(new java.io.BufferedReader(
                new java.io.InputStreamReader(body, decoder), 1 << 16));
        int first = reader.read();
        if (first >= 0 && first != '\uFEFF') {
            reader.unread(first);
        }
        return reader;
    }

    /**
     * The registry as the file an import takes, CSV or JSON, streamed: read page by page (keyset, by sensor id) as
     * the response is written, so memory does not grow with the registry. Pages are read one after another, not in
     * one snapshot: a sensor changed during a long export is exported as it was when its page was read.
     */
    public void exportFile(Exchange exchange) {
        boolean json = "json".equals(Json.header(exchange, "format")); // csv or json: the contract has checked it
        exchange.getMessage().removeHeaders("*");
        exchange.getMessage().setHeader(Exchange.HTTP_RESPONSE_CODE, 200);
        if (json) {
            exchange.getMessage().setHeader(Exchange.CONTENT_TYPE, "application/json");
        } else {
            exchange.getMessage().setHeader(Exchange.CONTENT_TYPE, "text/csv; charset=utf-8");
            exchange.getMessage().setHeader("Content-Disposition", "attachment; filename=\"lockwatch-registry.csv\"");
        }
        exchange.getMessage().setBody(new Export(json));
    }

    /** The export's bytes, a page of sensors at a time, as they are read by whoever writes the response. */
    private final class Export extends PagedBody {
        private static final int SENSORS_A_PAGE = 5_000;
        private final boolean json;
        private String after;
        private boolean first = true;

        Export(boolean json) {
            this.json = json;
        }

        @Override
        protected byte[] nextPage() throws IOException {
            List<Row> rows = file.exportPage(after, SENSORS_A_PAGE);
            StringBuilder text = new StringBuilder();
            if (json) {
                text.append(first ? "[" : "");
                for (Row r : rows) {
                    text.append(first ? "" : ",").append(Json.MAPPER.writeValueAsString(r));
                    first = false;
                }
            } else {
                CsvSchema.Builder schema = CsvSchema.builder().setUseHeader(first);
                COLUMNS.forEach(schema::addColumn);
                List<List<Object>> values = new ArrayList<>(rows.size());
                for (Row r : rows) {
                    // a cell a spreadsheet would run as a formula is marked as text; the import takes the mark off
                    values.add(java.util.Arrays.asList(r.sensorId(), SpreadsheetCells.neutralised(r.address()),
                            r.heartbeatTimeoutSeconds(), r.openAlarmSeconds(), SpreadsheetCells.neutralised(r.clientName()),
                            SpreadsheetCells.neutralised(r.clientUrl()), r.gateways(), r.credential(), r.profile(),
                            SpreadsheetCells.neutralised(r.deviceId())));
                }
                text.append(first || !values.isEmpty() ? CSV.writer(schema.build()).writeValueAsString(values) : "");
                first = false;
            }
            if (rows.isEmpty() || distinctSensors(rows) < SENSORS_A_PAGE) {
                lastPage();
                if (json) {
                    text.append("]");
                }
            } else {
                after = rows.get(rows.size() - 1).sensorId();
            }
            return text.toString().getBytes(StandardCharsets.UTF_8);
        }

        private static long distinctSensors(List<Row> rows) {
            return rows.stream().map(Row::sensorId).distinct().count();
        }
    }

    /**
     * The CSV's rows as fields, one at a time: text as it came (less the mark an export puts before a formula-like
     * cell), a whole number where a number belongs, an empty cell none.
     */
    private static void readCsv(InputStream body, Read read) throws IOException {
        try (MappingIterator<Map<String, String>> it = CSV.readerForMapOf(String.class).with(HEADER).readValues(utf8(body))) {
            CsvSchema schema = (CsvSchema) it.getParserSchema();
            List<String> unknown = new ArrayList<>();
            Set<String> present = new java.util.HashSet<>();
            for (CsvSchema.Column c : schema) {
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
                read.row(fields, null);
            }
        } catch (java.nio.charset.CharacterCodingException e) {
            throw notUtf8(read);
        } catch (IOException | RuntimeException e) {
            if (e instanceof ApiProblem p) {
                throw p;
            }
            if (e.getCause() instanceof java.nio.charset.CharacterCodingException) {
                throw notUtf8(read);
            }
            throw ApiProblem.badRequest(null, "the file is not CSV with a header row (RFC 4180): "
                    + firstLine(e.getMessage()) + " (row " + (read.rows + 1) + ")");
        }
    }

    private static ApiProblem notUtf8(Read read) {
        return ApiProblem.badRequest(null, "the file is not UTF-8 text: a byte that is not UTF-8 in or near row "
                + (read.rows + 1));
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

    /** A JSON array of row objects with the same fields as the CSV's columns, one element at a time. */
    private static void readJson(InputStream body, Read read) throws IOException {
        try (com.fasterxml.jackson.core.JsonParser parser = Json.MAPPER.createParser(utf8(body))) {
            if (parser.nextToken() != com.fasterxml.jackson.core.JsonToken.START_ARRAY) {
                throw ApiProblem.badRequest(null, "the request body must be a JSON array of rows (or text/csv)");
            }
            for (var token = parser.nextToken(); token != com.fasterxml.jackson.core.JsonToken.END_ARRAY;
                 token = parser.nextToken()) {
                if (token == null) {
                    throw ApiProblem.notJson();
                }
                if (token != com.fasterxml.jackson.core.JsonToken.START_OBJECT) {
                    parser.skipChildren();
                    read.row(null, "row " + (read.rows + 1) + " is not a JSON object");
                    continue;
                }
                JsonNode element = parser.readValueAsTree();
                Map<String, JsonNode> fields = new HashMap<>();
                for (Iterator<Map.Entry<String, JsonNode>> it = element.fields(); it.hasNext(); ) {
                    Map.Entry<String, JsonNode> f = it.next();
                    fields.put(f.getKey(), f.getValue().isNull() ? null : f.getValue());
                }
                read.row(fields, null);
            }
            if (parser.nextToken() != null) {
                throw ApiProblem.badRequest(null, "the request body must be one JSON array of rows; more follows it");
            }
        } catch (java.nio.charset.CharacterCodingException e) {
            throw notUtf8(read);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            if (e.getCause() instanceof java.nio.charset.CharacterCodingException) {
                throw notUtf8(read);
            }
            throw ApiProblem.badRequest(null, ApiProblem.NOT_JSON + " (in or near row " + (read.rows + 1) + ")");
        }
    }

    /**
     * One row's fields, checked against the contract's RegistryRow (the rules of the sensor and client operations),
     * then for what a schema cannot say: plain text, a client given whole, a URL the target guard allows.
     */
    private Row row(Map<String, JsonNode> fields, Map<String, String> urlProblems) {
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
                number(f, "open_alarm_seconds"), text(f, "client_name"), text(f, "client_url"),
                gateways(text(f, "gateways")), text(f, "credential"), text(f, "profile"),
                deviceOf(text(f, "profile"), text(f, "device_id")));
        RequestBodies.plain("address", row.address());
        RequestBodies.plain("client_name", row.clientName());
        RequestBodies.plain("client_url", row.clientUrl());
        if ((row.clientName() == null) != (row.clientUrl() == null)) {
            throw ApiProblem.badRequest(row.clientName() == null ? "client_name" : "client_url",
                    "a client is given by client_name and client_url together, or not at all");
        }
        if (row.clientUrl() != null) {
            // a file names few URLs, on many rows: each is looked up once (its host may be resolved)
            String problem = urlProblems.get(row.clientUrl());
            if (problem == null && !urlProblems.containsKey(row.clientUrl())) {
                problem = guard.problemWith(row.clientUrl());
                if (urlProblems.size() < 10_000) {
                    urlProblems.put(row.clientUrl(), problem);
                }
            }
            if (problem != null) {
                throw ApiProblem.badRequest("client_url", "client_url refused: " + problem);
            }
        }
        return row;
    }

    /**
     * The row's device id as its profile's network writes it, checked as the sensor operations check it; a profile
     * of '-' (none) has none.
     */
    private String deviceOf(String profile, String deviceId) {
        if (RegistryFile.NO_PROFILE.equals(profile)) {
            if (deviceId != null) {
                throw ApiProblem.badRequest("device_id", "a sensor without a profile ('-') has no device_id");
            }
            return null;
        }
        RequestBodies.plain("device_id", deviceId);
        RequestBodies.bothOrNeither(profile, deviceId);
        io.lockwatch.registry.Registry.Device device = SensorsApi.device(profiles, profile, deviceId);
        return device == null ? null : device.deviceId();
    }

    /** A sensor's gateways as an export writes them: each once, in order; so the file a file made is that file. */
    private static String gateways(String given) {
        if (given == null || given.equals(RegistryFile.NO_GATEWAY)) {
            return given;
        }
        return String.join(" ", new java.util.TreeSet<>(List.of(given.split(" "))));
    }

    private static String text(ObjectNode row, String field) {
        JsonNode v = row.get(field);
        return v == null || v.isNull() ? null : v.textValue();
    }

    private static Integer number(ObjectNode row, String field) {
        JsonNode v = row.get(field);
        return v == null || v.isNull() ? null : v.intValue();
    }

    private static String firstLine(String message) {
        if (message == null) {
            return "unreadable";
        }
        int nl = message.indexOf('\n');
        return nl < 0 ? message : message.substring(0, nl);
    }
}
