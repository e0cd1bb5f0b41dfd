package io.lockwatch.bench;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * What the service's history in ClickHouse holds for a run, counted as its queries see it (FINAL: a row written
 * twice after a crash counts once), over ClickHouse's HTTP interface. ClickHouse 18.16 has no query parameters:
 * the one value is a Java {@code long}, rendered as digits, never text from outside.
 */
final class ClickHouseCounts {

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private final String base;
    private final String database;

    ClickHouseCounts(String base, String database) {
        this.base = base;
        this.database = database;
    }

    /** Readings measured at or after the time (epoch ms). */
    long readingsSince(long fromMs) throws IOException, InterruptedException {
        return count("readings", "measured_at_ms", fromMs);
    }

    /** Events that occurred at or after the time (epoch ms). */
    long eventsSince(long fromMs) throws IOException, InterruptedException {
        return count("events", "occurred_at_ms", fromMs);
    }

    private long count(String table, String column, long fromMs) throws IOException, InterruptedException {
        // table and column are this class's constants, the database the benchmark's own
        String sql = "SELECT count() FROM " + database + "." + table + " FINAL WHERE " + column + " >= " + fromMs
                + " AND sensor_id LIKE '" + BenchDatabase.SENSORS_LIKE + "'";
        URI uri = URI.create(base + "/?query=" + URLEncoder.encode(sql, StandardCharsets.UTF_8));
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(30)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            throw new IOException("ClickHouse: HTTP " + r.statusCode() + " " + r.body().strip());
        }
        return Long.parseLong(r.body().strip());
    }
}
