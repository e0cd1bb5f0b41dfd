package io.lockwatch.infra.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

import io.lockwatch.LockwatchApplication;
import io.lockwatch.registry.Registry;
import org.eclipse.paho.client.mqttv3.MqttClient;
import org.eclipse.paho.client.mqttv3.MqttConnectOptions;
import org.eclipse.paho.client.mqttv3.MqttMessage;
import org.eclipse.paho.client.mqttv3.persist.MemoryPersistence;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * At start, the embedded MQTT listener acknowledges a QoS 1 reading only once it can keep it: one published from
 * the moment the listener takes connections is refused until the bridge is subscribed, then taken, and one published
 * as soon as health says UP is taken at its first try. Each acknowledged reading is applied.
 */
class EmbeddedMqttReadinessTest {

    @TempDir Path dataDir;

    @Test
    void aReadingAcknowledgedDuringTheStartOrOnceHealthSaysUpIsApplied() throws Exception {
        String sensor = "Q" + Long.toString(System.nanoTime(), 36);
        // a first run registers the sensor: the second is the one raced
        try (ConfigurableApplicationContext first = start(EmbeddedEnvironmentPostProcessor.portOrFree(0),
                EmbeddedEnvironmentPostProcessor.portOrFree(0))) {
            first.getBean(Registry.class).createSensor(sensor, "Readiness st. 1", null);
        }

        int httpPort = EmbeddedEnvironmentPostProcessor.portOrFree(0);
        int mqttPort = EmbeddedEnvironmentPostProcessor.portOrFree(0);
        String listener = "tcp://127.0.0.1:" + mqttPort;
        CompletableFuture<ConfigurableApplicationContext> starting = CompletableFuture.supplyAsync(() -> start(httpPort, mqttPort));
        try {
            // from the first moment the port accepts, again until the listener acknowledges it
            await().atMost(Duration.ofMinutes(5)).pollInterval(Duration.ofMillis(20)).ignoreExceptions()
                    .until(() -> publish(listener, sensor, "{\"data\": 0, \"message_id\": \"early\"}"));
            HttpClient http = HttpClient.newHttpClient();
            URI health = URI.create("http://127.0.0.1:" + httpPort + "/actuator/health");
            await().atMost(Duration.ofMinutes(5)).pollInterval(Duration.ofMillis(20)).ignoreExceptions().until(() ->
                    http.send(HttpRequest.newBuilder(health).build(), HttpResponse.BodyHandlers.ofString()).statusCode() == 200);
            assertThat(publish(listener, sensor, "{\"data\": 1, \"message_id\": \"once-up\"}"))
                    .as("taken at the first try once health says UP").isTrue();

            JdbcTemplate jdbc = starting.get().getBean(JdbcTemplate.class);
            await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> assertThat(jdbc.queryForList(
                    "SELECT state FROM sensor_events WHERE sensor_id = ? ORDER BY sequence", Integer.class, sensor))
                    .as("both acknowledged readings applied, in order").containsExactly(0, 1));
        } finally {
            starting.get().close();
        }
    }

    /** One QoS 1 publish on a connection of its own: true once acknowledged; an exception if refused. */
    private static boolean publish(String listener, String sensor, String payload) throws Exception {
        MqttClient client = new MqttClient(listener, "readiness-" + UUID.randomUUID(), new MemoryPersistence());
        MqttConnectOptions options = new MqttConnectOptions();
        options.setCleanSession(true);
        options.setConnectionTimeout(5);
        client.setTimeToWait(30_000);
        try {
            client.connect(options);
            MqttMessage m = new MqttMessage(payload.getBytes(StandardCharsets.UTF_8));
            m.setQos(1);
            client.publish("lockwatch/readings/" + sensor, m);
            return true;
        } finally {
            if (client.isConnected()) {
                client.disconnect();
            }
            client.close();
        }
    }

    private ConfigurableApplicationContext start(int httpPort, int mqttPort) {
        List<String> args = new ArrayList<>(List.of(
                "--server.port=" + httpPort,
                "--lockwatch.embedded.mqtt-port=" + mqttPort,
                "--lockwatch.embedded.data-dir=" + dataDir,
                "--lockwatch.embedded.ephemeral=false",
                "--spring.quartz.scheduler-name=lockwatch-readiness-" + System.nanoTime()));
        return new SpringApplicationBuilder(LockwatchApplication.class).run(args.toArray(String[]::new));
    }
}
