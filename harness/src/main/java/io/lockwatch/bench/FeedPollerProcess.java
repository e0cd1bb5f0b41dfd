package io.lockwatch.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code --feed-pollers N} run as a process of its own, at the lowest priority ({@code nice 19}). Pulling clients
 * are other machines in use: here they share the service's two cores, and in the harness's JVM their thousand HTTP
 * clients' work and garbage would also delay the webhook receivers that time the other figures. Out of the way,
 * they still count: their CPU is reported as its own group, and a poll answered late by a busy machine is late in
 * the feed's figures.
 */
final class FeedPollerProcess implements AutoCloseable {

    /** What the pollers saw, handed over when they stop. */
    record Results(List<FeedPollers.Item> items, long answers, long repeats, List<String> errors) {
        /** Latencies (ms, sorted) of the items whose event occurred in [fromMs, toMs). */
        long[] latencies(long fromMs, long toMs) {
            return items.stream().filter(i -> i.occurredAtMs() >= fromMs && i.occurredAtMs() < toMs)
                    .mapToLong(FeedPollers.Item::latencyMs).sorted().toArray();
        }
    }

    private final Process process;
    private final PrintWriter commands;
    private final BufferedReader answers;
    private final Path ids;

    /** @param polls where the long polls go: the API's port, or the feed listener's */
    FeedPollerProcess(URI base, URI polls, List<String> clientIds, int waitSeconds) throws IOException {
        ids = Files.createTempFile("lockwatch-feed-pollers", ".txt");
        Files.write(ids, clientIds);
        String java = ProcessHandle.current().info().command().orElse("java");
        process = new ProcessBuilder("nice", "-n", "19", java, "-Xmx256m", "-XX:+UseSerialGC", "-cp",
                System.getProperty("java.class.path"), FeedPollers.class.getName(), base.toString(),
                String.valueOf(waitSeconds), ids.toString(), polls.toString())
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        commands = new PrintWriter(process.getOutputStream(), true, StandardCharsets.UTF_8);
        answers = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    }

    long pid() {
        return process.pid();
    }

    /** Every poller's key made and its first poll open. */
    void start() throws IOException {
        expect(ask("start"), "started");
    }

    /** Polls open now, at the pollers. */
    int open() throws IOException {
        return Integer.parseInt(expect(ask("open"), "open ").substring("open ".length()));
    }

    /** Closes the polls (none is opened again) and takes what they saw. */
    synchronized Results stop() throws IOException {
        commands.println("stop");
        List<FeedPollers.Item> items = new ArrayList<>();
        List<String> errors = new ArrayList<>();
        long answered = 0, repeats = 0;
        for (String line; !"end".equals(line = answers.readLine()); ) {
            if (line == null) {
                throw new IOException("the feed pollers' process ended before it gave its results");
            }
            String[] f = line.split(" ", 2);
            switch (f[0]) {
                case "answers" -> answered = Long.parseLong(f[1]);
                case "repeats" -> repeats = Long.parseLong(f[1]);
                case "error" -> errors.add(f[1]);
                case "item" -> {
                    String[] v = f[1].split(" ");
                    items.add(new FeedPollers.Item(Integer.parseInt(v[0]), Long.parseLong(v[1]), Long.parseLong(v[2]),
                            Long.parseLong(v[3])));
                }
                default -> throw new IOException("the feed pollers said: " + line);
            }
        }
        return new Results(items, answered, repeats, errors);
    }

    private synchronized String ask(String command) throws IOException {
        commands.println(command);
        String line = answers.readLine();
        if (line == null) {
            throw new IOException("the feed pollers' process ended (asked: " + command + ")");
        }
        return line;
    }

    private static String expect(String line, String prefix) throws IOException {
        if (!line.startsWith(prefix)) {
            throw new IOException("the feed pollers said: " + line);
        }
        return line;
    }

    @Override
    public void close() throws IOException {
        commands.close(); // its standard input ends: it exits
        try {
            if (!process.waitFor(10, java.util.concurrent.TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
        Files.deleteIfExists(ids);
    }
}
