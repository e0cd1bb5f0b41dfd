package io.lockwatch.bench;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Reads the service's {@code /actuator/prometheus} (text exposition format). */
final class PrometheusScraper {

    static final String RECEIVED = "lockwatch_readings_received_total";
    static final String CHANGES = "lockwatch_state_changes_total";
    static final String UNKNOWN = "lockwatch_readings_unknown_sensor_total";
    static final String STALE = "lockwatch_readings_stale_total";
    static final String DUPLICATE = "lockwatch_readings_duplicate_total";
    static final String ADAPTER_MESSAGES = "lockwatch_adapter_messages_total";
    static final String INVALID = "lockwatch_readings_invalid_total";
    static final String HISTORY_WRITTEN = "lockwatch_history_readings_written_total";
    static final String HISTORY_EXPORTED = "lockwatch_history_exported_total";
    static final String JVM_MEMORY_USED = "jvm_memory_used_bytes";
    static final String PARTITIONS_OWNED = "lockwatch_ingest_partitions_owned";
    static final String CLAIMS = "lockwatch_notifications_claims_seconds_count";
    static final String CLAIMS_SECONDS = "lockwatch_notifications_claims_seconds_sum";
    /**
     * Only these are asked for: a whole scrape renders every meter, and at one a second it took about a twentieth of
     * the service's CPU in a drain, where a Prometheus server scraping every 15 s costs a fifteenth of that. A name is
     * filtered without the {@code _total} of a counter, or the {@code _count} and {@code _sum} of a timer, with the unit
     * of a gauge: both forms are sent.
     */
    static final String JVM_THREADS = "jvm_threads_live_threads";
    static final String FEED_WAITING = "lockwatch_feed_waiting";
    /** The service's latency by stage (PipelineStages), as histogram buckets by {@code stage} and {@code le}. */
    static final String STAGE_BUCKETS = "lockwatch_pipeline_stage_seconds_bucket";
    static final List<String> STAGES = List.of("consumed_to_committed", "committed_to_claimed", "claimed_to_sent",
            "sent_to_answered");

    static final java.util.Set<String> NAMES = java.util.Set.of(RECEIVED, CHANGES, UNKNOWN, STALE, DUPLICATE, INVALID,
            HISTORY_WRITTEN, HISTORY_EXPORTED, JVM_MEMORY_USED, PARTITIONS_OWNED, CLAIMS, CLAIMS_SECONDS, JVM_THREADS,
            FEED_WAITING, STAGE_BUCKETS, ADAPTER_MESSAGES);

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private final List<URI> uris = new java.util.concurrent.CopyOnWriteArrayList<>();

    /** One or more instances: their samples are added up (counters, and heaps, sum over the instances). */
    PrometheusScraper(URI... serviceBases) {
        for (URI base : serviceBases) {
            uris.add(base.resolve("/actuator/prometheus?includedNames=" + String.join(",", NAMES.stream()
                    .flatMap(n -> java.util.stream.Stream.of(n, n.replaceFirst("_total$", ""), n.replaceFirst("_(count|sum|bucket)$", ""))).distinct().sorted().toList())));
        }
    }

    /** An instance that is gone for good (a drill killed it) is no longer asked; what it counted leaves the sums. */
    void drop(URI serviceBase) {
        String prefix = serviceBase.resolve("/actuator/prometheus").toString();
        uris.removeIf(u -> u.toString().startsWith(prefix));
    }

    Metrics scrape() throws IOException, InterruptedException {
        Metrics all = new Metrics();
        for (URI uri : uris) {
            scrape(uri).byName.forEach((name, lines) -> all.byName.computeIfAbsent(name, k -> new ArrayList<>()).addAll(lines));
        }
        return all;
    }

    private Metrics scrape(URI uri) throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10))
                .header("Accept", "text/plain").GET().build();
        HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
            throw new IOException("GET " + uri + ": HTTP " + response.statusCode());
        }
        return Metrics.parse(response.body());
    }

    /** One scrape: every sample line, by metric name. */
    static final class Metrics {

        private record Line(Map<String, String> labels, double value) {
        }

        private final Map<String, List<Line>> byName = new HashMap<>();

        static Metrics parse(String text) {
            Metrics m = new Metrics();
            for (String line : text.split("\n")) {
                if (line.isBlank() || line.startsWith("#")) {
                    continue;
                }
                int brace = line.indexOf('{');
                int space;
                String name;
                Map<String, String> labels = new HashMap<>();
                if (brace >= 0 && brace < line.indexOf(' ')) {
                    name = line.substring(0, brace);
                    int end = parseLabels(line, brace + 1, labels);
                    space = end + 1;
                } else {
                    space = line.indexOf(' ');
                    name = line.substring(0, space);
                }
                String[] rest = line.substring(space).trim().split(" ");
                m.byName.computeIfAbsent(name, k -> new ArrayList<>()).add(new Line(labels, number(rest[0])));
            }
            return m;
        }

        /** The sum of the metric's samples whose labels include the given pairs; 0 if there is none. */
        double sum(String name, String... labelPairs) {
            if (!NAMES.contains(name)) {
                throw new IllegalArgumentException(name + " is not scraped: add it to PrometheusScraper.NAMES");
            }
            double total = 0;
            for (Line l : byName.getOrDefault(name, List.of())) {
                boolean matches = true;
                for (int i = 0; i + 1 < labelPairs.length; i += 2) {
                    matches &= labelPairs[i + 1].equals(l.labels().get(labelPairs[i]));
                }
                if (matches) {
                    total += l.value();
                }
            }
            return total;
        }

        /**
         * The cumulative counts of a histogram's buckets whose labels include the given pairs, by upper bound
         * ({@code le}, in the metric's unit), summed over instances, in increasing order.
         */
        java.util.NavigableMap<Double, Double> buckets(String name, String... labelPairs) {
            java.util.NavigableMap<Double, Double> out = new java.util.TreeMap<>();
            for (Line l : byName.getOrDefault(name, List.of())) {
                boolean matches = l.labels().containsKey("le");
                for (int i = 0; i + 1 < labelPairs.length; i += 2) {
                    matches &= labelPairs[i + 1].equals(l.labels().get(labelPairs[i]));
                }
                if (matches) {
                    out.merge(number(l.labels().get("le")), l.value(), Double::sum);
                }
            }
            return out;
        }

        /**
         * The q-quantile of what a histogram counted between two scrapes ({@code earlier}, this), interpolated
         * linearly within its bucket as Prometheus' histogram_quantile does; NaN if it counted nothing.
         */
        double quantileSince(Metrics earlier, String name, double q, String... labelPairs) {
            java.util.NavigableMap<Double, Double> now = buckets(name, labelPairs), then = earlier.buckets(name, labelPairs);
            if (now.isEmpty()) {
                return Double.NaN;
            }
            double total = now.lastEntry().getValue() - then.getOrDefault(now.lastKey(), 0.0);
            if (total <= 0) {
                return Double.NaN;
            }
            double rank = q * total, lowerBound = 0, lowerCount = 0;
            for (var e : now.entrySet()) {
                double count = e.getValue() - then.getOrDefault(e.getKey(), 0.0);
                if (count >= rank) {
                    if (e.getKey().isInfinite()) {
                        return lowerBound; // beyond the highest finite bound: its bound is all that is known
                    }
                    double inBucket = count - lowerCount;
                    return inBucket <= 0 ? e.getKey() : lowerBound + (e.getKey() - lowerBound) * (rank - lowerCount) / inBucket;
                }
                lowerBound = e.getKey();
                lowerCount = count;
            }
            return lowerBound;
        }

        /** Parses {@code a="x",b="y"} from {@code from}; returns the index of the closing brace. */
        private static int parseLabels(String line, int from, Map<String, String> into) {
            int i = from;
            while (i < line.length() && line.charAt(i) != '}') {
                int eq = line.indexOf('=', i);
                String key = line.substring(i, eq).trim();
                StringBuilder value = new StringBuilder();
                int j = eq + 2; // past ="
                while (line.charAt(j) != '"') {
                    char c = line.charAt(j);
                    if (c == '\\') {
                        j++;
                        c = line.charAt(j) == 'n' ? '\n' : line.charAt(j);
                    }
                    value.append(c);
                    j++;
                }
                into.put(key, value.toString());
                i = j + 1;
                if (i < line.length() && line.charAt(i) == ',') {
                    i++;
                }
            }
            return i;
        }

        private static double number(String s) {
            return switch (s) {
                case "+Inf" -> Double.POSITIVE_INFINITY;
                case "-Inf" -> Double.NEGATIVE_INFINITY;
                default -> Double.parseDouble(s);
            };
        }
    }
}
