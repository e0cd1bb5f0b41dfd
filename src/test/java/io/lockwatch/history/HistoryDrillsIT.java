package io.lockwatch.history;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.UUID;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ConnectionFactory;
import io.lockwatch.notify.WebhookReceiver;
import io.lockwatch.notify.WebhookSigner;
import io.lockwatch.testing.ServiceProcess;
import io.lockwatch.testing.Services;
import org.junit.jupiter.api.Test;
import ru.yandex.clickhouse.ClickHouseDataSource;

/**
 * History is lossless: a {@code kill -9} in the middle of 100,000 readings, and a ClickHouse that is away for a
 * while, end with exactly every reading in history; meanwhile state and notifications go on.
 */
class HistoryDrillsIT {

    static final String PG = "jdbc:postgresql://127.0.0.1:5432/lockwatch";
    static final ClickHouseDataSource CH = new ClickHouseDataSource("jdbc:clickhouse://127.0.0.1:8123/lockwatch?compress=false");

    @Test
    void aKillDuring100000ReadingsLosesNoneAndDuplicatesNone() throws Exception {
        String prefix = "P" + UUID.randomUUID().toString().replace("-", "").substring(0, 8);
        ServiceProcess first = ServiceProcess.start("history-kill-first");
        java.util.concurrent.CompletableFuture<Void> publishing = java.util.concurrent.CompletableFuture.runAsync(() -> {
            try {
                publish(prefix, 100_000, 1000);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        try {
            // killed while readings still stream in
            await().atMost(Duration.ofSeconds(120)).until(() -> historyCount(prefix) >= 10_000);
        } finally {
            first.kill();
        }
        long atKill = historyCount(prefix);
        publishing.get(120, java.util.concurrent.TimeUnit.SECONDS);

        ServiceProcess second = ServiceProcess.start("history-kill-second");
        try {
            await().atMost(Duration.ofSeconds(180)).until(() -> historyCount(prefix) == 100_000);
            assertThat(rawCount(prefix)).as("rows written, duplicates included").isGreaterThanOrEqualTo(100_000);
            System.out.printf("history kill drill: %d in history at the kill, %d rows written, 100000 distinct%n",
                    atKill, rawCount(prefix));
        } finally {
            second.stop();
        }
    }

    @Test
    void aClickHouseOutageStallsOnlyHistoryWhichThenCatchesUp() throws Exception {
        String prefix = "O" + UUID.randomUUID().toString().replace("-", "").substring(0, 8);
        try (WebhookReceiver receiver = new WebhookReceiver();
             Connection pg = DriverManager.getConnection(PG, "lockwatch", "lockwatch")) {
            String sensor = prefix + "0000";
            try (PreparedStatement ps = pg.prepareStatement("INSERT INTO sensors (id, address) VALUES (?, 'room')")) {
                ps.setString(1, sensor);
                ps.executeUpdate();
            }
            UUID client;
            try (PreparedStatement ps = pg.prepareStatement(
                    "INSERT INTO clients (name, url, webhook_secret) VALUES ('outage', ?, ?) RETURNING id")) {
                ps.setString(1, receiver.url("/outage"));
                ps.setString(2, WebhookSigner.newSecret());
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    client = rs.getObject(1, UUID.class);
                }
            }
            try (PreparedStatement ps = pg.prepareStatement("INSERT INTO client_sensors (client_id, sensor_id) VALUES (?, ?)")) {
                ps.setObject(1, client);
                ps.setString(2, sensor);
                ps.executeUpdate();
            }
            ServiceProcess service = ServiceProcess.start("clickhouse-outage", "--lockwatch.notify.allow-private-targets=true");
            try {
                Services.run("down", "clickhouse");
                try {
                    publish(prefix, 1000, 1); // one sensor, alternating: 1,000 state changes
                    await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
                        try (PreparedStatement ps = pg.prepareStatement("SELECT sequence FROM sensor_state WHERE sensor_id = ?")) {
                            ps.setString(1, sensor);
                            try (ResultSet rs = ps.executeQuery()) {
                                rs.next();
                                assertThat(rs.getLong(1)).isEqualTo(1000);
                            }
                        }
                    });
                    await().atMost(Duration.ofSeconds(60)).until(() -> receiver.at("/outage").stream()
                            .anyMatch(r -> r.body().contains("\"sequence\":1000")));
                } finally {
                    Services.run("up", "clickhouse");
                }
                await().atMost(Duration.ofSeconds(120)).until(() -> historyCount(prefix) == 1000);
                await().atMost(Duration.ofSeconds(60)).until(() -> eventCount(prefix) == 1000);
            } finally {
                service.stop();
            }
        }
    }

    /** {@code n} readings over {@code sensors} unregistered-or-not sensors, each with its own message id. */
    private static void publish(String prefix, int n, int sensors) throws Exception {
        ConnectionFactory f = new ConnectionFactory();
        f.setHost("127.0.0.1");
        try (var conn = f.newConnection(); Channel ch = conn.createChannel()) {
            ch.confirmSelect();
            long ts = System.currentTimeMillis() - 120_000; // recent: well inside the heartbeat timeout
            for (int i = 0; i < n; i++) {
                String id = prefix + String.format("%04d", i % sensors);
                String body = "{\"sensor_id\":\"" + id + "\",\"data\":" + (i / sensors % 2) + ",\"ts\":" + (ts + i)
                        + ",\"message_id\":\"" + prefix + "-" + i + "\"}";
                ch.basicPublish("lockwatch.readings", id, new AMQP.BasicProperties.Builder().deliveryMode(2).build(),
                        body.getBytes(StandardCharsets.UTF_8));
                if (i % 5000 == 4999) {
                    ch.waitForConfirmsOrDie(30_000);
                }
            }
            ch.waitForConfirmsOrDie(30_000);
        }
    }

    private static long historyCount(String prefix) throws Exception {
        return count("SELECT count() FROM readings FINAL WHERE sensor_id LIKE concat(?, '%')", prefix);
    }

    private static long rawCount(String prefix) throws Exception {
        return count("SELECT count() FROM readings WHERE sensor_id LIKE concat(?, '%')", prefix);
    }

    private static long eventCount(String prefix) throws Exception {
        return count("SELECT count() FROM events FINAL WHERE sensor_id LIKE concat(?, '%')", prefix);
    }

    private static long count(String sql, String prefix) throws Exception {
        try (var c = CH.getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, prefix);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        } catch (java.sql.SQLException e) {
            return -1; // ClickHouse away
        }
    }
}
