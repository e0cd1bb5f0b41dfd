package io.lockwatch.infra.startup;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.function.Supplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.context.event.ApplicationEnvironmentPreparedEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.Profiles;

/**
 * On the {@code external} profile, before any bean is created: waits up to
 * {@code lockwatch.startup.dependency-wait} (default 30 s, so a compose stack may start in any order) for
 * PostgreSQL, RabbitMQ and, if configured, ClickHouse to answer, then fails the start with one clear line
 * naming the first one that did not. Once the service runs, outages are ridden out instead: consumers and
 * pools reconnect by themselves and {@code /actuator/health} reports DOWN meanwhile.
 */
public class DependencyCheck implements ApplicationListener<ApplicationEnvironmentPreparedEvent> {

    private static final Logger log = LoggerFactory.getLogger(DependencyCheck.class);
    private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(2);

    @Override
    public void onApplicationEvent(ApplicationEnvironmentPreparedEvent event) {
        ConfigurableEnvironment env = event.getEnvironment();
        if (!env.acceptsProfiles(Profiles.of("external"))
                || !env.getProperty("lockwatch.startup.check-dependencies", Boolean.class, true)) {
            return;
        }
        Duration wait = env.getProperty("lockwatch.startup.dependency-wait", Duration.class, Duration.ofSeconds(30));
        List<Probe> probes = new ArrayList<>();
        probes.add(postgres(env));
        probes.add(rabbit(env));
        String clickhouse = env.getProperty("lockwatch.clickhouse.url", "");
        if (!clickhouse.isBlank()) {
            probes.add(clickhouse(clickhouse));
        }
        long deadline = System.nanoTime() + wait.toNanos();
        for (Probe probe : probes) {
            awaitOrFail(probe, deadline);
        }
    }

    void awaitOrFail(Probe probe, long deadline) {
        boolean logged = false;
        while (true) {
            String failure = probe.check().get();
            if (failure == null) {
                return;
            }
            if (System.nanoTime() >= deadline) {
                DependencyUnavailableException e =
                        new DependencyUnavailableException(probe.name, probe.address, probe.property, failure);
                log.error("lockwatch cannot start: {}", e.getMessage());
                throw e;
            }
            if (!logged) {
                log.warn("Waiting for {} at {}: {}", probe.name, probe.address, failure);
                logged = true;
            }
            try {
                Thread.sleep(500); // polling a remote service; there is no event to wait on
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
                throw new DependencyUnavailableException(probe.name, probe.address, probe.property, "interrupted");
            }
        }
    }

    private static Probe postgres(ConfigurableEnvironment env) {
        String url = env.getProperty("spring.datasource.url", "");
        Properties props = new Properties();
        props.setProperty("user", env.getProperty("spring.datasource.username", ""));
        props.setProperty("password", env.getProperty("spring.datasource.password", ""));
        props.setProperty("connectTimeout", String.valueOf(PROBE_TIMEOUT.toSeconds()));
        props.setProperty("loginTimeout", String.valueOf(PROBE_TIMEOUT.toSeconds()));
        String shown = url.replaceFirst("\\?.*$", ""); // query parameters may carry a password
        return new Probe("PostgreSQL", shown, "spring.datasource.url", () -> {
            try (Connection ignored = DriverManager.getConnection(url, props)) {
                return null;
            } catch (SQLException e) {
                return oneLine(e);
            }
        });
    }

    /** Any node of {@code spring.rabbitmq.addresses} (a cluster's) will do: the client connects to the first that answers. */
    static Probe rabbit(ConfigurableEnvironment env) {
        String addresses = env.getProperty("spring.rabbitmq.addresses", "");
        List<String> nodes = addresses.isBlank()
                ? List.of(env.getProperty("spring.rabbitmq.host", "localhost") + ":" + env.getProperty("spring.rabbitmq.port", "5672"))
                : java.util.Arrays.stream(addresses.split(",")).map(String::trim).filter(a -> !a.isEmpty())
                        .map(a -> a.replaceFirst("^amqps?://([^@]*@)?", "").replaceFirst("/.*$", "")).toList();
        return new Probe("RabbitMQ", String.join(",", nodes),
                addresses.isBlank() ? "spring.rabbitmq.host/port" : "spring.rabbitmq.addresses", () -> {
            String failure = null;
            for (String node : nodes) {
                String host = node.contains(":") ? node.substring(0, node.lastIndexOf(':')) : node;
                int port = node.contains(":") ? Integer.parseInt(node.substring(node.lastIndexOf(':') + 1)) : 5672;
                try (Socket socket = new Socket()) {
                    socket.connect(new InetSocketAddress(host, port), (int) PROBE_TIMEOUT.toMillis());
                    return null;
                } catch (IOException e) {
                    failure = (nodes.size() > 1 ? node + ": " : "") + oneLine(e);
                }
            }
            return failure;
        });
    }

    private static Probe clickhouse(String jdbcUrl) {
        URI base = URI.create(jdbcUrl.replaceFirst("^jdbc:(clickhouse|ch):", "http:"));
        String scheme = jdbcUrl.contains("ssl=true") ? "https" : "http";
        URI ping = URI.create(scheme + "://" + base.getHost() + ":" + (base.getPort() < 0 ? 8123 : base.getPort()) + "/ping");
        HttpClient http = HttpClient.newBuilder().connectTimeout(PROBE_TIMEOUT).build();
        return new Probe("ClickHouse", ping.getHost() + ":" + ping.getPort(), "lockwatch.clickhouse.url", () -> {
            try {
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(ping).timeout(PROBE_TIMEOUT).build(),
                        HttpResponse.BodyHandlers.ofString());
                return r.statusCode() == 200 ? null : "HTTP " + r.statusCode() + " from /ping";
            } catch (IOException e) {
                return oneLine(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return "interrupted";
            }
        });
    }

    private static String oneLine(Exception e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        String msg = t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
        return msg.lines().findFirst().orElse(msg);
    }

    /** {@code check} answers null when the service is there, else why not, in one line. */
    record Probe(String name, String address, String property, Supplier<String> check) {
    }
}
