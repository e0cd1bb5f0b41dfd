package io.lockwatch.alarms;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.lockwatch.ingest.IngestProperties;
import io.lockwatch.notify.WebhookReceiver;
import io.lockwatch.testing.Api;
import io.lockwatch.testing.Api.Answer;
import io.lockwatch.testing.Readings;
import org.apache.camel.CamelContext;
import org.apache.camel.builder.NotifyBuilder;
import org.apache.camel.test.spring.junit5.CamelSpringBootTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Open-door alarms on the embedded default, with a scan every half second: sensors get thresholds of a second or
 * two of their own, and readings measured in the past, so that no test waits out a threshold it does not need to.
 * The default threshold is an hour, which no test reaches.
 */
@CamelSpringBootTest
// the tests' scan batch is small (src/test/resources/config/application.yaml): 2,000 doors due at once take several
// transactions
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = "lockwatch.alarms.open-after=1h")
class AlarmRouteTest {

    @RegisterExtension
    static final WebhookReceiver receiver = WebhookReceiver.forTheClass();

    static final ObjectMapper JSON = new ObjectMapper();

    @Autowired RabbitTemplate rabbit;
    @Autowired JdbcTemplate jdbc;
    @Autowired IngestProperties ingest;
    @Autowired AlarmScan alarms;
    @Autowired CamelContext camel;
    @LocalServerPort int port;

    @Test
    void aDoorOpenPastItsThresholdRaisesOneAlarmAtItsDeadlineWhichALostConnectionDoesNotClear() {
        // due half a second ago; silent past its 5 s heartbeat timeout three and a half seconds from now
        String s = sensor(1, 5);
        long opened = System.currentTimeMillis() - 1_500;
        publish(s, 0, opened);

        await().atMost(Duration.ofSeconds(15)).until(() -> events(s).contains("2:sensor.alarm_raised"));
        Map<String, Object> alarm = alarmOf(s);
        assertThat(alarm.get("opened_ms")).isEqualTo(opened);
        assertThat(alarm.get("raised_ms")).isEqualTo(opened + 1_000);
        assertThat(alarm.get("threshold_seconds")).isEqualTo(1);

        // the door stays open: a repeat (written, as its last-seen time moved) and more scans raise nothing more
        publish(s, 0, opened + 500);
        assertThat(scans(4).matches(10, TimeUnit.SECONDS)).isTrue();
        // then silent: lost, and the alarm stays
        await().atMost(Duration.ofSeconds(20)).until(() -> events(s).contains("3:sensor.connection_lost"));
        assertThat(scans(2).matches(10, TimeUnit.SECONDS)).isTrue();
        assertThat(events(s)).containsExactly("1:sensor.state_changed", "2:sensor.alarm_raised", "3:sensor.connection_lost");
        assertThat(jdbc.queryForObject("SELECT count(*) FROM alarms WHERE sensor_id = ? AND cleared_at IS NULL",
                Integer.class, s)).isEqualTo(1);
    }

    @Test
    void aDoorClosedInTimeRaisesNothing() {
        // due a second from now, closed a second ago
        String s = sensor(3, null);
        long t = System.currentTimeMillis() - 2_000;
        Readings.publishInOrder(rabbit, ingest.exchange(), List.of(Readings.reading(s, 0, t), Readings.reading(s, 1, t + 1_000)));

        NotifyBuilder pastTheThreshold = scans(10); // 5 s of scans, past the 3 s threshold
        assertThat(pastTheThreshold.matches(20, TimeUnit.SECONDS)).isTrue();

        assertThat(events(s)).containsExactly("1:sensor.state_changed", "2:sensor.state_changed");
        assertThat(jdbc.queryForObject("SELECT count(*) FROM alarms WHERE sensor_id = ?", Integer.class, s)).isZero();
    }

    @Test
    void closingClearsTheAlarmWithHowLongTheDoorWasOpenAndTheNextOpeningRaisesItsOwn() {
        String s = sensor(1, null);
        long opened = System.currentTimeMillis() - 20_000;
        publish(s, 0, opened);
        await().atMost(Duration.ofSeconds(15)).until(() -> events(s).contains("2:sensor.alarm_raised"));

        long closed = opened + 12_500;
        publish(s, 1, closed);

        await().atMost(Duration.ofSeconds(15)).until(() -> events(s).contains("4:sensor.alarm_cleared"));
        Map<String, Object> alarm = alarmOf(s);
        assertThat(alarm.get("cleared_ms")).isEqualTo(closed);
        assertThat(jdbc.queryForObject("SELECT occurred_at = cleared_at FROM sensor_events e JOIN alarms a ON a.id = e.alarm_id "
                + "WHERE e.sensor_id = ? AND e.type = 'sensor.alarm_cleared'", Boolean.class, s)).isTrue();

        // opened again: a new opening, a new alarm
        publish(s, 0, closed + 1_000);
        await().atMost(Duration.ofSeconds(15)).until(() -> events(s).contains("6:sensor.alarm_raised"));
        assertThat(events(s)).containsExactly("1:sensor.state_changed", "2:sensor.alarm_raised",
                "3:sensor.state_changed", "4:sensor.alarm_cleared", "5:sensor.state_changed", "6:sensor.alarm_raised");
        assertThat(jdbc.queryForObject("SELECT count(*) FROM alarms WHERE sensor_id = ?", Integer.class, s)).isEqualTo(2);
    }

    @Test
    void anAlarmIsListedAndAcknowledgedOnceByAnOperator() throws Exception {
        String s = sensor(1, null);
        publish(s, 0, System.currentTimeMillis() - 10_000);
        await().atMost(Duration.ofSeconds(15)).until(() -> events(s).contains("2:sensor.alarm_raised"));

        JsonNode page = call("GET", "/alarms?active=true&sensor_id=" + s, "test-read-token", null).body();
        assertThat(page.get("items")).hasSize(1);
        JsonNode listed = page.get("items").get(0);
        assertThat(listed.get("type").asText()).isEqualTo("door_open_too_long");
        assertThat(listed.get("active").asBoolean()).isTrue();
        assertThat(listed.get("open_seconds").isNull()).isTrue();
        String id = listed.get("id").asText();

        assertThat(call("POST", "/alarms/" + id + "/acknowledge", "test-read-token", Map.of("by", "ops")).status()).isEqualTo(403);
        Answer acknowledged = call("POST", "/alarms/" + id + "/acknowledge", "test-admin-token",
                Map.of("by", "Anna (night shift)", "comment", "door propped open for a delivery"));
        assertThat(acknowledged.status()).isEqualTo(200);
        assertThat(acknowledged.body().get("acknowledged_by").asText()).isEqualTo("Anna (night shift)");
        assertThat(acknowledged.body().get("comment").asText()).isEqualTo("door propped open for a delivery");
        assertThat(acknowledged.body().get("acknowledged_at").asText()).isNotBlank();
        assertThat(call("POST", "/alarms/" + id + "/acknowledge", "test-admin-token", Map.of("by", "Ben")).status()).isEqualTo(409);
        assertThat(call("POST", "/alarms/" + id + "/acknowledge", "test-admin-token", Map.of()).status()).isEqualTo(400);
        assertThat(call("GET", "/alarms/" + UUID.randomUUID(), "test-read-token", null).status()).isEqualTo(404);
        assertThat(call("GET", "/alarms/" + id, "test-read-token", null).body().get("acknowledged_by").asText())
                .isEqualTo("Anna (night shift)");
        assertThat(call("GET", "/alarms?active=false&sensor_id=" + s, "test-read-token", null).body().get("items")).isEmpty();
    }

    @Test
    void eachClientHearsTheAlarmEventsItAskedForWithTheAlarmInTheBody() throws Exception {
        String s = sensor(1, null);
        String wantsAlarms = client("/alarms", List.of("sensor.alarm_raised", "sensor.alarm_cleared"));
        String wantsChanges = client("/changes", List.of("sensor.state_changed"));
        link(wantsAlarms, s);
        link(wantsChanges, s);
        long opened = System.currentTimeMillis() - 10_000;
        publish(s, 0, opened);
        await().atMost(Duration.ofSeconds(15)).until(() -> events(s).contains("2:sensor.alarm_raised"));
        publish(s, 1, System.currentTimeMillis());

        await().atMost(Duration.ofSeconds(20)).until(() -> receiver.at("/alarms").size() == 2 && receiver.at("/changes").size() == 2);
        List<JsonNode> alarmsHeard = bodies("/alarms");
        assertThat(alarmsHeard).extracting(b -> b.get("type").asText())
                .containsExactly("sensor.alarm_raised", "sensor.alarm_cleared");
        assertThat(alarmsHeard.get(0).get("alarm").get("type").asText()).isEqualTo("door_open_too_long");
        assertThat(alarmsHeard.get(0).get("alarm").get("cleared_at").isNull()).isTrue();
        assertThat(alarmsHeard.get(1).get("alarm").get("id")).isEqualTo(alarmsHeard.get(0).get("alarm").get("id"));
        assertThat(alarmsHeard.get(1).get("alarm").get("open_seconds").asDouble()).isGreaterThan(9.0);
        assertThat(bodies("/changes")).extracting(b -> b.get("type").asText())
                .containsExactly("sensor.state_changed", "sensor.state_changed");
        assertThat(bodies("/changes")).allSatisfy(b -> assertThat(b.has("alarm")).isFalse());
    }

    @Test
    void aSensorWithoutAThresholdOfItsOwnFollowsTheDefault() {
        String s = sensor(null, null);
        long opened = System.currentTimeMillis() - 10_000;
        publish(s, 0, opened);

        await().atMost(Duration.ofSeconds(10)).until(() -> events(s).size() == 1);
        await().atMost(Duration.ofSeconds(10)).until(() -> dueMillis(s) != null);
        assertThat(dueMillis(s)).isEqualTo(opened + 3_600_000);
    }

    @Test
    void scansRunningAtOnceRaiseEachAlarmOnceAndTheApiPagesThroughThem() throws Exception {
        // 2,000 doors open for an hour, their alarms due half an hour ago
        String prefix = "A" + UUID.randomUUID().toString().replace("-", "").substring(0, 6);
        jdbc.update("INSERT INTO sensors (id, address, open_alarm_seconds) "
                + "SELECT ? || lpad(g::text, 5, '0'), 'bulk', 1800 FROM generate_series(1, 2000) g", prefix);
        jdbc.update("""
                UPDATE sensor_state SET state = 0, sequence = 1, connectivity = 'online',
                       state_changed_at = now() - interval '1 hour', last_seen_at = now(),
                       lost_deadline = now() + interval '1 hour', alarm_due_at = now() - interval '30 minutes'
                 WHERE sensor_id LIKE ?""", prefix + "%");

        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<Integer>> scans = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                scans.add(pool.submit((Callable<Integer>) alarms::scan));
            }
            for (Future<Integer> f : scans) {
                f.get();
            }
        } finally {
            pool.shutdown();
        }

        assertThat(jdbc.queryForObject("SELECT count(*) FROM alarms WHERE sensor_id LIKE ?", Integer.class, prefix + "%"))
                .isEqualTo(2000);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM sensor_events WHERE sensor_id LIKE ? AND type = 'sensor.alarm_raised'",
                Integer.class, prefix + "%")).isEqualTo(2000);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM sensor_state WHERE sensor_id LIKE ? AND alarm_due_at IS NULL AND sequence = 2",
                Integer.class, prefix + "%")).isEqualTo(2000);

        // and the API pages through them all, newest raised first, each once
        List<String> ids = new ArrayList<>();
        List<String> raisedAt = new ArrayList<>();
        String cursor = null;
        do {
            JsonNode page = call("GET", "/alarms?limit=700" + (cursor == null ? "" : "&cursor=" + cursor), "test-read-token", null).body();
            for (JsonNode a : page.get("items")) {
                if (a.get("sensor_id").asText().startsWith(prefix)) {
                    ids.add(a.get("id").asText());
                }
                raisedAt.add(a.get("raised_at").asText());
            }
            cursor = page.get("next_cursor").isNull() ? null : page.get("next_cursor").asText();
        } while (cursor != null);
        assertThat(ids).hasSize(2000).doesNotHaveDuplicates();
        assertThat(raisedAt.stream().map(java.time.Instant::parse).toList())
                .isSortedAccordingTo(java.util.Comparator.reverseOrder());
    }

    private Answer call(String method, String path, String token, Object body) throws Exception {
        return new Api(port).call(method, path, token, body);
    }

    private String client(String path, List<String> eventTypes) throws Exception {
        return new Api(port).client(receiver, path, Map.of("name", "alarm test", "event_types", eventTypes));
    }

    private void link(String client, String sensor) throws Exception {
        new Api(port).link(client, sensor);
    }

    private List<JsonNode> bodies(String path) throws Exception {
        return Api.bodies(receiver, path);
    }

    /** Completes after the next {@code n} alarm scans. */
    private NotifyBuilder scans(int n) {
        return new NotifyBuilder(camel).fromRoute("alarms-are-raised-cleared-and-escalated").whenCompleted(n).create();
    }

    private String sensor(Integer openAlarmSeconds, Integer heartbeatSeconds) {
        String id = "A" + UUID.randomUUID().toString().replace("-", "").substring(0, 15);
        jdbc.update("INSERT INTO sensors (id, address, open_alarm_seconds, heartbeat_timeout_seconds) VALUES (?, 'door', ?, ?)",
                id, openAlarmSeconds, heartbeatSeconds);
        return id;
    }

    private void publish(String sensor, int data, long ts) {
        rabbit.send(ingest.exchange(), sensor, Readings.reading(sensor, data, ts));
    }

    private List<String> events(String sensor) {
        return jdbc.queryForList("SELECT sequence || ':' || type FROM sensor_events WHERE sensor_id = ? ORDER BY sequence",
                String.class, sensor);
    }

    private Long dueMillis(String sensor) {
        return jdbc.queryForObject("SELECT (extract(epoch FROM alarm_due_at) * 1000)::bigint FROM sensor_state WHERE sensor_id = ?",
                Long.class, sensor);
    }

    private Map<String, Object> alarmOf(String sensor) {
        return jdbc.queryForMap("""
                SELECT (extract(epoch FROM opened_at) * 1000)::bigint AS opened_ms,
                       (extract(epoch FROM raised_at) * 1000)::bigint AS raised_ms,
                       (extract(epoch FROM cleared_at) * 1000)::bigint AS cleared_ms, threshold_seconds
                  FROM alarms WHERE sensor_id = ? ORDER BY opened_at DESC LIMIT 1""", sensor);
    }
}
