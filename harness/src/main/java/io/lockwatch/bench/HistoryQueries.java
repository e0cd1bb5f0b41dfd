package io.lockwatch.bench;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.regex.Pattern;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.lockwatch.history.HistoryRecords.DailyCount;
import io.lockwatch.history.HistoryRecords.Page;
import io.lockwatch.history.HistoryRecords.ReadingRecord;
import io.lockwatch.history.HistoryStore;

/**
 * The history questions of the API, asked two ways: end to end over HTTP as a client asks them
 * ({@code GET /api/v1/sensors/{id}/readings} and {@code /stats}, bearer token, JSON), and directly through the
 * service's own {@link HistoryStore} class (its SQL over JDBC, no HTTP, no JSON). Each answer is checked (the
 * sensor's rows only, inside the range, newest first, no row twice across pages); timings are taken around
 * the call and asserted nowhere.
 */
final class HistoryQueries {

    static final long DAY = 86_400_000L;
    static final int LIMIT = 100;

    /** One question: a sensor and a range [from, to); {@code range} names the range's length. */
    record Sample(String sensorId, long from, long to, String range) {
    }

    /**
     * One page of readings as the API or the store gave it.
     *
     * @param newest  sort key of the page's first row, {@code oldest} of its last (null when empty)
     * @param problem what is wrong with it, or null
     */
    record Answer(int rows, String nextCursor, String newest, String oldest, String problem) {
    }

    /** One timed call. */
    record Timed<T>(double ms, T answer) {
    }

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern SAFE = Pattern.compile("[0-9A-Za-z._:-]+");

    private final URI api;
    private final HttpClient http = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();
    private final HistoryStore store;

    HistoryQueries(URI serviceBase, HistoryStore store) {
        this.api = serviceBase.resolve("/api/v1/");
        this.store = store;
    }

    /**
     * Random range queries: a sensor drawn uniformly; a third of the ranges one day long, a third seven days,
     * a third the whole window; each placed at random inside the window.
     */
    static List<Sample> rangeSamples(int n, int sensors, long windowStart, long windowEnd, SplittableRandom random) {
        long span = windowEnd - windowStart;
        long[] lengths = {Math.min(DAY, span), Math.min(7 * DAY, span), span};
        String[] names = {"1 d", "7 d", (span / DAY) + " d"};
        List<Sample> samples = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            int kind = i % 3;
            long from = windowStart + random.nextLong(span - lengths[kind] + 1);
            samples.add(new Sample(HistoryReadings.sensorId(random.nextInt(sensors)), from, from + lengths[kind],
                    names[kind]));
        }
        return samples;
    }

    /** Stats over the whole window, of sensors drawn uniformly. */
    static List<Sample> statsSamples(int n, int sensors, long windowStart, long windowEnd, SplittableRandom random) {
        List<Sample> samples = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            samples.add(new Sample(HistoryReadings.sensorId(random.nextInt(sensors)), windowStart, windowEnd,
                    ((windowEnd - windowStart) / DAY) + " d"));
        }
        return samples;
    }

    /** An authorised GET of the API, timed from send to the whole body received. */
    private Timed<HttpResponse<byte[]>> get(String pathAndQuery) throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(api.resolve(pathAndQuery))
                .timeout(Duration.ofSeconds(60))
                .header("Authorization", "Bearer " + ServiceProcess.API_TOKEN)
                .header("Accept", "application/json")
                .GET().build();
        long start = System.nanoTime();
        HttpResponse<byte[]> response = http.send(request, HttpResponse.BodyHandlers.ofByteArray());
        return new Timed<>((System.nanoTime() - start) / 1e6, response);
    }

    /** {@code GET /api/v1/sensors/{id}/readings?from&to&limit=100[&cursor]}. */
    Timed<Answer> apiReadings(Sample s, String cursor) throws IOException, InterruptedException {
        String query = "from=" + encode(Instant.ofEpochMilli(s.from()).toString())
                + "&to=" + encode(Instant.ofEpochMilli(s.to()).toString()) + "&limit=" + LIMIT
                + (cursor == null ? "" : "&cursor=" + encode(cursor));
        Timed<HttpResponse<byte[]>> timed = get("sensors/" + s.sensorId() + "/readings?" + query);
        double ms = timed.ms();
        HttpResponse<byte[]> response = timed.answer();
        if (response.statusCode() != 200) {
            return new Timed<>(ms, new Answer(0, null, null, null, "HTTP " + response.statusCode() + " "
                    + new String(response.body(), StandardCharsets.UTF_8)));
        }
        JsonNode page = JSON.readTree(response.body());
        List<String[]> rows = new ArrayList<>();
        for (JsonNode item : page.path("items")) {
            rows.add(new String[] {item.path("sensor_id").asText(),
                    String.valueOf(Instant.parse(item.path("measured_at").asText()).toEpochMilli()),
                    item.path("reading_id").asText()});
        }
        JsonNode next = page.path("next_cursor");
        return new Timed<>(ms, check(s, rows, next.isTextual() ? next.asText() : null));
    }

    /** The store's {@code readings(sensor, from, to, 100, cursor)}, as the API calls it. */
    Timed<Answer> storeReadings(Sample s, String cursor) {
        long start = System.nanoTime();
        Page<ReadingRecord> page = store.readings(s.sensorId(), s.from(), s.to(), LIMIT, cursor);
        double ms = (System.nanoTime() - start) / 1e6;
        List<String[]> rows = new ArrayList<>();
        for (ReadingRecord r : page.items()) {
            rows.add(new String[] {r.sensorId(), String.valueOf(r.measuredAt()), r.readingId()});
        }
        return new Timed<>(ms, check(s, rows, page.nextCursor()));
    }

    /** {@code GET /api/v1/sensors/{id}/stats?from&to}: the sum of the daily counts (changes + lost). */
    Timed<Long> apiStats(Sample s) throws IOException, InterruptedException {
        String query = "from=" + encode(Instant.ofEpochMilli(s.from()).toString())
                + "&to=" + encode(Instant.ofEpochMilli(s.to()).toString());
        Timed<HttpResponse<byte[]>> timed = get("sensors/" + s.sensorId() + "/stats?" + query);
        double ms = timed.ms();
        HttpResponse<byte[]> response = timed.answer();
        if (response.statusCode() != 200) {
            throw new IOException("GET " + response.uri() + ": HTTP " + response.statusCode() + " "
                    + new String(response.body(), StandardCharsets.UTF_8));
        }
        long total = 0;
        for (JsonNode day : JSON.readTree(response.body()).path("items")) {
            total += day.path("state_changes").asLong() + day.path("connections_lost").asLong();
        }
        return new Timed<>(ms, total);
    }

    /** The store's {@code dailyCounts([sensor], from, to)}: the sum of the daily counts (changes + lost). */
    Timed<Long> storeStats(Sample s) {
        long start = System.nanoTime();
        List<DailyCount> days = store.dailyCounts(List.of(s.sensorId()), s.from(), s.to());
        double ms = (System.nanoTime() - start) / 1e6;
        return new Timed<>(ms, days.stream().mapToLong(d -> d.stateChanges() + d.connectionsLost()).sum());
    }

    /** The page holds the sensor's rows only, inside the range, strictly newest first, at most a page. */
    private static Answer check(Sample s, List<String[]> rows, String nextCursor) {
        String problem = null;
        long previousTime = Long.MAX_VALUE;
        String previousId = null;
        for (String[] r : rows) {
            long time = Long.parseLong(r[1]);
            if (!r[0].equals(s.sensorId())) {
                problem = "a row of sensor " + r[0];
            } else if (time < s.from() || time >= s.to()) {
                problem = "a row measured at " + time + " outside the range";
            } else if (time > previousTime || (time == previousTime && r[2].compareTo(previousId) >= 0)) {
                problem = "rows not newest first";
            }
            previousTime = time;
            previousId = r[2];
        }
        if (rows.size() > LIMIT || (nextCursor != null && rows.size() != LIMIT)) {
            problem = rows.size() + " rows with " + (nextCursor == null ? "no" : "a") + " next cursor";
        }
        String newest = rows.isEmpty() ? null : rows.get(0)[1] + "/" + rows.get(0)[2];
        String oldest = rows.isEmpty() ? null : rows.get(rows.size() - 1)[1] + "/" + rows.get(rows.size() - 1)[2];
        return new Answer(rows.size(), nextCursor, newest, oldest, problem);
    }

    /** A next page must start strictly after (older than) the end of its first page. */
    static String checkContinuation(Answer first, Answer next) {
        if (next.problem() != null || next.newest() == null) {
            return next.problem();
        }
        String[] a = first.oldest().split("/", 2), b = next.newest().split("/", 2);
        long ta = Long.parseLong(a[0]), tb = Long.parseLong(b[0]);
        boolean older = tb < ta || (tb == ta && b[1].compareTo(a[1]) < 0);
        return older ? null : "the next page repeats or precedes the first";
    }

    static boolean sameRows(Answer a, Answer b) {
        return a.rows() == b.rows() && Objects.equals(a.newest(), b.newest()) && Objects.equals(a.oldest(), b.oldest())
                && (a.nextCursor() == null) == (b.nextCursor() == null);
    }

    /** p50, p95, p99, max and mean of latencies in ms (nearest rank), and how many. */
    static Map<String, Object> latencies(List<Double> ms) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("n", ms.size());
        m.put("p50_ms", percentile(ms, 0.50));
        m.put("p95_ms", percentile(ms, 0.95));
        m.put("p99_ms", percentile(ms, 0.99));
        m.put("max_ms", percentile(ms, 1.0));
        m.put("mean_ms", ms.stream().mapToDouble(Double::doubleValue).average().orElse(Double.NaN));
        return m;
    }

    static double percentile(List<Double> values, double p) {
        if (values.isEmpty()) {
            return Double.NaN;
        }
        List<Double> sorted = new ArrayList<>(values);
        sorted.sort(null);
        int rank = (int) Math.ceil(p * sorted.size());
        return sorted.get(Math.max(0, Math.min(sorted.size(), rank) - 1));
    }

    /**
     * A query parameter's value. Times (RFC 3339 in UTC) and cursors (base64url) consist of characters a query
     * may carry as they are, and are sent so: the service's request validator checks the query string before
     * percent-decoding it, so {@code 12%3A00} would be refused as a time. Anything else is percent-encoded.
     */
    private static String encode(String s) {
        return SAFE.matcher(s).matches() ? s : URLEncoder.encode(s, StandardCharsets.UTF_8);
    }
}
