package io.lockwatch.bench;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The lockwatch service as a child process:
 * {@code java -Xmx512m -XX:+UseParallelGC -jar <jar> --spring.profiles.active=external --server.port=<free port>}, output to a
 * log file, its pid in a file (so that the calling script can stop it if this harness dies), stopped with
 * SIGTERM (a graceful Spring/Camel shutdown).
 */
final class ServiceProcess implements AutoCloseable {

    /** The bearer token the service is given (full access), for harnesses that call its API. */
    static final String API_TOKEN = "bench-token";
    /** The key the benchmark's service instances seal webhook secrets with: one for all, as in production. */
    static final String SECRETS_KEY = "bench:bXv0m3l8nE1pQ2cY6tZ9wR4kH7sJ0aD5fG8jL1xV3bM=";
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(60);

    private volatile Process process;
    private final int port;
    private final Path pidFile;
    private final List<String> command;
    private final Path log;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    private ServiceProcess(Process process, int port, Path pidFile, List<String> command, Path log) {
        this.process = process;
        this.port = port;
        this.pidFile = pidFile;
        this.command = command;
        this.log = log;
    }

    static ServiceProcess start(Path jar, List<String> jvmOptions, List<String> extraArguments, Path log, Path pidFile)
            throws IOException {
        return start(jar, jvmOptions, extraArguments, log, pidFile, freePort());
    }

    /** Another instance on its own port, log and pid file, with the same arguments. */
    static ServiceProcess start(Path jar, List<String> jvmOptions, List<String> extraArguments, Path log, Path pidFile,
                                int port) throws IOException {
        if (!Files.isRegularFile(jar)) {
            throw new IOException("no service jar at " + jar + " (mvn -DskipTests package)");
        }
        String java = ProcessHandle.current().info().command().orElse("java");
        List<String> command = new ArrayList<>(List.of(java, "-Xmx512m", "-XX:+UseParallelGC"));
        command.addAll(jvmOptions);
        command.addAll(List.of("-jar", jar.toString(), "--spring.profiles.active=external", "--server.port=" + port, "--lockwatch.api.tokens=" + API_TOKEN,
                "--lockwatch.secrets.keys=" + SECRETS_KEY));
        command.addAll(extraArguments);
        Files.deleteIfExists(log);
        return launch(command, port, log, pidFile);
    }

    /** A service started by a command of the caller's own (another profile, other JVM options), on {@code port}. */
    static ServiceProcess startCommand(List<String> command, int port, Path log, Path pidFile) throws IOException {
        Files.deleteIfExists(log);
        return launch(command, port, log, pidFile);
    }

    private static ServiceProcess launch(List<String> command, int port, Path log, Path pidFile) throws IOException {
        Process process = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                .start();
        Files.writeString(pidFile, process.pid() + "\n");
        return new ServiceProcess(process, port, pidFile, List.copyOf(command), log);
    }

    /**
     * Moves the running service into a CPU cgroup of its own, limited to {@code cores} (cgroup v1's cpu controller,
     * or v2's {@code cpu.max}; needs root), all its threads at once. It stands in for a machine of that size when the
     * benchmark shows what a second instance adds. Done on a running service (the benchmark does it for the timed
     * run): started so limited, Spring Boot and Camel take minutes to start. A {@link #restart()} runs unlimited.
     */
    void limitCpu(double cores, String name) throws IOException {
        long period = 100_000;
        long quota = Math.max(1000, Math.round(cores * period));
        Path v1 = Path.of("/sys/fs/cgroup/cpu");
        Path v2 = Path.of("/sys/fs/cgroup");
        Path dir;
        if (Files.isRegularFile(v1.resolve("cpu.cfs_quota_us"))) {
            dir = Files.createDirectories(v1.resolve(name));
            Files.writeString(dir.resolve("cpu.cfs_period_us"), Long.toString(period));
            Files.writeString(dir.resolve("cpu.cfs_quota_us"), Long.toString(quota));
        } else if (Files.isRegularFile(v2.resolve("cgroup.controllers"))
                && Files.readString(v2.resolve("cgroup.controllers")).contains("cpu")) {
            dir = Files.createDirectories(v2.resolve(name));
            Files.writeString(dir.resolve("cpu.max"), quota + " " + period);
        } else {
            throw new IOException("no CPU cgroup controller to limit the service with (/sys/fs/cgroup/cpu, or cgroup v2 "
                    + "with cpu); run without --service-cpus");
        }
        Files.writeString(dir.resolve("cgroup.procs"), Long.toString(process.pid()));
    }

    /** {@code kill -9}: no shutdown hook, nothing flushed, as a crash. */
    void kill() throws InterruptedException {
        process.destroyForcibly().waitFor();
    }

    /**
     * Starts the same command again after {@link #kill()}, in this object (so the scrapers, samplers and the
     * shutdown hook follow), on the same port, appending to the same log.
     */
    synchronized void restart() throws IOException {
        if (process.isAlive()) {
            throw new IllegalStateException("still running");
        }
        process = launch(command, port, log, pidFile).process;
    }

    long pid() {
        return process.pid();
    }

    URI baseUri() {
        return URI.create("http://127.0.0.1:" + port);
    }

    /** Waits until {@code /actuator/health} says UP (the schema is migrated by then). */
    void awaitHealthy(Duration timeout) throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(baseUri().resolve("/actuator/health"))
                .timeout(Duration.ofSeconds(5)).GET().build();
        long deadline = System.nanoTime() + timeout.toNanos();
        String last = "no answer";
        while (System.nanoTime() - deadline < 0) {
            if (!process.isAlive()) {
                throw new IOException("the service exited with code " + process.exitValue() + " while starting");
            }
            try {
                HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
                if (response.statusCode() == 200 && response.body().startsWith("{\"status\":\"UP\"")) {
                    return;
                }
                last = "HTTP " + response.statusCode() + " " + abbreviate(response.body());
            } catch (IOException e) {
                last = e.toString();
            }
            Thread.sleep(500);
        }
        throw new IOException("the service was not healthy after " + timeout.toSeconds() + " s: " + last);
    }

    boolean isAlive() {
        return process.isAlive();
    }

    /** SIGTERM, then waits for the graceful shutdown; SIGKILL only if that takes over a minute. */
    @Override
    public synchronized void close() {
        try {
            if (process.isAlive()) {
                process.destroy();
                if (!process.waitFor(STOP_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
                    System.err.println("[bench] the service did not stop within " + STOP_TIMEOUT.toSeconds()
                            + " s of SIGTERM; killing it");
                    process.destroyForcibly().waitFor();
                }
            }
            Files.deleteIfExists(pidFile);
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        } catch (IOException e) {
            // the pid file is gone already
        }
    }

    static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    private static String abbreviate(String s) {
        return s.length() > 300 ? s.substring(0, 300) + "…" : s;
    }
}
