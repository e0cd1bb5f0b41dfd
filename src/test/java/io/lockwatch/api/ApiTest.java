package io.lockwatch.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.camel.CamelContext;
import org.apache.camel.test.spring.junit5.CamelSpringBootTest;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Every operation of openapi.yaml over HTTP on the embedded default: success, validation failures (400
 * problem+json naming the field), no or a wrong token (401), a read-only token writing (403), 404 and 409.
 */
@CamelSpringBootTest
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ApiTest {

    static final String ADMIN = "test-admin-token", ADMIN2 = "test-admin-token-2", READER = "test-read-token";
    static final ObjectMapper JSON = new ObjectMapper();
    static final HttpClient HTTP = HttpClient.newHttpClient();

    @LocalServerPort int port;
    @Autowired JdbcTemplate jdbc;
    @Autowired CamelContext camel;

    record Answer(int status, String contentType, JsonNode body) {
    }

    // --- sensors

    @Test
    void sensorsAreRegisteredReadListedChangedAndDeleted() throws Exception {
        String id = sensorId();
        Answer created = call("POST", "/sensors", ADMIN, Map.of("id", id, "address", "Moscow, Russia, Svobody st. 23 fl 1 room 16"));
        assertThat(created.status()).isEqualTo(201);
        assertThat(created.body().get("connectivity").asText()).isEqualTo("unknown");
        assertThat(created.body().get("state").isNull()).isTrue();

        assertThat(call("GET", "/sensors/" + id, READER, null).body().get("address").asText()).startsWith("Moscow");
        Answer changed = call("PUT", "/sensors/" + id, ADMIN2, Map.of("address", "Room 2", "heartbeat_timeout_seconds", 120));
        assertThat(changed.status()).isEqualTo(200);
        assertThat(changed.body().get("heartbeat_timeout_seconds").asInt()).isEqualTo(120);
        assertThat(call("GET", "/sensors?limit=1000", READER, null).body().get("items").findValuesAsText("id")).contains(id);
        assertThat(call("GET", "/sensors?connectivity=lost", READER, null).body().get("items").findValuesAsText("id")).doesNotContain(id);
        // the batteries to change: a sensor whose device said 15 % is listed at 15 or more, not below, nor one never said
        String silent = sensorId();
        assertThat(call("POST", "/sensors", ADMIN, Map.of("id", silent, "address", "Cellar")).status()).isEqualTo(201);
        jdbc.update("INSERT INTO sensor_health (sensor_id, battery, battery_at) VALUES (?, 15, now())", id);
        assertThat(call("GET", "/sensors?battery_at_most=15&limit=1000", READER, null).body().get("items").findValuesAsText("id"))
                .contains(id).doesNotContain(silent);
        assertThat(call("GET", "/sensors?battery_at_most=14&limit=1000", READER, null).body().get("items").findValuesAsText("id"))
                .doesNotContain(id);
        assertProblem(call("GET", "/sensors?battery_at_most=101", READER, null), 400, "battery_at_most");

        assertThat(call("DELETE", "/sensors/" + id, ADMIN, null).status()).isEqualTo(204);
        assertProblem(call("GET", "/sensors/" + id, ADMIN, null), 404, null);
        assertProblem(call("DELETE", "/sensors/" + id, ADMIN, null), 404, null);
        assertProblem(call("PUT", "/sensors/" + id, ADMIN, Map.of("address", "x")), 404, null);
    }

    @Test
    void sensorsArePagedById() throws Exception {
        for (int i = 0; i < 3; i++) {
            call("POST", "/sensors", ADMIN, Map.of("id", "Page" + i + UUID.randomUUID().toString().substring(0, 6), "address", "x"));
        }
        List<String> all = new ArrayList<>();
        String cursor = null;
        do {
            Answer page = call("GET", "/sensors?limit=2" + (cursor == null ? "" : "&cursor=" + cursor), READER, null);
            assertThat(page.status()).isEqualTo(200);
            all.addAll(page.body().get("items").findValuesAsText("id"));
            cursor = page.body().get("next_cursor").isNull() ? null : page.body().get("next_cursor").asText();
        } while (cursor != null);
        assertThat(all).isSorted().doesNotHaveDuplicates().hasSizeGreaterThanOrEqualTo(3);
    }

    @Test
    void badSensorsAreRefusedNamingTheField() throws Exception {
        assertProblem(call("POST", "/sensors", ADMIN, Map.of("id", "no-dashes", "address", "x")), 400, "id");
        assertProblem(call("POST", "/sensors", ADMIN, Map.of("id", "0123456789aBcDeFX", "address", "x")), 400, "id");
        assertProblem(call("POST", "/sensors", ADMIN, Map.of("id", "Ok1")), 400, null);
        assertProblem(call("POST", "/sensors", ADMIN, Map.of("id", "Ok1", "address", "x", "colour", "red")), 400, null);
        assertProblem(call("POST", "/sensors", ADMIN, Map.of("id", "Ok1", "address", "x", "heartbeat_timeout_seconds", 0)), 400,
                "heartbeat_timeout_seconds");
        assertProblem(call("POST", "/sensors", ADMIN, Map.of("id", 42, "address", "x")), 400, "id");
        assertProblem(raw("POST", "/sensors", ADMIN, "{not json"), 400, null);
        assertProblem(call("GET", "/sensors?limit=0", ADMIN, null), 400, "limit");
        assertProblem(call("GET", "/sensors?connectivity=maybe", ADMIN, null), 400, "connectivity");
        assertProblem(call("PUT", "/sensors/Ok1", ADMIN, Map.of()), 400, null);
        // what the contract cannot say, the request's model does: text is not blank
        assertProblem(call("POST", "/sensors", ADMIN, Map.of("id", "Ok1", "address", "   ")), 400, "address");
    }

    @Test
    void aSensorIdIsRegisteredOnce() throws Exception {
        String id = sensorId();
        call("POST", "/sensors", ADMIN, Map.of("id", id, "address", "x"));

        assertProblem(call("POST", "/sensors", ADMIN, Map.of("id", id, "address", "y")), 409, null);
    }

    /**
     * Issue 54: a sensor deleted and registered again under its id is a new sensor, whose state starts empty and
     * whose events go on with the id's numbering. The first reading repeats the old registration's last state: what
     * ingest holds in memory of the old one must not take it for a repeat.
     */
    @Test
    void aSensorDeletedAndRegisteredAgainStartsEmptyAndItsEventsGoOnWithTheIdsNumbering() throws Exception {
        String id = sensorId();
        long ts = System.currentTimeMillis() - 60_000;
        call("POST", "/sensors", ADMIN, Map.of("id", id, "address", "Room 1"));
        call("POST", "/readings", ADMIN, Map.of("sensor_id", id, "data", 1, "ts", ts));
        await().atMost(Duration.ofSeconds(10)).until(() -> call("GET", "/sensors/" + id, READER, null).body().get("sequence").asInt() == 1);

        assertThat(call("DELETE", "/sensors/" + id, ADMIN, null).status()).isEqualTo(204);
        Answer again = call("POST", "/sensors", ADMIN, Map.of("id", id, "address", "Room 1, the new sensor"));
        assertThat(again.status()).isEqualTo(201);
        assertThat(again.body().get("state").isNull()).as("a new sensor's state starts empty").isTrue();
        assertThat(again.body().get("connectivity").asText()).isEqualTo("unknown");
        assertThat(again.body().get("sequence").asInt()).as("the last number the id gave an event").isEqualTo(1);

        assertThat(call("POST", "/readings", ADMIN, Map.of("sensor_id", id, "data", 1, "ts", ts + 1000)).status()).isEqualTo(202);
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            JsonNode sensor = call("GET", "/sensors/" + id, READER, null).body();
            assertThat(sensor.get("state").asText()).isEqualTo("1");
            assertThat(sensor.get("sequence").asInt()).isEqualTo(2);
        });
        call("POST", "/readings", ADMIN, Map.of("sensor_id", id, "data", 0, "ts", ts + 2000));
        await().atMost(Duration.ofSeconds(10)).until(() -> call("GET", "/sensors/" + id, READER, null).body().get("sequence").asInt() == 3);

        // the old registration's event stays history, and no number is given twice
        assertThat(jdbc.query("SELECT sequence || ':' || coalesce(previous_state::text, 'null') || '->' || state"
                        + " FROM sensor_events WHERE sensor_id = ? ORDER BY sequence", (rs, i) -> rs.getString(1), id))
                .containsExactly("1:null->1", "2:null->1", "3:1->0");
    }

    // --- clients and links

    @Test
    void clientsAreRegisteredWithASecretShownOnlyOnCreateAndRotate() throws Exception {
        Answer created = call("POST", "/clients", ADMIN, Map.of("name", "Acme", "url", "http://127.0.0.1:9/hook"));
        assertThat(created.status()).isEqualTo(201);
        String id = created.body().get("id").asText();
        String secret = created.body().get("webhook_secret").asText();
        assertThat(secret).startsWith("whsec_");

        Answer read = call("GET", "/clients/" + id, READER, null);
        assertThat(read.body().get("name").asText()).isEqualTo("Acme");
        assertThat(read.body().has("webhook_secret")).isFalse();
        assertThat(call("GET", "/clients?limit=1000", READER, null).body().toString()).doesNotContain(secret).contains(id);

        Answer rotated = call("POST", "/clients/" + id + "/secret", ADMIN, null);
        assertThat(rotated.status()).isEqualTo(200);
        assertThat(rotated.body().get("webhook_secret").asText()).startsWith("whsec_").isNotEqualTo(secret);

        Answer changed = call("PUT", "/clients/" + id, ADMIN, Map.of("url", "https://127.0.0.1:8443/other"));
        assertThat(changed.body().get("url").asText()).isEqualTo("https://127.0.0.1:8443/other");
        assertThat(call("DELETE", "/clients/" + id, ADMIN, null).status()).isEqualTo(204);
        assertProblem(call("GET", "/clients/" + id, ADMIN, null), 404, null);
        assertProblem(call("POST", "/clients/" + id + "/secret", ADMIN, null), 404, null);
        assertProblem(call("GET", "/clients/" + UUID.randomUUID(), ADMIN, null), 404, null);
    }

    @Test
    void aClientsDeliveryModeAndEventTypesAreSetAndItIsPausedAndResumed() throws Exception {
        Answer created = call("POST", "/clients", ADMIN, Map.of("name", "Modes", "url", "http://127.0.0.1:9/m",
                "delivery_mode", "latest_state", "event_types", List.of("sensor.connection_lost")));
        assertThat(created.status()).as("%s", created.body()).isEqualTo(201);
        assertThat(created.body().get("delivery_mode").asText()).isEqualTo("latest_state");
        assertThat(created.body().get("event_types").toString()).isEqualTo("[\"sensor.connection_lost\"]");
        assertThat(created.body().get("enabled").asBoolean()).isTrue();
        assertThat(created.body().get("max_events_per_request").asInt()).as("one event per request unless asked").isEqualTo(1);
        String id = created.body().get("id").asText();

        Answer batched = call("PUT", "/clients/" + id, ADMIN, Map.of("max_events_per_request", 100));
        assertThat(batched.status()).as("%s", batched.body()).isEqualTo(200);
        assertThat(batched.body().get("max_events_per_request").asInt()).isEqualTo(100);
        assertThat(batched.body().get("delivery_mode").asText()).as("the rest left as it was").isEqualTo("latest_state");

        Map<String, Object> allTypes = new java.util.HashMap<>();
        allTypes.put("event_types", null);
        allTypes.put("delivery_mode", "every_event");
        Answer changed = call("PUT", "/clients/" + id, ADMIN, allTypes);
        assertThat(changed.status()).as("%s", changed.body()).isEqualTo(200);
        assertThat(changed.body().get("event_types").isNull()).isTrue();
        assertThat(changed.body().get("delivery_mode").asText()).isEqualTo("every_event");

        Answer paused = call("PUT", "/clients/" + id, ADMIN, Map.of("enabled", false));
        assertThat(paused.body().get("enabled").asBoolean()).isFalse();
        assertThat(paused.body().get("paused_reason").asText()).isEqualTo("paused by an operator");
        assertThat(paused.body().get("paused_at").isNull()).isFalse();
        Answer resumed = call("PUT", "/clients/" + id, ADMIN, Map.of("enabled", true));
        assertThat(resumed.body().get("enabled").asBoolean()).isTrue();
        assertThat(resumed.body().get("paused_reason").isNull()).isTrue();
        assertThat(call("GET", "/clients/" + id, READER, null).body().get("enabled").asBoolean()).isTrue();

        Answer pausedFromTheStart = call("POST", "/clients", ADMIN, Map.of("name", "P", "url", "http://127.0.0.1:9/p",
                "enabled", false));
        assertThat(pausedFromTheStart.body().get("enabled").asBoolean()).isFalse();
        assertThat(pausedFromTheStart.body().get("webhook_secret").asText()).startsWith("whsec_");
    }

    @Test
    void aClientIsPingedItsDeliveryStatsReadAndItsNotificationsReplayed() throws Exception {
        String id = call("POST", "/clients", ADMIN, Map.of("name", "Ping", "url", "http://127.0.0.1:9/ping")).body().get("id").asText();
        Answer ping = call("POST", "/clients/" + id + "/test", ADMIN, null);
        assertThat(ping.status()).as("%s", ping.body()).isEqualTo(200);
        assertThat(ping.body().get("delivered").asBoolean()).isFalse();
        assertThat(ping.body().get("status_code").isNull()).as("port 9 refuses: no answer").isTrue();
        assertThat(ping.body().get("error").asText()).isNotBlank();
        assertProblem(call("POST", "/clients/" + id + "/test", READER, null), 403, null);
        assertProblem(call("POST", "/clients/" + UUID.randomUUID() + "/test", ADMIN, null), 404, null);

        Answer stats = call("GET", "/clients/" + id + "/delivery-stats", READER, null);
        assertThat(stats.status()).as("%s", stats.body()).isEqualTo(200);
        assertThat(stats.body().get("circuit").asText()).isEqualTo("closed");
        assertThat(stats.body().get("last_day").get("delivered").asLong()).isZero();
        assertThat(stats.body().get("enabled").asBoolean()).isTrue();
        assertProblem(call("GET", "/clients/" + UUID.randomUUID() + "/delivery-stats", READER, null), 404, null);

        Answer replayed = call("POST", "/clients/" + id + "/notifications/replay", ADMIN,
                Map.of("since", java.time.Instant.now().minus(java.time.Duration.ofDays(6)).toString()));
        assertThat(replayed.status()).as("%s", replayed.body()).isEqualTo(200);
        assertThat(replayed.body().get("replayed").asInt()).isZero();
        assertProblem(call("POST", "/clients/" + id + "/notifications/replay", ADMIN, Map.of("since", "yesterday")), 400, "since");
        // a replay's backlog goes to the client ahead of its live events: at most lockwatch.notify.replay-max-age back
        Answer tooOld = call("POST", "/clients/" + id + "/notifications/replay", ADMIN, Map.of("since", "1970-01-01T00:00:00Z"));
        assertProblem(tooOld, 400, "since");
        assertThat(tooOld.body().get("detail").asText()).contains("7 days").contains("lockwatch.notify.replay-max-age");
        assertProblem(call("POST", "/clients/" + UUID.randomUUID() + "/notifications/replay", ADMIN,
                Map.of("since", java.time.Instant.now().minusSeconds(60).toString())), 404, null);
    }

    @Test
    void badClientsAreRefusedNamingTheField() throws Exception {
        assertProblem(call("POST", "/clients", ADMIN, Map.of("name", "x", "url", "ftp://example.org/")), 400, "url");
        assertProblem(call("POST", "/clients", ADMIN, Map.of("name", "", "url", "http://127.0.0.1/")), 400, "name");
        assertProblem(call("POST", "/clients", ADMIN, Map.of("url", "http://127.0.0.1/")), 400, null);
        assertProblem(call("POST", "/clients", ADMIN, Map.of("name", "x", "url", "http://127.0.0.1/", "delivery_mode", "some")),
                400, "delivery_mode");
        assertProblem(call("POST", "/clients", ADMIN, Map.of("name", "x", "url", "http://127.0.0.1/",
                "event_types", List.of("sensor.exploded"))), 400, "event_types[0]");
        assertProblem(call("POST", "/clients", ADMIN, Map.of("name", "x", "url", "http://127.0.0.1/",
                "event_types", List.of())), 400, "event_types");
        assertProblem(call("POST", "/clients", ADMIN, Map.of("name", "x", "url", "http://127.0.0.1/", "enabled", "no")),
                400, "enabled");
        assertProblem(call("POST", "/clients", ADMIN, Map.of("name", "x", "url", "http://127.0.0.1/",
                "event_types", List.of("sensor.state_changed", "sensor.state_changed"))), 400, "event_types");
        assertProblem(call("POST", "/clients", ADMIN, Map.of("name", " \t ", "url", "http://127.0.0.1/")), 400, "name");
        assertProblem(call("POST", "/clients", ADMIN, Map.of("name", "x", "url", "http://127.0.0.1/",
                "max_events_per_request", 0)), 400, "max_events_per_request");
        assertProblem(call("POST", "/clients", ADMIN, Map.of("name", "x", "url", "http://127.0.0.1/",
                "max_events_per_request", 1001)), 400, "max_events_per_request");
        assertProblem(call("PUT", "/clients/" + UUID.randomUUID(), ADMIN, Map.of()), 400, null);
    }

    @Test
    void linksAreIdempotentAndListedBothWays() throws Exception {
        String sensor = sensorId();
        call("POST", "/sensors", ADMIN, Map.of("id", sensor, "address", "x"));
        String client = call("POST", "/clients", ADMIN, Map.of("name", "L", "url", "http://127.0.0.1:9/l")).body().get("id").asText();

        assertThat(call("PUT", "/clients/" + client + "/sensors/" + sensor, ADMIN, null).status()).isEqualTo(204);
        assertThat(call("PUT", "/clients/" + client + "/sensors/" + sensor, ADMIN, null).status()).isEqualTo(204);
        assertThat(call("GET", "/clients/" + client + "/sensors", READER, null).body().get("items").findValuesAsText("id"))
                .containsExactly(sensor);
        assertThat(call("GET", "/sensors/" + sensor + "/clients", READER, null).body().get("items").findValuesAsText("id"))
                .containsExactly(client);

        assertThat(call("DELETE", "/clients/" + client + "/sensors/" + sensor, ADMIN, null).status()).isEqualTo(204);
        assertProblem(call("DELETE", "/clients/" + client + "/sensors/" + sensor, ADMIN, null), 404, null);
        assertProblem(call("PUT", "/clients/" + client + "/sensors/Nobody" + sensor.substring(0, 5), ADMIN, null), 404, null);
        assertProblem(call("GET", "/sensors/Z" + sensor.substring(1) + "/clients", ADMIN, null), 404, null);
    }

    // --- readings, history, notifications

    @Test
    void readingsPostedOverHttpFlowIntoStateHistoryAndNotifications() throws Exception {
        String sensor = sensorId();
        call("POST", "/sensors", ADMIN, Map.of("id", sensor, "address", "x"));
        String client = call("POST", "/clients", ADMIN, Map.of("name", "N", "url", "http://127.0.0.1:9/n")).body().get("id").asText();
        call("PUT", "/clients/" + client + "/sensors/" + sensor, ADMIN, null);
        long ts = System.currentTimeMillis() - 5000;

        Answer accepted = call("POST", "/readings", ADMIN, List.of(
                Map.of("sensor_id", sensor, "data", 1, "ts", ts), Map.of("sensor_id", sensor, "data", 0, "ts", ts + 1000)));
        assertThat(accepted.status()).isEqualTo(202);
        assertThat(accepted.body().get("accepted").asInt()).isEqualTo(2);

        await().atMost(Duration.ofSeconds(10)).until(() -> call("GET", "/sensors/" + sensor, READER, null).body().get("sequence").asInt() == 2);
        await().atMost(Duration.ofSeconds(10)).until(() ->
                call("GET", "/sensors/" + sensor + "/readings", READER, null).body().get("items").size() == 2);
        // times with an offset, percent-encoded as HTTP clients send them (%3A, %2B)
        String from = java.net.URLEncoder.encode(java.time.OffsetDateTime.ofInstant(java.time.Instant.ofEpochMilli(ts - 60_000),
                java.time.ZoneOffset.ofHours(2)).toString(), java.nio.charset.StandardCharsets.UTF_8);
        Answer encoded = call("GET", "/sensors/" + sensor + "/readings?from=" + from, READER, null);
        assertThat(encoded.status()).as("%s", encoded.body()).isEqualTo(200);
        assertThat(encoded.body().get("items").size()).isEqualTo(2);
        Answer events = call("GET", "/sensors/" + sensor + "/events?limit=1", READER, null);
        assertThat(events.body().get("items").get(0).get("sequence").asInt()).isEqualTo(2);
        assertThat(call("GET", "/sensors/" + sensor + "/events?cursor=" + events.body().get("next_cursor").asText(), READER, null)
                .body().get("items").get(0).get("sequence").asInt()).isEqualTo(1);
        Answer stats = call("GET", "/sensors/" + sensor + "/stats", READER, null);
        assertThat(stats.body().get("items").get(0).get("state_changes").asInt()).isEqualTo(2);
        assertThat(call("GET", "/clients/" + client + "/stats", READER, null).body().get("items").get(0).get("state_changes").asInt())
                .isEqualTo(2);

        // port 9 refuses: the notification is pending with a failed attempt, then can be seen with it
        await().atMost(Duration.ofSeconds(10)).until(() ->
                call("GET", "/notifications?client_id=" + client, READER, null).body().get("items").size() >= 1);
        // the newest change's: posted after the older one, which is superseded once its first attempt failed
        JsonNode n = null;
        for (JsonNode item : call("GET", "/notifications?client_id=" + client + "&sensor_id=" + sensor, READER, null).body().get("items")) {
            if (item.get("sequence").asInt() == 2) {
                n = item;
            }
        }
        assertThat(n).isNotNull();
        JsonNode newest = n;
        // paged newest first: a page of one, then the next one by its cursor
        JsonNode first = call("GET", "/notifications?limit=1&client_id=" + client, READER, null).body();
        assertThat(first.get("items")).hasSize(1);
        JsonNode second = call("GET", "/notifications?limit=1&client_id=" + client + "&cursor="
                + first.get("next_cursor").asText(), READER, null).body();
        assertThat(second.get("items")).hasSize(1);
        assertThat(second.get("items").get(0).get("id").asText()).isNotEqualTo(first.get("items").get(0).get("id").asText());
        assertThat(java.time.Instant.parse(second.get("items").get(0).get("created_at").asText()))
                .isBeforeOrEqualTo(java.time.Instant.parse(first.get("items").get(0).get("created_at").asText()));
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            // (an assertion, not a null: the wait goes on until the first failed attempt has collapsed the queue)
            JsonNode older = call("GET", "/notifications?client_id=" + client + "&sensor_id=" + sensor + "&status=superseded",
                    READER, null).body().get("items").path(0);
            assertThat(older.isMissingNode()).as("a superseded notification of " + sensor).isFalse();
            assertThat(older.get("sequence").asInt()).isEqualTo(1);
            assertThat(older.get("superseded_by").asText()).isEqualTo(newest.get("id").asText());
            assertThat(older.get("superseded_reason").asText()).isEqualTo("failing");
        });
        await().atMost(Duration.ofSeconds(10)).until(() ->
                call("GET", "/notifications/" + newest.get("id").asText(), READER, null).body().get("attempts_made").size() >= 1);
        assertProblem(call("POST", "/notifications/" + n.get("id").asText() + "/redeliver", ADMIN, null), 409, null);
        jdbc.update("UPDATE notifications SET status = 'dead' WHERE id = ?::uuid", n.get("id").asText());
        Answer redelivered = call("POST", "/notifications/" + n.get("id").asText() + "/redeliver", ADMIN, null);
        assertThat(redelivered.status()).isEqualTo(202);
        // due again from its first attempt (which may already be under way)
        assertThat(redelivered.body().get("attempts").asInt()).isLessThanOrEqualTo(1);
        assertThat(redelivered.body().get("status").asText()).isIn("pending", "delivering");
        jdbc.update("UPDATE notifications SET status = 'dead' WHERE client_id = ?::uuid", client);
        assertThat(call("POST", "/clients/" + client + "/notifications/redeliver", ADMIN, null).body().get("redelivered").asInt())
                .isGreaterThanOrEqualTo(1);
        assertThat(call("GET", "/notifications?status=dead&client_id=" + client, READER, null).body().get("items").size()).isZero();
        assertProblem(call("GET", "/notifications/" + UUID.randomUUID(), READER, null), 404, null);
    }

    @Test
    void badReadingsAndQueriesAreRefusedNamingTheField() throws Exception {
        assertProblem(call("POST", "/readings", ADMIN, Map.of("sensor_id", "Ok", "data", 2)), 400, "data");
        assertProblem(call("POST", "/readings", ADMIN, List.of(Map.of("sensor_id", "Ok", "data", 1), Map.of("sensor_id", "a-b", "data", 1))),
                400, "[1].sensor_id");
        assertProblem(call("POST", "/readings", ADMIN, List.of()), 400, null);
        // a time no epoch milliseconds hold: a 400 naming it, not a 500
        assertProblem(call("POST", "/readings", ADMIN, Map.of("sensor_id", "Ok", "data", 1, "ts", "+999999999-12-31T23:59:59Z")), 400, "ts");
        assertProblem(call("POST", "/readings", ADMIN, Map.of("sensor_id", "Ok", "data", 1,
                "ts", java.time.Instant.now().plusSeconds(295).toString())), 400, "ts");
        assertProblem(call("GET", "/sensors/Ok/readings?from=yesterday", READER, null), 400, "from");
        assertProblem(call("GET", "/sensors/Ok/readings?cursor=%21%21", READER, null), 400, "cursor");
        assertProblem(call("GET", "/notifications?status=lost", READER, null), 400, "status");
        assertProblem(call("GET", "/notifications?client_id=nope", READER, null), 400, "client_id");
        assertProblem(call("GET", "/notifications?sensor_id=no-dashes", READER, null), 400, "sensor_id");
        assertProblem(call("GET", "/alarms?client_id=nope", READER, null), 400, "client_id");
        assertProblem(call("GET", "/alarms?sensor_id=no-dashes", READER, null), 400, "sensor_id");
    }

    /**
     * A cursor or a time that decodes, but to a value no store can hold (issue 36): a 400 naming it, never the
     * database's "timestamp out of range" as a 500. A read token is all a caller needs to try.
     */
    @Test
    void forgedCursorsAndTimesOutOfRangeAreBadRequests() throws Exception {
        String farTime = cursor("+999999999-12-31T23:59:59Z|" + UUID.randomUUID());
        for (String path : List.of("/notifications", "/alarms")) {
            assertProblem(call("GET", path + "?cursor=" + farTime, READER, null), 400, "cursor");
            assertProblem(call("GET", path + "?cursor=" + cursor("1969-12-31T23:59:59Z|" + UUID.randomUUID()), READER, null), 400, "cursor");
            assertProblem(call("GET", path + "?cursor=" + cursor("2026-11-21T12:00:00Z|" + UUID.randomUUID() + "|x"), READER, null), 400, "cursor");
        }
        // the history's cursors: a time past every store's, a sequence that is no number, a tie-breaker of any length
        for (String kind : List.of("readings", "events")) {
            assertProblem(call("GET", "/sensors/Ok/" + kind + "?cursor=" + cursor("9223372036854775807:x"), READER, null), 400, "cursor");
            assertProblem(call("GET", "/sensors/Ok/" + kind + "?cursor=" + cursor("-1:1"), READER, null), 400, "cursor");
            assertProblem(call("GET", "/sensors/Ok/" + kind + "?cursor=" + cursor("1700000000000:" + "9".repeat(200)), READER, null), 400, "cursor");
        }
        assertProblem(call("GET", "/sensors/Ok/events?cursor=" + cursor("1700000000000:x"), READER, null), 400, "cursor");
        // a cursor in range is taken: an empty page, not a refusal
        assertThat(call("GET", "/sensors/Ok/events?cursor=" + cursor("1700000000000:5"), READER, null).status()).isEqualTo(200);
        assertThat(call("GET", "/notifications?cursor=" + cursor("2026-11-21T12:00:00Z|" + UUID.randomUUID()), READER, null).status())
                .isEqualTo(200);

        assertProblem(call("GET", "/sensors/Ok/readings?to=%2B999999999-12-31T23:59:59Z", READER, null), 400, "to");
        assertProblem(call("GET", "/sensors/Ok/events?from=1900-01-01T00:00:00Z", READER, null), 400, "from");
        assertProblem(call("GET", "/alarms?from=%2B999999999-12-31T23:59:59Z", READER, null), 400, "from");
        Answer client = call("POST", "/clients", ADMIN, Map.of("name", "replayer", "url", "http://127.0.0.1:9/hook"));
        assertProblem(call("POST", "/clients/" + client.body().get("id").asText() + "/notifications/replay", ADMIN,
                Map.of("since", "+999999999-12-31T23:59:59Z")), 400, "since");
    }

    private static String cursor(String raw) {
        return java.util.Base64.getUrlEncoder().withoutPadding().encodeToString(raw.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    /** Bytes that are no UTF-8 in a JSON body: a 400 naming the problem, never a 500 (issue 20's first finding). */
    @Test
    void aBodyThatIsNoUtf8IsABadRequest() throws Exception {
        byte[] badAddress = utf8WithInvalidBytes("{\"id\":\"" + sensorId() + "\",\"address\":\"", "\"}");
        byte[] badSensor = utf8WithInvalidBytes("{\"sensor_id\":\"", "\",\"data\":1}");

        for (Answer a : List.of(bytes("POST", "/sensors", ADMIN, badAddress), bytes("POST", "/readings", ADMIN, badSensor),
                bytes("POST", "/clients", ADMIN, utf8WithInvalidBytes("{\"name\":\"", "\",\"url\":\"https://example.com/h\"}")))) {
            assertProblem(a, 400, null);
            assertThat(a.body().get("detail").asText()).containsIgnoringCase("UTF-8");
        }
    }

    private static byte[] utf8WithInvalidBytes(String before, String after) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        out.writeBytes(before.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        out.writeBytes(new byte[] {(byte) 0xff, (byte) 0xfe});
        out.writeBytes(after.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        return out.toByteArray();
    }

    // --- security and the contract

    @Test
    void everyOperationNeedsAValidTokenAndAReadTokenOnlyReads() throws Exception {
        assertProblem(call("GET", "/sensors", null, null), 401, null);
        assertProblem(call("GET", "/sensors", "wrong-token", null), 401, null);
        assertProblem(call("POST", "/sensors", READER, Map.of("id", sensorId(), "address", "x")), 403, null);
        assertProblem(call("POST", "/readings", READER, Map.of("sensor_id", "Ok", "data", 1)), 403, null);
        assertThat(call("GET", "/sensors", READER, null).status()).isEqualTo(200);
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(base() + "/sensors"))
                .header("Authorization", "Bearer " + ADMIN).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.headers().firstValue("Authorization")).isEmpty();
    }

    @Test
    void hawtioAndJolokiaAreBehindTheTokenAndShowTheRoutes() throws Exception {
        String root = "http://127.0.0.1:" + port + "/actuator";
        String basic = "Basic " + java.util.Base64.getEncoder().encodeToString(("admin:" + READER).getBytes());
        HttpResponse<String> open = HTTP.send(HttpRequest.newBuilder(URI.create(root + "/hawtio/")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(open.statusCode()).isEqualTo(401);
        assertThat(open.headers().firstValue("WWW-Authenticate")).hasValueSatisfying(v -> assertThat(v).startsWith("Basic"));

        assertThat(HTTP.send(HttpRequest.newBuilder(URI.create(root + "/hawtio/")).header("Authorization", basic).build(),
                HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(200);
        // Jolokia, what Hawtio reads the routes' live statistics from (JMX is off in tests, so it lists no Camel beans)
        HttpResponse<String> version = HTTP.send(HttpRequest.newBuilder(URI.create(root + "/jolokia/version"))
                .header("Authorization", basic).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(version.statusCode()).isEqualTo(200);
        assertThat(version.body()).contains("\"agent\"");
        assertThat(HTTP.send(HttpRequest.newBuilder(URI.create(root + "/jolokia/version")).build(),
                HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(401);
    }

    @Test
    void unknownRoutesAre404() throws Exception {
        assertThat(call("GET", "/nothing-here", ADMIN, null).status()).isEqualTo(404);
    }

    @Test
    void theServedContractIsOpenapiYamlAndEveryOperationInItIsAnswered() throws Exception {
        JsonNode file = new ObjectMapper(new com.fasterxml.jackson.dataformat.yaml.YAMLFactory())
                .readTree(Files.readString(Path.of("openapi.yaml")));
        Answer served = call("GET", "/openapi.json", READER, null);
        assertThat(served.status()).isEqualTo(200);
        assertThat(served.contentType()).startsWith("application/json");
        assertThat(served.body()).isEqualTo(file);

        List<String> operations = new ArrayList<>();
        served.body().get("paths").fields().forEachRemaining(path -> path.getValue().fields().forEachRemaining(op -> {
            if (!op.getValue().has("operationId")) {
                return; // path-level parameters
            }
            String id = op.getValue().get("operationId").asText();
            operations.add(id);
            assertThat(camel.getRoutes().stream().anyMatch(r -> r.getEndpoint().getEndpointUri().equals("direct://" + id)))
                    .as("a route from direct:%s", id).isTrue();
            // over HTTP, with ids of the right shape that name nothing: the operation's own answer (a result or a
            // problem), never the web server's 404 for an unmapped path or a 405
            String uri = path.getKey().replace("{sensorId}", "Nobody0").replaceAll("\\{[A-Za-z]+Id}", UUID.randomUUID().toString());
            String method = op.getKey().toUpperCase(java.util.Locale.ROOT);
            Answer a;
            try {
                a = raw(method, uri, ADMIN, method.equals("POST") || method.equals("PUT") ? "{}" : null);
            } catch (IOException | InterruptedException e) {
                throw new AssertionError(e);
            }
            assertThat(a.status()).as("%s %s", method, uri).isNotIn(405, 501);
            if (a.status() >= 400) {
                assertThat(a.contentType()).as("%s %s answered %s", method, uri, a.body()).startsWith("application/problem+json");
            }
        }));
        assertThat(operations).hasSizeGreaterThanOrEqualTo(25).doesNotHaveDuplicates();
    }

    // --- devices

    @Test
    void gatewaysAreRegisteredListedChangedAndDeleted() throws Exception {
        String s1 = sensorId(), s2 = sensorId(), gw = "hall-" + UUID.randomUUID().toString().substring(0, 8);
        call("POST", "/sensors", ADMIN, Map.of("id", s1, "address", "Hall, door 1"));
        call("POST", "/sensors", ADMIN, Map.of("id", s2, "address", "Hall, door 2"));

        Answer created = call("POST", "/gateways", ADMIN, Map.of("id", gw, "description", "Hall 3", "sensors", List.of(s1)));
        assertThat(created.status()).isEqualTo(201);
        assertThat(created.body().get("login").asText()).isEqualTo("gateway." + gw);
        assertThat(JSON.convertValue(created.body().get("sensors"), List.class)).containsExactly(s1);
        assertProblem(call("POST", "/gateways", ADMIN, Map.of("id", gw, "sensors", List.of())), 409, null);
        assertProblem(call("POST", "/gateways", ADMIN, Map.of("id", "other" + gw, "sensors", List.of(s1, "Nobody0"))), 400, "sensors[1]");
        assertProblem(call("POST", "/gateways", ADMIN, Map.of("id", "gw.dot", "sensors", List.of())), 400, null);

        Answer changed = call("PUT", "/gateways/" + gw, ADMIN, Map.of("sensors", List.of(s2, s1)));
        assertThat(changed.status()).isEqualTo(200);
        assertThat(changed.body().get("sensor_count").asInt()).isEqualTo(2);
        assertThat(changed.body().get("description").asText()).as("left as it was").isEqualTo("Hall 3");
        assertThat(JSON.convertValue(call("GET", "/gateways/" + gw, READER, null).body().get("sensors"), List.class))
                .containsExactlyInAnyOrder(s1, s2);

        JsonNode listed = null;
        for (JsonNode g : call("GET", "/gateways?limit=1000", READER, null).body().get("items")) {
            if (g.get("id").asText().equals(gw)) {
                listed = g;
            }
        }
        assertThat(listed).isNotNull();
        assertThat(listed.get("sensor_count").asInt()).isEqualTo(2);
        assertThat(listed.has("sensors")).as("a listing gives the number only").isFalse();

        call("DELETE", "/sensors/" + s2, ADMIN, null);
        assertThat(call("GET", "/gateways/" + gw, READER, null).body().get("sensor_count").asInt()).isEqualTo(1);
        assertProblem(call("PUT", "/gateways/" + gw, READER, Map.of("sensors", List.of())), 403, null);
        assertThat(call("DELETE", "/gateways/" + gw, ADMIN, null).status()).isEqualTo(204);
        assertProblem(call("GET", "/gateways/" + gw, ADMIN, null), 404, null);
        assertProblem(call("PUT", "/gateways/" + gw, ADMIN, Map.of("description", "x")), 404, null);
    }

    @Test
    void aCredentialIsShownOnceKeptHashedRotatedWithAGraceAndRevoked() throws Exception {
        String sensor = sensorId();
        call("POST", "/sensors", ADMIN, Map.of("id", sensor, "address", "Front door"));
        io.lockwatch.devices.Devices devices = camel.getRegistry().findSingleByType(io.lockwatch.devices.Devices.class);

        Answer first = raw("POST", "/sensors/" + sensor + "/credentials", ADMIN, null);
        assertThat(first.status()).isEqualTo(201);
        String login = first.body().get("login").asText(), secret = first.body().get("secret").asText();
        assertThat(login).isEqualTo("sensor." + sensor);
        assertThat(secret).startsWith("lwd_").hasSize(47);
        assertThat(first.body().get("status").asText()).isEqualTo("active");
        assertThat(devices.authenticate(login, secret)).isTrue();
        assertThat(devices.authenticate(login, secret + "x")).isFalse();
        assertThat(devices.authenticate("sensor.Other1", secret)).isFalse();
        String stored = jdbc.queryForObject("SELECT secret_hash FROM device_credentials WHERE login = ?", String.class, login);
        assertThat(stored).startsWith("{pbkdf2-sha256-1000}").doesNotContain(secret).doesNotContain(secret.substring(4, 20));

        Answer second = raw("POST", "/sensors/" + sensor + "/credentials?grace_seconds=3600", ADMIN, null);
        String secret2 = second.body().get("secret").asText();
        assertThat(devices.authenticate(login, secret)).as("the old one, in its grace").isTrue();
        assertThat(devices.authenticate(login, secret2)).isTrue();
        JsonNode listed = call("GET", "/sensors/" + sensor + "/credentials", READER, null).body().get("items");
        assertThat(listed.findValuesAsText("status")).containsExactly("active", "expiring");
        assertThat(listed.findValuesAsText("secret")).as("never listed").isEmpty();
        assertThat(listed.get(1).get("expires_at").isNull()).isFalse();

        String third = raw("POST", "/sensors/" + sensor + "/credentials?grace_seconds=0", ADMIN, null).body().get("secret").asText();
        assertThat(devices.authenticate(login, secret)).as("no grace: replaced at once").isFalse();
        assertThat(devices.authenticate(login, secret2)).isFalse();
        assertThat(devices.authenticate(login, third)).isTrue();

        String newest = call("GET", "/sensors/" + sensor + "/credentials", READER, null).body().get("items").get(0).get("id").asText();
        assertThat(call("DELETE", "/sensors/" + sensor + "/credentials/" + newest, ADMIN, null).status()).isEqualTo(204);
        assertThat(devices.authenticate(login, third)).as("revoked").isFalse();
        assertThat(call("GET", "/sensors/" + sensor + "/credentials", READER, null).body().get("items").get(0).get("status").asText())
                .isEqualTo("revoked");

        assertProblem(call("DELETE", "/sensors/" + sensor + "/credentials/" + UUID.randomUUID(), ADMIN, null), 404, null);
        assertProblem(raw("POST", "/sensors/Nobody0/credentials", ADMIN, null), 404, null);
        assertProblem(raw("POST", "/sensors/" + sensor + "/credentials", READER, null), 403, null);
        assertProblem(raw("POST", "/sensors/" + sensor + "/credentials?grace_seconds=-1", ADMIN, null), 400, null);
    }

    @Test
    void aGatewaysCredentialReportsForItsSensorsOnly() throws Exception {
        String mine = sensorId(), other = sensorId(), gw = "gw" + UUID.randomUUID().toString().substring(0, 8);
        call("POST", "/sensors", ADMIN, Map.of("id", mine, "address", "x"));
        call("POST", "/sensors", ADMIN, Map.of("id", other, "address", "y"));
        call("POST", "/gateways", ADMIN, Map.of("id", gw, "sensors", List.of(mine)));
        io.lockwatch.devices.Devices devices = camel.getRegistry().findSingleByType(io.lockwatch.devices.Devices.class);
        io.lockwatch.devices.DeviceLogin login = io.lockwatch.devices.DeviceLogin.parse("gateway." + gw);
        assertThat(devices.mayReport(login, mine)).as("no credential yet").isFalse();

        Answer created = raw("POST", "/gateways/" + gw + "/credentials", ADMIN, null);
        assertThat(created.status()).isEqualTo(201);
        assertThat(devices.authenticate("gateway." + gw, created.body().get("secret").asText())).isTrue();
        assertThat(devices.mayReport(login, mine)).isTrue();
        assertThat(devices.mayReport(login, other)).isFalse();
        assertThat(devices.ownedAmong(login, List.of(mine, other))).containsExactly(mine);

        call("DELETE", "/gateways/" + gw + "/credentials/" + created.body().get("id").asText(), ADMIN, null);
        assertThat(devices.mayReport(login, mine)).as("revoked").isFalse();
        assertThat(call("GET", "/gateways/" + gw + "/credentials", READER, null).body().get("items").size()).isEqualTo(1);
        assertProblem(raw("GET", "/gateways/nobody/credentials", READER, null), 404, null);
    }

    @Test
    void aDevicePostsReadingsOfItsOwnSensorsWithItsCredentialAndIsRefusedOthersOneByOne() throws Exception {
        String mine = sensorId(), theirs = sensorId(), gw = "gw" + UUID.randomUUID().toString().substring(0, 8);
        call("POST", "/sensors", ADMIN, Map.of("id", mine, "address", "x"));
        call("POST", "/sensors", ADMIN, Map.of("id", theirs, "address", "y"));
        call("POST", "/gateways", ADMIN, Map.of("id", gw, "sensors", List.of(mine)));
        String secret = raw("POST", "/gateways/" + gw + "/credentials", ADMIN, null).body().get("secret").asText();

        Answer own = device("gateway." + gw, secret, List.of(Map.of("sensor_id", mine, "data", 0)));
        assertThat(own.status()).as("%s", own.body()).isEqualTo(202);
        await().atMost(Duration.ofSeconds(15)).until(() -> "0".equals(call("GET", "/sensors/" + mine, READER, null).body().get("state").asText()));

        Answer mixed = device("gateway." + gw, secret, List.of(Map.of("sensor_id", theirs, "data", 0),
                Map.of("sensor_id", mine, "data", 1)));
        assertProblem(mixed, 403, null);
        assertThat(mixed.body().get("errors").get(0).asText()).startsWith("[0].sensor_id: " + theirs);
        assertThat(mixed.body().get("errors")).hasSize(1);
        assertThat(mixed.body().get("detail").asText()).contains("the other 1 were accepted");
        await().atMost(Duration.ofSeconds(15)).until(() -> "1".equals(call("GET", "/sensors/" + mine, READER, null).body().get("state").asText()));
        assertThat(call("GET", "/sensors/" + theirs, READER, null).body().get("state").isNull()).as("never applied").isTrue();

        assertProblem(device("gateway." + gw, "lwd_wrong", Map.of("sensor_id", mine, "data", 0)), 401, null);
        assertProblem(device("nobody", secret, Map.of("sensor_id", mine, "data", 0)), 401, null);
        HttpResponse<String> elsewhere = HTTP.send(HttpRequest.newBuilder(URI.create(base() + "/sensors"))
                .header("Authorization", "Basic " + java.util.Base64.getEncoder().encodeToString(
                        ("gateway." + gw + ":" + secret).getBytes(java.nio.charset.StandardCharsets.UTF_8))).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(elsewhere.statusCode()).as("a device's credential opens nothing but the readings' door").isEqualTo(401);
    }

    private Answer device(String login, String secret, Object body) throws IOException, InterruptedException {
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(base() + "/readings"))
                .header("Authorization", "Basic " + java.util.Base64.getEncoder().encodeToString(
                        (login + ":" + secret).getBytes(java.nio.charset.StandardCharsets.UTF_8)))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body))).build(), HttpResponse.BodyHandlers.ofString());
        return new Answer(r.statusCode(), r.headers().firstValue("Content-Type").orElse(""),
                r.body().isBlank() ? null : JSON.readTree(r.body()));
    }

    // --- helpers

    private String base() {
        return "http://127.0.0.1:" + port + "/api/v1";
    }

    private static String sensorId() {
        return "A" + UUID.randomUUID().toString().replace("-", "").substring(0, 15);
    }

    private Answer call(String method, String path, String token, Object body) throws IOException, InterruptedException {
        return raw(method, path, token, body == null ? null : JSON.writeValueAsString(body));
    }

    private Answer raw(String method, String path, String token, String body) throws IOException, InterruptedException {
        return bytes(method, path, token, body == null ? null : body.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    private Answer bytes(String method, String path, String token, byte[] body) throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base() + path)).timeout(Duration.ofSeconds(10));
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        if (body != null) {
            b.header("Content-Type", "application/json");
        }
        b.method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(body));
        HttpResponse<String> r = HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
        // the registry's export is CSV: its text stands in the answer as a JSON string
        JsonNode json = r.body() == null || r.body().isBlank() ? null
                : r.headers().firstValue("Content-Type").orElse("").startsWith("text/csv")
                ? JSON.getNodeFactory().textNode(r.body()) : JSON.readTree(r.body());
        return new Answer(r.statusCode(), r.headers().firstValue("Content-Type").orElse(""), json);
    }

    private static void assertProblem(Answer a, int status, String field) {
        assertThat(a.status()).as("status of %s", a.body()).isEqualTo(status);
        assertThat(a.contentType()).startsWith("application/problem+json");
        assertThat(a.body().get("status").asInt()).isEqualTo(status);
        assertThat(a.body().get("detail").asText()).isNotBlank();
        if (field != null) {
            assertThat(a.body().path("field").asText()).as("field of %s", a.body()).isEqualTo(field);
        }
    }
}
