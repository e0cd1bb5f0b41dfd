package io.lockwatch.adapters;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import com.fasterxml.jackson.databind.JsonNode;
import io.lockwatch.notify.WebhookReceiver;
import io.lockwatch.testing.Api;
import io.lockwatch.testing.Api.Answer;
import io.lockwatch.testing.NetworkBroker;
import org.apache.camel.test.spring.junit5.CamelSpringBootTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The networks' adapters (issue 57) against a broker standing in for the networks' own ({@link NetworkAdaptersTest}:
 * a Moquette of the test's own on the embedded default, away while the service starts; {@code NetworkAdaptersIT}:
 * Debian's Mosquitto, with a user, beside RabbitMQ, PostgreSQL and ClickHouse), in the networks' own message shapes
 * (src/test/resources/adapters/README.md says where each comes from). Zigbee2MQTT: read by the sensor's profile, the
 * built-in one and an operator's; a device reports for the sensor registered with it and no other; a health value
 * out of range is left out and the door still counts; the broker away and back; the API's rules for a profile and a
 * device id. ChirpStack: a frame heard by two gateways read once with the better signal, a frame sent again a
 * duplicate, frames out of order applied in the order they were sent, a device that joined again counting from 0,
 * and a Milesight contact's battery and mount alarming. The Things Stack: the same of its uplinks, by its session key
 * and a counter it leaves out when 0. Shelly: a Door/Window's state and battery on topics of their own.
 */
@CamelSpringBootTest
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "lockwatch.adapters.zigbee2mqtt.enabled=true",
        "lockwatch.adapters.zigbee2mqtt.client-id=lockwatch-adapter-test",
        "lockwatch.adapters.chirpstack.enabled=true",
        "lockwatch.adapters.chirpstack.client-id=lockwatch-chirpstack-test",
        "lockwatch.adapters.the-things-stack.enabled=true",
        "lockwatch.adapters.the-things-stack.client-id=lockwatch-tts-test",
        "lockwatch.adapters.shelly.enabled=true",
        "lockwatch.adapters.shelly.client-id=lockwatch-shelly-test",
        // an operator's profile: a Zigbee lock whose lock_state says LOCK or UNLOCK
        "lockwatch.profiles.zigbee-lock.adapter=zigbee2mqtt",
        "lockwatch.profiles.zigbee-lock.door-field=lock_state",
        "lockwatch.profiles.zigbee-lock.closed-when=locked",
        "lockwatch.profiles.zigbee-lock.open-when=unlocked",
        "lockwatch.profiles.zigbee-lock.battery-field=battery"})
public abstract class NetworkAdaptersContract {

    /** One per test class: a static extension field here would be one for all the subclasses, closed after the first. */
    static WebhookReceiver receiver;

    @BeforeAll
    static void openTheReceiver() throws Exception {
        receiver = new WebhookReceiver();
    }

    @AfterAll
    static void closeTheReceiver() {
        receiver.close();
    }

    /** The network's broker of the subclass. */
    abstract NetworkBroker broker();

    @Autowired JdbcTemplate jdbc;
    @LocalServerPort int port;
    Api api;

    @Autowired org.apache.camel.CamelContext camel;

    /** The broker there (after the context started, for the embedded one), and the adapter subscribed to it. */
    @BeforeEach
    void brokerAndAdapter() throws Exception {
        api = new Api(port, Duration.ofSeconds(30));
        broker().up();
        // connected, and so subscribed (again, after a test took the broker away and back: a new session)
        try {
            await().atMost(Duration.ofSeconds(30)).until(() -> zigbee2mqtt.connected() && chirpstack.connected()
                    && theThingsStack.connected() && shelly.connected());
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            throw new AssertionError("adapters connected: zigbee2mqtt " + zigbee2mqtt.connected() + ", chirpstack "
                    + chirpstack.connected() + ", the-things-stack " + theThingsStack.connected() + ", shelly "
                    + shelly.connected(), e);
        }
    }

    @Autowired Zigbee2MqttAdapter zigbee2mqtt;
    @Autowired ChirpStackAdapter chirpstack;
    @Autowired TheThingsStackAdapter theThingsStack;
    @Autowired ShellyAdapter shelly;

    // --- ChirpStack

    @Test
    void aLoRaWanFrameIsReadOnceInTheOrderItWasSentAndARejoinedDeviceCountsAgain() throws Exception {
        String devEui = devEui();
        String s = sensor("dragino-lds02", devEui);
        java.time.Instant t = java.time.Instant.now().minusSeconds(120).truncatedTo(java.time.temporal.ChronoUnit.MILLIS);

        // opened, heard by two gateways: one event, the better gateway's signal kept
        // (ChirpStack's codecs' numbers come as doubles: 1.0)
        broker().publish(uplink(devEui), chirpStack(t, devEui, "01ab2f5c", 11, "dragino-lds02",
                "{\"DOOR_OPEN_STATUS\":1.0,\"BAT_V\":3.05,\"ALARM\":0.0}"));
        await().atMost(Duration.ofSeconds(15)).until(() -> state(s) != null && state(s) == 0);
        JsonNode health = sensorBody(s).get("health");
        assertThat(health.get("rssi").asInt()).isEqualTo(-86);
        assertThat(health.get("snr").asDouble()).isEqualTo(9.8);
        assertThat(health.get("battery").asDouble()).as("3.05 V: full, past the profile's 3.0 V").isEqualTo(100);

        // the same frame sent again (a confirmed uplink's retry): a duplicate, even if it said otherwise
        broker().publish(uplink(devEui), chirpStack(t.plusSeconds(2), devEui, "01ab2f5c", 11, "dragino-lds02",
                "{\"DOOR_OPEN_STATUS\":0.0}"));
        // a later frame, closed, then an earlier one arriving after it (open): the earlier one is stale
        broker().publish(uplink(devEui), chirpStack(t.plusSeconds(20), devEui, "01ab2f5c", 13, "dragino-lds02",
                "{\"DOOR_OPEN_STATUS\":0.0,\"BAT_V\":2.7}"));
        broker().publish(uplink(devEui), chirpStack(t.plusSeconds(10), devEui, "01ab2f5c", 12, "dragino-lds02",
                "{\"DOOR_OPEN_STATUS\":1.0}"));
        // an uplink without a decoded object (no codec): no reading
        broker().publish(uplink(devEui), chirpStack(t.plusSeconds(25), devEui, "01ab2f5c", 14, "dragino-lds02", "null"));
        // joined again: a new session address, its counter from 0 again, here at 13 already: new frames, not repeats
        broker().publish(uplink(devEui), chirpStack(t.plusSeconds(30), devEui, "0177e001", 13, "dragino-lds02",
                "{\"DOOR_OPEN_STATUS\":1.0}"));
        await().atMost(Duration.ofSeconds(15)).until(() -> types(s).size() == 3);
        assertThat(state(s)).isEqualTo(0);
        assertThat(jdbc.queryForList("SELECT state FROM sensor_events WHERE sensor_id = ? ORDER BY sequence", Integer.class, s))
                .as("open, closed (frame 13), open again after the rejoin").containsExactly(0, 1, 0);
        // closed by frame 13, not by frame 11 sent again (whose 'closed' was a duplicate's, never applied)
        assertThat(jdbc.queryForObject("SELECT occurred_at FROM sensor_events WHERE sensor_id = ? AND sequence = 2",
                java.sql.Timestamp.class, s).toInstant()).isEqualTo(t.plusSeconds(20));
        assertThat(jdbc.queryForObject("SELECT state_changed_at FROM sensor_state WHERE sensor_id = ?",
                java.sql.Timestamp.class, s).toInstant()).isEqualTo(t.plusSeconds(30));
        // frame 13's 2.7 V, halfway between the profile's 2.4 V (spent) and 3.0 V (new)
        assertThat(sensorBody(s).at("/health/battery").asDouble()).isEqualTo(50);
    }

    @Test
    void aMilesightContactSaysItsBatteryAndItsMountThroughChirpStack() throws Exception {
        String devEui = devEui();
        String s = sensor("milesight-ws301", devEui);
        // Milesight's codec of numbers (as ChirpStack gives them, doubles), then its ChirpStack v4 codec of words
        broker().publish(uplink(devEui), chirpStack(java.time.Instant.now().minusSeconds(5), devEui, "00aa11bb", 1,
                "milesight-ws301", "{\"battery\":15.0,\"magnet_status\":1.0,\"tamper_status\":1.0}"));
        await().atMost(Duration.ofSeconds(15)).until(() -> types(s).containsAll(List.of("sensor.battery_low", "sensor.tampered")));
        assertThat(state(s)).isEqualTo(0);
        broker().publish(uplink(devEui), chirpStack(java.time.Instant.now().minusSeconds(1), devEui, "00aa11bb", 2,
                "milesight-ws301", "{\"battery\":15.0,\"magnet_status\":\"close\",\"tamper_status\":\"installed\"}"));
        await().atMost(Duration.ofSeconds(15)).until(() -> types(s).contains("sensor.tamper_cleared"));
        assertThat(state(s)).isEqualTo(1);
    }

    // --- The Things Stack

    @Test
    void aTheThingsStackUplinkIsReadOnceInTheOrderItWasSentAndANewSessionCountsAgain() throws Exception {
        String devEui = devEui();
        String s = sensor("dragino-lds02", devEui.toUpperCase()); // as its label prints it
        String topic = "v3/lockwatch-doors@ttn/devices/dock-door-" + devEui + "/up";
        java.time.Instant t = java.time.Instant.now().minusSeconds(120).truncatedTo(java.time.temporal.ChronoUnit.MILLIS);

        // the session's first frame (f_cnt 0, which The Things Stack leaves out), opened, heard by two gateways
        broker().publish(topic, theThingsStack(t, devEui, "AXA50tHUGUucuzS/bCGMNw==", 0, "AQ==",
                "{\"DOOR_OPEN_STATUS\":1,\"BAT_V\":3.05}"));
        await().atMost(Duration.ofSeconds(15)).until(() -> state(s) != null && state(s) == 0);
        JsonNode health = sensorBody(s).get("health");
        assertThat(health.get("rssi").asInt()).as("the better gateway's").isEqualTo(-79);
        assertThat(health.get("snr").asDouble()).isEqualTo(8.5);

        // the same frame again (a reconnection's repeat): a duplicate, whatever it says
        broker().publish(topic, theThingsStack(t.plusSeconds(2), devEui, "AXA50tHUGUucuzS/bCGMNw==", 0, "AQ==",
                "{\"DOOR_OPEN_STATUS\":0}"));
        // frame 2 (closed), then frame 1 (open) arriving after it: stale
        broker().publish(topic, theThingsStack(t.plusSeconds(20), devEui, "AXA50tHUGUucuzS/bCGMNw==", 2, "AA==",
                "{\"DOOR_OPEN_STATUS\":0}"));
        broker().publish(topic, theThingsStack(t.plusSeconds(10), devEui, "AXA50tHUGUucuzS/bCGMNw==", 1, "AQ==",
                "{\"DOOR_OPEN_STATUS\":1}"));
        // joined again: a new session, its counter from 0 again; its first frame, open, is new
        broker().publish(topic, theThingsStack(t.plusSeconds(30), devEui, "BbB61uIVHVvdv0T/cDHNxA==", 0, "AQ==",
                "{\"DOOR_OPEN_STATUS\":1}"));
        await().atMost(Duration.ofSeconds(15)).until(() -> types(s).size() == 3);
        assertThat(jdbc.queryForList("SELECT state FROM sensor_events WHERE sensor_id = ? ORDER BY sequence", Integer.class, s))
                .as("open, closed (frame 2), open again after the rejoin").containsExactly(0, 1, 0);
        assertThat(jdbc.queryForObject("SELECT occurred_at FROM sensor_events WHERE sensor_id = ? AND sequence = 2",
                java.sql.Timestamp.class, s).toInstant()).isEqualTo(t.plusSeconds(20));
    }

    /**
     * The stack's webhook: the same uplinks over HTTP, held to the sensors of the lockwatch gateway whose credential
     * it sends (the stack signs nothing); a forged credential refused, another gateway's sensor refused, another
     * device's uplink accepted with nothing in it.
     */
    @Test
    void theThingsStacksWebhookReportsForTheSensorsOfTheGatewayWhoseCredentialItHolds() throws Exception {
        String devEui = devEui(), otherEui = devEui();
        String s = sensor("dragino-lds02", devEui);
        String other = sensor("dragino-lds02", otherEui);
        String gw = "tts" + suffix();
        assertThat(api.call("POST", "/gateways", Api.ADMIN, Map.of("id", gw, "sensors", List.of(s))).status()).isEqualTo(201);
        String secret = api.call("POST", "/gateways/" + gw + "/credentials", Api.ADMIN, null).body().get("secret").asText();
        java.time.Instant t = java.time.Instant.now().minusSeconds(30).truncatedTo(java.time.temporal.ChronoUnit.MILLIS);

        java.net.http.HttpResponse<String> opened = webhook("gateway." + gw, secret,
                theThingsStack(t, devEui, "AXA50tHUGUucuzS/bCGMNw==", 3, "AQ==", "{\"DOOR_OPEN_STATUS\":1}"));
        assertThat(opened.statusCode()).as(opened.body()).isEqualTo(202);
        assertThat(opened.body()).contains("\"accepted\":1");
        await().atMost(Duration.ofSeconds(15)).until(() -> state(s) != null && state(s) == 0);

        // the same uplink again (the stack's retry): accepted, and a duplicate
        assertThat(webhook("gateway." + gw, secret, theThingsStack(t, devEui, "AXA50tHUGUucuzS/bCGMNw==", 3, "AQ==",
                "{\"DOOR_OPEN_STATUS\":1}")).statusCode()).isEqualTo(202);
        // a forged credential, and a sensor that is not the gateway's
        assertThat(webhook("gateway." + gw, "lwd_forged", theThingsStack(t.plusSeconds(5), devEui,
                "AXA50tHUGUucuzS/bCGMNw==", 4, "AA==", "{\"DOOR_OPEN_STATUS\":0}")).statusCode()).isEqualTo(401);
        java.net.http.HttpResponse<String> theirs = webhook("gateway." + gw, secret, theThingsStack(t, otherEui,
                "AXA50tHUGUucuzS/bCGMNw==", 1, "AQ==", "{\"DOOR_OPEN_STATUS\":1}"));
        assertThat(theirs.statusCode()).as(theirs.body()).isEqualTo(403);
        // a device no sensor names: nothing to read, no failure for the stack to count
        java.net.http.HttpResponse<String> unknown = webhook("gateway." + gw, secret, theThingsStack(t, devEui(),
                "AXA50tHUGUucuzS/bCGMNw==", 1, "AQ==", "{\"DOOR_OPEN_STATUS\":1}"));
        assertThat(unknown.statusCode()).isEqualTo(202);
        assertThat(unknown.body()).contains("\"accepted\":0");

        // a reading ingest would refuse (a Network Server whose clock says 1971) is refused here, with its reason
        java.net.http.HttpResponse<String> early = webhook("gateway." + gw, secret, theThingsStack(
                java.time.Instant.parse("1971-03-01T00:00:00Z"), devEui, "AXA50tHUGUucuzS/bCGMNw==", 4, "AA==",
                "{\"DOOR_OPEN_STATUS\":0}"));
        assertThat(early.statusCode()).as(early.body()).isEqualTo(400);
        assertThat(early.body()).contains("no valid reading");
        assertThat(webhook("gateway." + gw, secret, theThingsStack(t.plusSeconds(10), devEui, "AXA50tHUGUucuzS/bCGMNw==", 5,
                "AA==", "{\"DOOR_OPEN_STATUS\":0}")).statusCode()).isEqualTo(202);
        await().atMost(Duration.ofSeconds(15)).until(() -> state(s) == 1);
        assertThat(types(s)).containsExactly("sensor.state_changed", "sensor.state_changed");
        assertThat(state(other)).as("never applied").isNull();
    }

    private java.net.http.HttpResponse<String> webhook(String login, String secret, String body) throws Exception {
        return java.net.http.HttpClient.newHttpClient().send(java.net.http.HttpRequest.newBuilder(
                        java.net.URI.create("http://127.0.0.1:" + port + "/api/v1/adapters/the-things-stack/uplinks"))
                .header("Authorization", "Basic " + java.util.Base64.getEncoder().encodeToString(
                        (login + ":" + secret).getBytes(java.nio.charset.StandardCharsets.UTF_8)))
                .header("Content-Type", "application/json")
                .POST(java.net.http.HttpRequest.BodyPublishers.ofString(body)).build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
    }

    /** The Things Stack's uplink message (src/test/resources/adapters/the-things-stack-uplink.json) with these values. */
    private static String theThingsStack(java.time.Instant time, String devEui, String session, int fCnt, String payload,
                                         String decoded) throws Exception {
        try (java.io.InputStream in = NetworkAdaptersContract.class.getResourceAsStream("/adapters/the-things-stack-uplink.json")) {
            return new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).replace("%TIME%", time.toString())
                    .replace("%AS_TIME%", time.plusMillis(230).toString())
                    .replace("%DEVEUI%", devEui.toUpperCase()).replace("%DEVADDR%", "260B1C2D")
                    .replace("%SESSION%", session).replace("%FCNT%", fCnt == 0 ? "" : "\"f_cnt\": " + fCnt + ",")
                    .replace("%PAYLOAD%", payload).replace("%DECODED%", decoded);
        }
    }

    // --- Shelly

    @Test
    void aShellyDoorWindowSaysItsStateAndBatteryOnTopicsOfTheirOwn() throws Exception {
        String device = "shellydw2-" + suffix().toUpperCase();
        String s = sensor("shelly-door-window", device);

        // a wake-up: its values one topic each, the battery before the door
        broker().publish("shellies/" + device + "/sensor/battery", "12");
        broker().publish("shellies/" + device + "/sensor/lux", "34");
        broker().publish("shellies/" + device + "/sensor/state", "open");
        await().atMost(Duration.ofSeconds(15)).until(() -> types(s).contains("sensor.battery_low"));
        assertThat(state(s)).isEqualTo(0);
        assertThat(sensorBody(s).at("/health/battery").asDouble()).isEqualTo(12);

        // closed, then a device no sensor names, and a value that is no door
        broker().publish("shellies/" + device + "/sensor/state", "close");
        broker().publish("shellies/shellydw2-000000000000/sensor/state", "open");
        broker().publish("shellies/" + device + "/sensor/state", "unknown");
        await().atMost(Duration.ofSeconds(15)).until(() -> state(s) == 1);
        assertThat(types(s)).containsExactly("sensor.state_changed", "sensor.battery_low", "sensor.state_changed");
    }

    private static String devEui() {
        return UUID.randomUUID().toString().replace("-", "").substring(0, 16);
    }

    private static String uplink(String devEui) {
        return "application/17c82e96-be03-4f38-aef3-f83d48582d97/device/" + devEui + "/event/up";
    }

    /** ChirpStack's uplink event (src/test/resources/adapters/chirpstack-uplink.json) with these values. */
    private static String chirpStack(java.time.Instant time, String devEui, String devAddr, int fCnt, String profile,
                                     String object) throws Exception {
        try (java.io.InputStream in = NetworkAdaptersContract.class.getResourceAsStream("/adapters/chirpstack-uplink.json")) {
            return new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).replace("%TIME%", time.toString())
                    .replace("%DEVEUI%", devEui).replace("%DEVADDR%", devAddr).replace("%FCNT%", String.valueOf(fCnt))
                    .replace("%PROFILE%", profile).replace("%OBJECT%", object);
        }
    }

    @Test
    void aContactSensorsMessagesAreItsReadingsWithItsHealth() throws Exception {
        String device = "hall/front_door_" + suffix();
        String s = sensor("zigbee2mqtt", device);
        String client = api.client(receiver, "/z2m");
        api.link(client, s);

        // Zigbee2MQTT's message of an Aqara contact sensor opened: contact false is open
        broker().publish("zigbee2mqtt/" + device, "{\"battery\":9,\"contact\":false,\"linkquality\":120,\"voltage\":2900}");
        await().atMost(Duration.ofSeconds(15)).until(() -> state(s) != null && state(s) == 0);
        await().atMost(Duration.ofSeconds(15)).until(() -> receiver.at("/z2m").size() >= 2);
        List<JsonNode> heard = Api.bodies(receiver, "/z2m");
        assertThat(heard.get(0).get("type").asText()).isEqualTo("sensor.state_changed");
        assertThat(heard.get(0).get("state").asInt()).isEqualTo(0);
        // its battery kept, and low: its alarm raised
        assertThat(heard.get(1).get("type").asText()).isEqualTo("sensor.battery_low");
        assertThat(sensorBody(s).at("/health/battery").asDouble()).isEqualTo(9);

        // the same state again (Zigbee2MQTT publishes the whole state on every message): a repeat, nobody told
        broker().publish("zigbee2mqtt/" + device, "{\"battery\":9,\"contact\":false,\"linkquality\":96}");
        // closed, the cover off, a battery out of range left out: the door still counts
        broker().publish("zigbee2mqtt/" + device, "{\"battery\":250,\"contact\":true,\"tamper\":true}");
        await().atMost(Duration.ofSeconds(15)).until(() -> state(s) == 1);
        await().atMost(Duration.ofSeconds(15)).until(() -> types(s).contains("sensor.tampered"));
        assertThat(sensorBody(s).at("/health/battery").asDouble()).isEqualTo(9);
        assertThat(types(s)).containsExactly("sensor.state_changed", "sensor.battery_low", "sensor.state_changed",
                "sensor.tampered");
    }

    @Test
    void aDeviceReportsOnlyForTheSensorRegisteredWithIt() throws Exception {
        // a sensor whose id is the friendly name, but which names no profile: Zigbee2MQTT's broker speaks not for it
        String bare = "Z" + suffix();
        assertThat(api.call("POST", "/sensors", Api.ADMIN, Map.of("id", bare, "address", "Cellar")).status()).isEqualTo(201);
        broker().publish("zigbee2mqtt/" + bare, "{\"contact\":false}");
        // other devices and the bridge's own messages are no readings either
        broker().publish("zigbee2mqtt/kitchen_light", "{\"state\":\"ON\",\"brightness\":254}");
        broker().publish("zigbee2mqtt/bridge/state", "{\"state\":\"online\"}");
        broker().publish("zigbee2mqtt/" + bare, "not json");

        // an operator's profile, a lock: after the messages above, in the adapter's order
        String lock = sensor("zigbee-lock", "back_door_" + suffix());
        String lockDevice = jdbc.queryForObject("SELECT device_id FROM sensors WHERE id = ?", String.class, lock);
        broker().publish("zigbee2mqtt/" + lockDevice, "{\"lock_state\":\"unlocked\",\"battery\":80}");
        await().atMost(Duration.ofSeconds(15)).until(() -> state(lock) != null && state(lock) == 0);
        broker().publish("zigbee2mqtt/" + lockDevice, "{\"lock_state\":\"not_fully_locked\"}");
        broker().publish("zigbee2mqtt/" + lockDevice, "{\"lock_state\":\"locked\"}");
        await().atMost(Duration.ofSeconds(15)).until(() -> state(lock) == 1);
        assertThat(types(lock)).as("not_fully_locked is neither").containsExactly("sensor.state_changed", "sensor.state_changed");
        assertThat(state(bare)).as("never heard from").isNull();
    }

    @Test
    void readingsResumeWhenTheNetworksBrokerComesBack() throws Exception {
        String device = "porch_" + suffix();
        String s = sensor("zigbee2mqtt", device);
        broker().publish("zigbee2mqtt/" + device, "{\"contact\":true}");
        await().atMost(Duration.ofSeconds(15)).until(() -> state(s) != null && state(s) == 1);

        broker().down();
        broker().up();
        // reconnected (Paho's automatic reconnection, its subscription with it): the next message counts
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(500)).until(() -> {
            broker().publish("zigbee2mqtt/" + device, "{\"contact\":false}");
            return state(s) == 0;
        });
        assertThat(types(s)).containsExactly("sensor.state_changed", "sensor.state_changed");
    }

    @Test
    void aSensorNamesAKnownProfileAndItsDeviceTogetherAndOneSensorPerDevice() throws Exception {
        String id = "P" + suffix();
        Answer unknown = api.call("POST", "/sensors", Api.ADMIN, Map.of("id", id, "address", "a", "profile", "zwave",
                "device_id", "x"));
        assertThat(unknown.status()).isEqualTo(400);
        assertThat(unknown.body().get("field").asText()).isEqualTo("profile");
        Answer alone = api.call("POST", "/sensors", Api.ADMIN, Map.of("id", id, "address", "a", "profile", "zigbee2mqtt"));
        assertThat(alone.status()).isEqualTo(400);
        assertThat(alone.body().get("field").asText()).isEqualTo("device_id");

        String device = "window_" + suffix();
        String first = sensor("zigbee2mqtt", device);
        Answer twice = api.call("POST", "/sensors", Api.ADMIN, Map.of("id", id, "address", "a", "profile", "zigbee2mqtt",
                "device_id", device));
        assertThat(twice.status()).as(String.valueOf(twice.body())).isEqualTo(409);
        assertThat(twice.body().get("detail").asText()).contains(device);

        // moved to another sensor: the old one gives it up first, then the device reports for the new one
        assertThat(api.call("POST", "/sensors", Api.ADMIN, Map.of("id", id, "address", "a")).status()).isEqualTo(201);
        java.util.Map<String, Object> none = new java.util.HashMap<>();
        none.put("profile", null);
        none.put("device_id", null);
        assertThat(api.call("PUT", "/sensors/" + first, Api.ADMIN, none).status()).isEqualTo(200);
        Answer half = api.call("PUT", "/sensors/" + id, Api.ADMIN, Map.of("device_id", device));
        assertThat(half.status()).isEqualTo(400);
        Answer moved = api.call("PUT", "/sensors/" + id, Api.ADMIN, Map.of("profile", "zigbee2mqtt", "device_id", device));
        assertThat(moved.status()).as(String.valueOf(moved.body())).isEqualTo(200);
        assertThat(moved.body().get("device_id").asText()).isEqualTo(device);
        broker().publish("zigbee2mqtt/" + device, "{\"contact\":true}");
        await().atMost(Duration.ofSeconds(15)).until(() -> state(id) != null && state(id) == 1);
        assertThat(state(first)).isNull();
    }

    private String sensor(String profile, String device) throws Exception {
        String id = "Z" + suffix();
        Answer created = api.call("POST", "/sensors", Api.ADMIN, Map.of("id", id, "address", "Hall", "profile", profile,
                "device_id", device));
        assertThat(created.status()).as(String.valueOf(created.body())).isEqualTo(201);
        assertThat(created.body().get("profile").asText()).isEqualTo(profile);
        return id;
    }

    private static String suffix() {
        return UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    }

    private JsonNode sensorBody(String id) throws Exception {
        return api.call("GET", "/sensors/" + id, Api.READER, null).body();
    }

    private Integer state(String id) {
        return jdbc.queryForObject("SELECT state FROM sensor_state WHERE sensor_id = ?", Integer.class, id);
    }

    private List<String> types(String sensor) {
        return jdbc.queryForList("SELECT type FROM sensor_events WHERE sensor_id = ? ORDER BY sequence", String.class, sensor);
    }
}
