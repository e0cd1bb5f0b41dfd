package io.lockwatch.notify;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.camel.test.spring.junit5.CamelSpringBootTest;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.annotation.DirtiesContext;

/**
 * Batched delivery (a client's {@code max_events_per_request} above 1) against a real HTTP receiver: the requests'
 * shape and signature, the order of a sensor's events across requests, and that a request's answer counts for every
 * event in it. Each lane is fixed at two requests in flight, so a backlog takes several requests.
 */
@CamelSpringBootTest
@SpringBootTest(properties = {
        "lockwatch.notify.max-concurrent=8",
        "lockwatch.notify.lane.min-concurrency=2",
        "lockwatch.notify.lane.initial-concurrency=2",
        "lockwatch.notify.lane.max-concurrency=2",
        "lockwatch.notify.poll-interval=200",
        "lockwatch.notify.retry-schedule=1s",
        "lockwatch.notify.timeout=3s",
        "lockwatch.notify.connect-timeout=1s"})
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
class BatchedDeliveryTest {

    static final ObjectMapper JSON = new ObjectMapper();

    @org.junit.jupiter.api.extension.RegisterExtension
    static final WebhookReceiver receiver = WebhookReceiver.forTheClass();

    @Autowired JdbcTemplate jdbc;
    @Autowired ClaimWakeUp wakeUps;
    @Autowired TestPing ping;

    /**
     * 25 sensors with one event each, and one with two: every event arrives once, in signed arrays of at most ten,
     * each request with a webhook-id of its own; no request holds two events of one sensor, and the sensor's second
     * event comes in a request after the one that brought its first.
     */
    @Test
    void aBacklogGoesInSignedArraysOfAtMostItsBatchAndASensorsEventsInOrder() throws Exception {
        String path = "/batched-" + UUID.randomUUID();
        String secret = WebhookSigner.newSecret();
        UUID client = client(path, secret, 10);
        OutboxRows rows = new OutboxRows(jdbc);
        Set<String> expected = new HashSet<>();
        for (int i = 0; i < 25; i++) {
            expected.add(later(rows, client, rows.sensor(client), 1));
        }
        String twice = rows.sensor(client);
        String first = later(rows, client, twice, 1);
        String second = later(rows, client, twice, 2);
        expected.addAll(List.of(first, second));
        dueNow(client);

        wakeUps.wakeUp();

        await().atMost(Duration.ofSeconds(30)).until(() -> events(receiver.at(path)).size() == expected.size());
        List<WebhookReceiver.Received> requests = receiver.at(path);
        Map<String, Integer> requestOfEvent = new HashMap<>();
        for (int r = 0; r < requests.size(); r++) {
            WebhookReceiver.Received request = requests.get(r);
            assertThat(WebhookReceiver.signatureValid(request, secret)).as("signed with the client's secret").isTrue();
            JsonNode body = JSON.readTree(request.body());
            assertThat(body.isArray()).as("a batch is a JSON array: %s", request.body()).isTrue();
            assertThat(body.size()).isBetween(1, 10);
            Set<String> sensors = new HashSet<>();
            for (JsonNode event : body) {
                assertThat(event.get("type").asText()).isEqualTo("sensor.state_changed");
                assertThat(event.get("client_id").asText()).isEqualTo(client.toString());
                assertThat(event.has("occurred_at") && event.has("sequence") && event.has("state")).isTrue();
                assertThat(sensors.add(event.get("sensor_id").asText())).as("one event of a sensor per request").isTrue();
                requestOfEvent.put(event.get("id").asText(), r);
            }
        }
        assertThat(events(requests)).as("every event once").hasSize(expected.size())
                .containsExactlyInAnyOrderElementsOf(expected);
        assertThat(requests).extracting(r -> r.header("webhook-id")).doesNotHaveDuplicates()
                .doesNotContainAnyElementsOf(expected);
        assertThat(requestOfEvent.get(first)).as("the sensor's first event came in an earlier request than its second")
                .isLessThan(requestOfEvent.get(second));
        // the 26 heads in two full requests and one of 6, the second event of a sensor in that one or one of its own
        assertThat(requests.size()).as("%d events in requests of up to 10", expected.size()).isBetween(3, 4);
        await().atMost(Duration.ofSeconds(10)).until(() -> jdbc.queryForObject(
                "SELECT count(*) FROM notifications WHERE client_id = ? AND status = 'delivered'", Integer.class, client)
                == expected.size());
    }

    /**
     * The endpoint fails the first request: every event in it failed, and is delivered later once, in a request
     * answered 2xx; each was attempted twice.
     */
    @Test
    void aBatchIsDeliveredWholeOrFailsWhole() throws Exception {
        String path = "/all-or-nothing-" + UUID.randomUUID();
        receiver.answer(path, 503);
        UUID client = client(path, WebhookSigner.newSecret(), 5);
        OutboxRows rows = new OutboxRows(jdbc);
        Set<String> expected = new HashSet<>();
        for (int i = 0; i < 5; i++) {
            expected.add(later(rows, client, rows.sensor(client), 1));
        }
        dueNow(client);

        wakeUps.wakeUp();
        await().atMost(Duration.ofSeconds(10)).until(() -> !receiver.at(path).isEmpty());
        receiver.answer(path, 200);

        await().atMost(Duration.ofSeconds(30)).until(() -> jdbc.queryForObject(
                "SELECT count(*) FROM notifications WHERE client_id = ? AND status = 'delivered'", Integer.class, client)
                == expected.size());
        List<WebhookReceiver.Received> requests = receiver.at(path);
        List<String> failed = events(requests.subList(0, 1));
        assertThat(failed).as("the failed request held the whole batch").containsExactlyInAnyOrderElementsOf(expected);
        assertThat(events(requests.subList(1, requests.size()))).as("each delivered once after")
                .containsExactlyInAnyOrderElementsOf(expected);
        assertThat(jdbc.queryForList("SELECT attempts FROM notifications WHERE client_id = ?", Integer.class, client))
                .as("each attempted twice: failed with its batch, then delivered").containsOnly(2);
        assertThat(jdbc.queryForList("""
                SELECT a.status_code FROM delivery_attempts a JOIN notifications n ON n.id = a.notification_id
                 WHERE n.client_id = ? ORDER BY a.attempted_at, a.status_code DESC""", Integer.class, client))
                .as("the attempts recorded, each with its request's answer")
                .containsExactly(503, 503, 503, 503, 503, 200, 200, 200, 200, 200);
    }

    /** A client that takes arrays gets its test ping as an array of one, signed: what its webhooks will look like. */
    @Test
    void aTestPingToAClientThatBatchesIsAnArrayOfOne() throws Exception {
        String path = "/ping-batched-" + UUID.randomUUID();
        String secret = WebhookSigner.newSecret();
        UUID client = client(path, secret, 10);

        TestPing.Result result = ping.send(client);

        assertThat(result.statusCode()).isEqualTo(200);
        WebhookReceiver.Received request = receiver.at(path).get(0);
        assertThat(WebhookReceiver.signatureValid(request, secret)).isTrue();
        JsonNode body = JSON.readTree(request.body());
        assertThat(body.isArray()).as("an array, as every body to this client: %s", request.body()).isTrue();
        assertThat(body).hasSize(1);
        assertThat(body.get(0).get("type").asText()).isEqualTo("webhook.test");
        assertThat(body.get(0).get("id").asText()).isEqualTo(request.header("webhook-id"));
    }

    /** A pending notification due in an hour: none is claimed by the poll while the test writes the others. */
    private static String later(OutboxRows rows, UUID client, String sensor, long sequence) {
        return rows.notification(client, sensor, sequence, "pending", 0, null, "now() + interval '1 hour'").toString();
    }

    /** The client's notifications all due at once, as a backlog is when its endpoint comes back. */
    private void dueNow(UUID client) {
        jdbc.update("UPDATE notifications SET next_attempt_at = now() WHERE client_id = ?", client);
    }

    private UUID client(String path, String secret, int maxEventsPerRequest) {
        return jdbc.queryForObject("""
                INSERT INTO clients (name, url, webhook_secret, max_events_per_request) VALUES ('batched', ?, ?, ?)
                RETURNING id""", UUID.class, receiver.url(path), secret, maxEventsPerRequest);
    }

    /** The events' ids in the requests' arrays, in arrival order. */
    private static List<String> events(List<WebhookReceiver.Received> requests) throws Exception {
        List<String> ids = new ArrayList<>();
        for (WebhookReceiver.Received r : requests) {
            for (JsonNode event : JSON.readTree(r.body())) {
                ids.add(event.get("id").asText());
            }
        }
        return ids;
    }
}
