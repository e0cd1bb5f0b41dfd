package io.lockwatch.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Where the slowest notifications' time went (issue 55): the slowest 1% of a run's first attempts, each split by the
 * service's own timestamps into the wait for its reading's transaction, the way on to its POST (commit, claim, a
 * poster) and the POST itself, and the part of each that the service's JVM spent in garbage-collection pauses (its
 * {@code -Xlog:gc} with wall-clock times). A tail made of GC pauses, of a stage's waits or of slow POSTs reads
 * differently, and is fixed differently.
 */
final class SlowestNotifications {

    /** One notification's way, in epoch milliseconds: its event, its transaction, its attempt's start and length. */
    record Way(double occurredMs, double createdMs, double attemptedMs, double postMs) {

        double totalMs() {
            return attemptedMs + postMs - occurredMs;
        }
    }

    /** A pause, from its start to its end in epoch milliseconds. */
    record Pause(double startMs, double endMs) {
    }

    // -Xlog:gc:file=...:timemillis writes, as each pause ends: [1733450000000ms] GC(12) Pause Young (...) 64M->5M(245M) 4.321ms
    private static final Pattern PAUSE = Pattern.compile("^\\[(\\d+)ms\\] GC\\(\\d+\\) Pause .* ([0-9.]+)ms$");

    private SlowestNotifications() {
    }

    /** The JVM option that makes a service write its pauses where {@link #pauses} reads them. */
    static String gcLogOption(Path file) {
        return "-Xlog:gc:file=" + file.toAbsolutePath() + ":timemillis";
    }

    static List<Pause> pauses(Path gcLog) throws IOException {
        List<Pause> pauses = new ArrayList<>();
        if (!Files.isRegularFile(gcLog)) {
            return pauses;
        }
        for (String line : Files.readAllLines(gcLog)) {
            Matcher m = PAUSE.matcher(line.trim());
            if (m.matches()) {
                double end = Long.parseLong(m.group(1));
                pauses.add(new Pause(end - Double.parseDouble(m.group(2)), end));
            }
        }
        return pauses;
    }

    /** The report's line, and its figures for the JSON. */
    record Tail(String line, Map<String, Object> figures) {
    }

    /** Where the slowest went, or null when there is nothing to say. */
    static Tail of(List<Way> slowest, List<Pause> pauses, double fromMs, double toMs) {
        if (slowest.isEmpty()) {
            return null;
        }
        double toBatch = 0, toPost = 0, post = 0, total = 0, inGc = 0;
        int touched = 0;
        for (Way w : slowest) {
            toBatch += w.createdMs() - w.occurredMs();
            toPost += w.attemptedMs() - w.createdMs();
            post += w.postMs();
            total += w.totalMs();
            double overlap = 0;
            for (Pause p : pauses) {
                overlap += Math.max(0, Math.min(p.endMs(), w.attemptedMs() + w.postMs()) - Math.max(p.startMs(), w.occurredMs()));
            }
            inGc += overlap;
            touched += overlap > 0 ? 1 : 0;
        }
        int n = slowest.size();
        List<Pause> inRun = pauses.stream().filter(p -> p.endMs() >= fromMs && p.startMs() < toMs).toList();
        double longest = inRun.stream().mapToDouble(p -> p.endMs() - p.startMs()).max().orElse(0);
        double pausedMs = inRun.stream().mapToDouble(p -> p.endMs() - p.startMs()).sum();
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("count", n);
        m.put("from_ms", Math.round(slowest.stream().mapToDouble(Way::totalMs).min().orElse(0)));
        m.put("mean_ms", round(total / n));
        m.put("to_batch_mean_ms", round(toBatch / n));
        m.put("to_post_mean_ms", round(toPost / n));
        m.put("post_mean_ms", round(post / n));
        m.put("in_gc_mean_ms", round(inGc / n));
        m.put("touched_by_gc", touched);
        m.put("gc_pauses_in_run", inRun.size());
        m.put("gc_paused_ms_in_run", round(pausedMs));
        m.put("gc_longest_pause_ms", round(longest));
        return new Tail(String.format(Locale.US, "  where the slowest 1%% went (%,d first attempts, %d ms and more; mean %.0f ms): reading to its "
                        + "transaction %.0f%% (%.0f ms), on to the POST %.0f%% (%.0f ms), the POST %.0f%% (%.0f ms); inside the service's "
                        + "GC pauses %.1f%% (%.1f ms; %d of them touched by one); over the run %d pauses, %.0f ms in all, the longest %.1f ms",
                n, m.get("from_ms"), total / n, 100 * toBatch / total, toBatch / n, 100 * toPost / total, toPost / n,
                100 * post / total, post / n, 100 * inGc / total, inGc / n, touched, inRun.size(), pausedMs, longest), m);
    }

    private static double round(double v) {
        return Math.round(v * 10) / 10.0;
    }
}
