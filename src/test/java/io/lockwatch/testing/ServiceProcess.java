package io.lockwatch.testing;

import static org.awaitility.Awaitility.await;

import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
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
import java.util.stream.Stream;

/**
 * The packaged service (the jar {@code mvn verify} just built) as a child process on the external profile,
 * for tests that must kill it the hard way.
 */
public final class ServiceProcess {

    private final Process process;
    private final int port;

    private ServiceProcess(Process process, int port) {
        this.process = process;
        this.port = port;
    }

    public static ServiceProcess start(String name, String... extraArgs) throws Exception {
        File jar;
        try (Stream<Path> files = Files.list(Path.of("target"))) {
            jar = files.filter(p -> p.getFileName().toString().matches("lockwatch-.*\\.jar")).findFirst()
                    .orElseThrow(() -> new IllegalStateException("run mvn verify: no packaged jar in target/")).toFile();
        }
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        Path log = Path.of("target", "service-" + name + ".log");
        List<String> command = new ArrayList<>(List.of(System.getProperty("java.home") + "/bin/java", "-Xmx512m",
                "-jar", jar.getPath(), "--spring.profiles.active=external", "--server.port=" + port,
                "--logging.structured.format.console=", "--lockwatch.api.tokens=it-token",
                // the keys of the tests run in process (src/test/resources/config/application.yaml): they share the database
                "--lockwatch.secrets.keys=test-2:LXCmzbXHn7bnJPZvyEDJ3bFzl5AYiLqNKcvkFW4iqH0=,test-1:0Q3Qk8r0vYd0nK2kH2u3HXz3lq8jv1yW0m2f8Q7b6x4="));
        command.addAll(List.of(extraArgs));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        HttpClient http = HttpClient.newHttpClient();
        URI ready = URI.create("http://127.0.0.1:" + port + "/actuator/health/readiness");
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(250)).until(() -> {
            if (!p.isAlive()) {
                throw new IllegalStateException("service exited; see " + log);
            }
            try {
                return http.send(HttpRequest.newBuilder(ready).build(), HttpResponse.BodyHandlers.discarding())
                        .statusCode() == 200;
            } catch (IOException e) {
                return false;
            }
        });
        return new ServiceProcess(p, port);
    }

    public int port() {
        return port;
    }

    /** The process id, which the instance's id in {@code ingest_members} holds ({@code host/pid/random}). */
    public long pid() {
        return process.pid();
    }

    /** SIGKILL: no shutdown hook, no graceful anything. */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor();
    }

    public void stop() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly();
        }
    }
}
