package io.lockwatch.devices;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.apache.camel.CamelContext;
import org.apache.camel.Exchange;
import org.apache.camel.support.DefaultExchange;
import org.apache.camel.test.spring.junit5.CamelSpringBootTest;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * What RabbitMQ's HTTP auth backend is answered, over HTTP as the broker asks (form POSTs, "allow" or "deny"), and
 * only as it asks. Which networks may ask is {@code BrokerNetworksTest}'s; the broker's own side {@code DeviceIdentityIT}'s.
 */
@CamelSpringBootTest
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class BrokerAuthTest {

    static final HttpClient HTTP = HttpClient.newHttpClient();

    @LocalServerPort int port;
    @Autowired Devices devices;
    @Autowired JdbcTemplate jdbc;
    @Autowired MeterRegistry meters;
    @Autowired CamelContext camel;

    String mine, other, gateway;
    String sensorSecret, gatewaySecret;

    @BeforeEach
    void registry() {
        mine = "B" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        other = "C" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        gateway = "gw-" + UUID.randomUUID().toString().substring(0, 8);
        jdbc.update("INSERT INTO sensors (id, address) VALUES (?, 'a'), (?, 'b')", mine, other);
        devices.createGateway(gateway, null, List.of(mine));
        sensorSecret = devices.createCredential(DeviceLogin.ofSensor(mine), Duration.ZERO).secret();
        gatewaySecret = devices.createCredential(DeviceLogin.ofGateway(gateway), Duration.ZERO).secret();
    }

    @Test
    void aDeviceLogsInWithItsLiveCredentialOnly() throws Exception {
        assertThat(ask("user", Map.of("username", "sensor." + mine, "password", sensorSecret))).isEqualTo("allow");
        assertThat(ask("user", Map.of("username", "gateway." + gateway, "password", gatewaySecret))).isEqualTo("allow");
        assertThat(ask("user", Map.of("username", "sensor." + mine, "password", gatewaySecret))).isEqualTo("deny");
        assertThat(ask("user", Map.of("username", "sensor." + other, "password", sensorSecret))).isEqualTo("deny");
        assertThat(ask("user", Map.of("username", "guest", "password", "guest"))).as("no device's").isEqualTo("deny");
        assertThat(ask("user", Map.of("username", "sensor." + mine))).as("no password").isEqualTo("deny");
        assertThat(ask("vhost", Map.of("username", "sensor." + mine, "vhost", "/", "ip", "127.0.0.1"))).isEqualTo("allow");
        assertThat(ask("vhost", Map.of("username", "sensor." + other, "vhost", "/", "ip", "127.0.0.1"))).isEqualTo("deny");

        double before = refused("login");
        UUID id = devices.credentials(DeviceLogin.ofSensor(mine)).get(0).id();
        devices.revokeCredential(DeviceLogin.ofSensor(mine), id);
        assertThat(ask("user", Map.of("username", "sensor." + mine, "password", sensorSecret))).as("revoked").isEqualTo("deny");
        assertThat(ask("vhost", Map.of("username", "sensor." + mine, "vhost", "/"))).isEqualTo("deny");
        assertThat(refused("login")).isEqualTo(before + 1);
    }

    @Test
    void aDeviceWritesToTheReadingsExchangeWithTheKeysOfItsOwnSensorsAndReadsNothing() throws Exception {
        String device = "gateway." + gateway;
        assertThat(ask("resource", resource(device, "exchange", "lockwatch.readings", "write"))).isEqualTo("allow");
        assertThat(ask("resource", resource(device, "exchange", "lockwatch.readings", "read"))).isEqualTo("deny");
        assertThat(ask("resource", resource(device, "exchange", "amq.direct", "write"))).isEqualTo("deny");
        assertThat(ask("resource", resource(device, "queue", "lockwatch.readings", "read"))).isEqualTo("deny");
        assertThat(ask("resource", resource(device, "queue", "mqtt-subscription-x", "configure"))).isEqualTo("deny");

        double before = refused("topic");
        assertThat(ask("topic", topic(device, "lockwatch.readings", "write", mine))).isEqualTo("allow");
        assertThat(ask("topic", topic(device, "lockwatch.readings", "write", other))).isEqualTo("deny");
        assertThat(ask("topic", topic(device, "lockwatch.readings", "read", mine))).isEqualTo("deny");
        assertThat(ask("topic", topic("sensor." + mine, "lockwatch.readings", "write", mine))).isEqualTo("allow");
        assertThat(ask("topic", topic("sensor." + mine, "lockwatch.readings", "write", other))).isEqualTo("deny");
        assertThat(ask("topic", topic("sensor." + mine, "lockwatch.readings", "write", "#"))).isEqualTo("deny");
        assertThat(refused("topic")).isEqualTo(before + 4);
    }

    @Test
    void overMqttTheKeyIsThePluginsForTheSensorsTopic() {
        BrokerAuth mqtt = new BrokerAuth(devices, "lockwatch.readings", "amq.topic", new SimpleMeterRegistry());
        String device = "sensor." + mine;
        assertThat(call(mqtt::topic, topic(device, "amq.topic", "write", "lockwatch.readings." + mine))).isEqualTo("allow");
        assertThat(call(mqtt::topic, topic(device, "amq.topic", "write", "lockwatch.readings." + other))).isEqualTo("deny");
        assertThat(call(mqtt::topic, topic(device, "amq.topic", "write", mine))).isEqualTo("deny");
        assertThat(call(mqtt::topic, topic(device, "amq.topic", "read", "lockwatch.readings.#"))).as("a subscription").isEqualTo("deny");
        assertThat(call(mqtt::resource, resource(device, "exchange", "amq.topic", "write"))).isEqualTo("allow");
    }

    @Test
    void aGetOrAnotherPathIsNoQuestion() throws Exception {
        HttpResponse<String> get = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                + "/broker-auth/user?username=sensor." + mine + "&password=" + sensorSecret)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(get.statusCode()).as("the broker is set to POST, so a password is never in a URL").isIn(401, 403);
        assertThat(get.body()).doesNotContain("allow");
        assertThat(post("http://127.0.0.1:" + port, "nothing", Map.of()).statusCode()).isIn(403, 404);
    }

    private String ask(String path, Map<String, String> form) throws Exception {
        HttpResponse<String> r = post("http://127.0.0.1:" + port, path, form);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return r.body();
    }

    private static HttpResponse<String> post(String base, String path, Map<String, String> form) throws Exception {
        String body = form.entrySet().stream().map(e -> URLEncoder.encode(e.getKey(), StandardCharsets.UTF_8) + "="
                + URLEncoder.encode(e.getValue(), StandardCharsets.UTF_8)).collect(Collectors.joining("&"));
        return HTTP.send(HttpRequest.newBuilder(URI.create(base + "/broker-auth/" + path))
                .header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private String call(java.util.function.Consumer<Exchange> check, Map<String, String> fields) {
        Exchange exchange = new DefaultExchange(camel);
        fields.forEach((k, v) -> exchange.getMessage().setHeader(k, v));
        check.accept(exchange);
        return exchange.getMessage().getBody(String.class);
    }

    private static Map<String, String> resource(String user, String resource, String name, String permission) {
        Map<String, String> m = new LinkedHashMap<>(Map.of("username", user, "vhost", "/", "resource", resource,
                "name", name, "permission", permission));
        return m;
    }

    private static Map<String, String> topic(String user, String exchange, String permission, String key) {
        Map<String, String> m = resource(user, "topic", exchange, permission);
        m.put("routing_key", key);
        return m;
    }

    private double refused(String check) {
        var c = meters.find("lockwatch.devices.refused").tag("check", check).counter();
        return c == null ? 0 : c.count();
    }
}
