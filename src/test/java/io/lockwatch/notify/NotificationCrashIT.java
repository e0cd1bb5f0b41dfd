package io.lockwatch.notify;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ConnectionFactory;
import io.lockwatch.testing.ServiceProcess;
import org.junit.jupiter.api.Test;

/**
 * {@code kill -9} of the service while 1,000 notifications are in flight, against the real services: after a
 * restart every one is delivered, and a receiver that de-duplicates by {@code webhook-id} sees each exactly once.
 * The service runs as a separate process from the jar that {@code mvn verify} just packaged.
 */
class NotificationCrashIT {

    static final String DB = "jdbc:postgresql://127.0.0.1:5432/lockwatch";
    static final int SENSORS = 1000, CLIENTS = 10;
    static final String[] SERVICE_ARGS = {"--lockwatch.notify.allow-private-targets=true", "--lockwatch.notify.timeout=2s",
            "--lockwatch.notify.connect-timeout=1s", "--lockwatch.notify.poll-interval=200"};

    @Test
    void notificationsInFlightAtAKillAreAllDeliveredAfterRestart() throws Exception {
        try (WebhookReceiver receiver = new WebhookReceiver()) {
            String prefix = "K" + UUID.randomUUID().toString().replace("-", "").substring(0, 8);
            List<String> paths = new ArrayList<>();
            try (Connection c = DriverManager.getConnection(DB, "lockwatch", "lockwatch")) {
                List<UUID> clients = new ArrayList<>();
                for (int i = 0; i < CLIENTS; i++) {
                    String path = "/crash-" + prefix + "-" + i;
                    paths.add(path);
                    try (PreparedStatement ps = c.prepareStatement(
                            "INSERT INTO clients (name, url, webhook_secret) VALUES (?, ?, ?) RETURNING id")) {
                        ps.setString(1, "crash " + i);
                        ps.setString(2, receiver.url(path));
                        ps.setString(3, WebhookSigner.newSecret());
                        try (var rs = ps.executeQuery()) {
                            rs.next();
                            clients.add(rs.getObject(1, UUID.class));
                        }
                    }
                }
                try (PreparedStatement sensor = c.prepareStatement("INSERT INTO sensors (id, address) VALUES (?, 'crash drill')");
                     PreparedStatement link = c.prepareStatement("INSERT INTO client_sensors (client_id, sensor_id) VALUES (?, ?)")) {
                    for (int i = 0; i < SENSORS; i++) {
                        String id = prefix + String.format("%04d", i);
                        sensor.setString(1, id);
                        sensor.addBatch();
                        link.setObject(1, clients.get(i % CLIENTS));
                        link.setString(2, id);
                        link.addBatch();
                    }
                    sensor.executeBatch();
                    link.executeBatch();
                }
            }
            // slow answers, so that many are in flight when the service is killed
            paths.forEach(p -> receiver.answer(p, 200));
            receiver.delay(150);

            ServiceProcess first = ServiceProcess.start("notify-crash-first", SERVICE_ARGS);
            try {
                publishOneChangePerSensor(prefix);
                await().atMost(Duration.ofSeconds(60)).until(() -> received(receiver, paths) >= 200);
            } finally {
                first.kill();
            }
            int beforeRestart = received(receiver, paths);
            assertThat(beforeRestart).as("killed mid-way").isLessThan(SENSORS);

            ServiceProcess second = ServiceProcess.start("notify-crash-second", SERVICE_ARGS);
            try {
                await().atMost(Duration.ofSeconds(120)).until(() -> distinctIds(receiver, paths).size() == SENSORS);
                try (Connection c = DriverManager.getConnection(DB, "lockwatch", "lockwatch");
                     PreparedStatement ps = c.prepareStatement(
                             "SELECT count(*) FILTER (WHERE status = 'delivered'), count(*) FROM notifications WHERE sensor_id LIKE ?")) {
                    ps.setString(1, prefix + "%");
                    await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                        try (var rs = ps.executeQuery()) {
                            rs.next();
                            assertThat(rs.getInt(2)).isEqualTo(SENSORS);
                            assertThat(rs.getInt(1)).isEqualTo(SENSORS);
                        }
                    });
                }
            } finally {
                second.stop();
            }
            int total = received(receiver, paths);
            System.out.printf("crash drill: %d received before the kill, %d in all, %d distinct, %d redelivered%n",
                    beforeRestart, total, SENSORS, total - SENSORS);
        }
    }

    private static void publishOneChangePerSensor(String prefix) throws Exception {
        ConnectionFactory f = new ConnectionFactory();
        f.setHost("127.0.0.1");
        try (var conn = f.newConnection(); Channel ch = conn.createChannel()) {
            ch.confirmSelect();
            long ts = System.currentTimeMillis() - 60_000;
            for (int i = 0; i < SENSORS; i++) {
                String id = prefix + String.format("%04d", i);
                String body = "{\"sensor_id\":\"" + id + "\",\"data\":1,\"ts\":" + (ts + i) + "}";
                ch.basicPublish("lockwatch.readings", id, new AMQP.BasicProperties.Builder().deliveryMode(2).build(),
                        body.getBytes(StandardCharsets.UTF_8));
            }
            ch.waitForConfirmsOrDie(30_000);
        }
    }

    private static int received(WebhookReceiver receiver, List<String> paths) {
        return paths.stream().mapToInt(p -> receiver.at(p).size()).sum();
    }

    private static Set<String> distinctIds(WebhookReceiver receiver, List<String> paths) {
        Set<String> ids = new HashSet<>();
        paths.forEach(p -> receiver.at(p).forEach(r -> ids.add(r.header("webhook-id"))));
        return ids;
    }
}
