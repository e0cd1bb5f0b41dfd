package io.lockwatch.api;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

import com.fasterxml.jackson.dataformat.csv.CsvMapper;
import com.fasterxml.jackson.dataformat.csv.CsvSchema;
import io.lockwatch.audit.AuditLog;
import org.apache.camel.Exchange;

/**
 * The audit log, read: a page at a time, newest first, narrowed by actor, resource, operation, outcome and time; or
 * every entry of a time range at once as CSV or JSON lines, for an auditor's own tools. Reading it changes nothing,
 * and no operation changes it.
 */
public class AuditApi {

    private static final long DAY = 86_400_000L;
    private static final int EXPORT_PAGE = 1_000;
    private static final CsvMapper CSV = new CsvMapper();
    static final List<String> CSV_COLUMNS = List.of("at", "actor", "actor_kind", "actor_subject", "actor_client", "operation", "method",
            "resource", "status", "outcome", "address", "user_agent", "correlation_id", "id", "details");

    private final AuditLog log;

    public AuditApi(AuditLog log) {
        this.log = log;
    }

    public void list(Exchange exchange) throws IOException {
        long to = Json.time(exchange, "to", System.currentTimeMillis() + 1);
        long from = Json.time(exchange, "from", to - 30 * DAY);
        if (from >= to) {
            throw ApiProblem.badRequest("from", "from must be before to");
        }
        AuditLog.Query query = new AuditLog.Query(text(exchange, "actor"), text(exchange, "resource"),
                text(exchange, "operation"), Json.header(exchange, "outcome"), Instant.ofEpochMilli(from),
                Instant.ofEpochMilli(to));
        String format = Json.header(exchange, "format"); // json, csv or jsonl: the contract has checked it
        if ("csv".equals(format) || "jsonl".equals(format)) {
            boolean csv = "csv".equals(format);
            exchange.getMessage().removeHeaders("*");
            if (!csv && log.find(query, null, null, 1).isEmpty()) {
                // JSON lines of nothing would be an empty 200: the contract says so with a 204
                Json.respond(exchange, 204, null);
                return;
            }
            exchange.getMessage().setHeader(Exchange.HTTP_RESPONSE_CODE, 200);
            exchange.getMessage().setHeader(Exchange.CONTENT_TYPE, csv ? "text/csv; charset=utf-8" : "application/x-ndjson");
            exchange.getMessage().setHeader("Content-Disposition",
                    "attachment; filename=\"lockwatch-audit." + (csv ? "csv" : "jsonl") + "\"");
            Export export = new Export(query, csv);
            // its first page read now: a failure to read is this answer's status, not a file cut short after a 200
            export.prefetch();
            exchange.getMessage().setBody(export);
            return;
        }
        int limit = Json.limit(exchange);
        String[] after = Json.timeCursor(Json.header(exchange, "cursor"));
        List<AuditLog.Entry> rows = log.find(query, after == null ? null : Instant.parse(after[0]),
                after == null ? null : UUID.fromString(after[1]), limit + 1);
        Json.respond(exchange, 200, Json.pageByTime(rows, limit, AuditLog.Entry::at, AuditLog.Entry::id));
    }

    /** The range's entries, newest first, a page read from the database at a time as the answer is written. */
    private final class Export extends PagedBody {
        private final AuditLog.Query query;
        private final boolean csv;
        private AuditLog.Entry last;
        private boolean first = true;

        Export(AuditLog.Query query, boolean csv) {
            this.query = query;
            this.csv = csv;
        }

        @Override
        protected byte[] nextPage() throws IOException {
            List<AuditLog.Entry> rows = log.find(query, last == null ? null : last.at(), last == null ? null : last.id(),
                    EXPORT_PAGE);
            if (rows.size() < EXPORT_PAGE) {
                lastPage();
            }
            StringBuilder text = new StringBuilder();
            if (csv) {
                CsvSchema.Builder schema = CsvSchema.builder().setUseHeader(first);
                CSV_COLUMNS.forEach(schema::addColumn);
                List<List<Object>> values = new ArrayList<>(rows.size());
                for (AuditLog.Entry e : rows) {
                    // a user agent, a resource, a field are anyone's to choose: a spreadsheet must not run them
                    values.add(java.util.Arrays.asList(e.at().toString(), cell(e.actor()), e.actorKind(), cell(e.actorSubject()), e.actorClient(),
                            cell(e.operation()), e.method(), cell(e.resource()), e.status(), e.outcome(), cell(e.address()),
                            cell(e.userAgent()), cell(e.correlationId()), e.id(), cell(e.details())));
                }
                text.append(first || !values.isEmpty() ? CSV.writer(schema.build()).writeValueAsString(values) : "");
            } else {
                for (AuditLog.Entry e : rows) {
                    text.append(Json.MAPPER.writeValueAsString(e)).append('\n');
                }
            }
            first = false;
            if (!rows.isEmpty()) {
                last = rows.get(rows.size() - 1);
            }
            return text.toString().getBytes(StandardCharsets.UTF_8);
        }
    }

    /** A text parameter: no entry holds a NUL, which PostgreSQL's text cannot hold either. */
    private static String text(Exchange exchange, String name) {
        String v = Json.header(exchange, name);
        if (v != null && v.indexOf('\u0000') >= 0) {
            throw ApiProblem.badRequest(name, name + " must not contain a NUL character");
        }
        return v;
    }

    private static String cell(String value) {
        return value == null ? null : SpreadsheetCells.neutralised(value);
    }
}
