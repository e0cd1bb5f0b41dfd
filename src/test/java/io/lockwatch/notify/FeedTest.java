package io.lockwatch.notify;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import com.fasterxml.jackson.databind.JsonNode;
import io.lockwatch.ingest.IngestProperties;
import io.lockwatch.testing.Api;
import io.lockwatch.testing.Api.Answer;
import io.lockwatch.testing.Readings;
import org.apache.camel.test.spring.junit5.CamelSpringBootTest;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;

import javax.sql.DataSource;

/**
 * The pull feed on the embedded default: a client's events in the order they were recorded, each sensor's in
 * sequence order, as their webhooks carry them; a cursor read on by another reader (as after a restart: nothing of
 * it is held in memory); a cursor that moves past what the client's filters leave out; a later event of a sensor never served before an
 * earlier one, even when recorded by a transaction that began first; and a snapshot followed by the feed giving
 * every change once.
 */
@CamelSpringBootTest
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class FeedTest {

    @RegisterExtension
    static final WebhookReceiver receiver = WebhookReceiver.forTheClass();

    @Autowired RabbitTemplate rabbit;
    @Autowired IngestProperties ingest;
    @Autowired JdbcTemplate jdbc;
    @Autowired DataSource dataSource;
    @Autowired Feed feed;
    @Autowired FeedWatch watch;
    @Autowired io.lockwatch.selfservice.ClientKeys keys;
    @LocalServerPort int port;
    Api api;

    @BeforeEach
    void api() {
        api = new Api(port);
    }

    @Test
    void aClientReadsItsEventsInOrderAndReadsOnFromItsCursor() throws Exception {
        String client = api.client(receiver, "/feed-order");
        String a = sensor(), b = sensor(), notMine = sensor();
        api.link(client, a);
        api.link(client, b);
        Answer snapshot = api.call("GET", "/clients/" + client + "/sensors", Api.READER, null);
        assertThat(snapshot.body().has("feed_cursor")).as(String.valueOf(snapshot.body())).isTrue();
        String start = snapshot.body().get("feed_cursor").asText();
        long t = System.currentTimeMillis() - 60_000;
        List<Message> readings = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            readings.add(Readings.reading(a, i % 2, t + i * 1000));
            readings.add(Readings.reading(b, (i + 1) % 2, t + i * 1000));
            readings.add(Readings.reading(notMine, i % 2, t + i * 1000));
        }
        publishInOrder(readings);
        await().atMost(Duration.ofSeconds(20)).until(() -> sequence(a) == 6 && sequence(b) == 6);

        List<JsonNode> items = new ArrayList<>();
        String cursor = start;
        for (int page = 0; page < 10 && items.size() < 12; page++) {
            JsonNode body = api.call("GET", "/clients/" + client + "/feed?limit=5&after=" + cursor, Api.READER, null).body();
            body.get("items").forEach(items::add);
            cursor = body.get("next_cursor").asText();
        }
        assertThat(items).hasSize(12);
        assertThat(items).extracting(i -> i.get("sensor_id").asText()).doesNotContain(notMine);
        for (String s : List.of(a, b)) {
            assertThat(items.stream().filter(i -> i.get("sensor_id").asText().equals(s)).map(i -> i.get("sequence").asLong()))
                    .containsExactly(1L, 2L, 3L, 4L, 5L, 6L);
        }
        JsonNode first = items.get(0);
        assertThat(first.get("type").asText()).isEqualTo("sensor.state_changed");
        assertThat(first.get("client_id").asText()).isEqualTo(client);
        assertThat(first.get("address").asText()).isEqualTo("feed door");
        assertThat(first.has("event_id")).isTrue();
        // the same id as the webhook that posted the event to the client
        String posted = jdbc.queryForObject("SELECT id::text FROM notifications WHERE event_id = ? AND client_id = ?::uuid",
                String.class, first.get("event_id").asLong(), client);
        assertThat(first.get("id").asText()).isEqualTo(posted);

        JsonNode again = api.call("GET", "/clients/" + client + "/feed?after=" + cursor, Api.READER, null).body();
        assertThat(again.get("items")).isEmpty();

        // a reader with nothing in memory (another instance, or this one after a restart) reads on from the cursor
        publish(a, 0, t + 10_000);
        await().atMost(Duration.ofSeconds(20)).until(() -> sequence(a) == 7);
        Feed.Page afterRestart = new Feed(jdbc).read(UUID.fromString(client), cursor, 100);
        assertThat(afterRestart.items()).extracting(i -> i.get("sequence")).containsExactly(7L);

        assertThat(api.call("GET", "/clients/" + client + "/feed?after=12x", Api.READER, null).body().get("field").asText())
                .isEqualTo("after");
    }

    /**
     * A long poll that finds nothing is held, without a thread, until an event of its client arrives, and then
     * answers with it; one whose wait passes answers empty; a client's key asking for another's feed is not held.
     */
    /**
     * A cursor past the feed's end was never given (every cursor given is at most the end then, and the end only
     * moves on): a reader holding it would never see another event. Refused naming the parameter, on a read and on
     * a long poll alike; the long poll is not held for its wait (60 s, beyond the request's own timeout).
     */
    /** A cursor of the right form past any end a feed could have: the last place there is. */
    static final String PAST_ANY_END = Long.MAX_VALUE + "." + Long.MAX_VALUE;

    @Test
    void aCursorPastTheFeedsEndIsRefused() throws Exception {
        String client = api.client(receiver, "/feed-past-end");
        Api patient = new Api(port, Duration.ofSeconds(30));
        for (String wait : new String[] {"", "&wait=60"}) {
            Answer refused = patient.call("GET", "/clients/" + client + "/feed?after=" + PAST_ANY_END + wait, Api.READER, null);
            assertThat(refused.status()).as(wait).isEqualTo(400);
            assertThat(refused.body().get("field").asText()).isEqualTo("after");
            assertThat(refused.body().get("detail").asText()).contains("past the feed's end");
        }
        String end = feed.head();
        assertThat(api.call("GET", "/clients/" + client + "/feed?after=" + end, Api.READER, null).status()).isEqualTo(200);
        String[] place = end.split("\\.");
        String nextTx = (Long.parseLong(place[0]) + 1_000_000) + ".0";
        assertThat(api.call("GET", "/clients/" + client + "/feed?after=" + nextTx, Api.READER, null).status())
                .as("a transaction far past the oldest running one").isEqualTo(400);
    }

    @Test
    void aLongPollIsHeldUntilItsClientsEventArrives() throws Exception {
        String client = api.client(receiver, "/feed-long-poll");
        String s = sensor(), other = sensor();
        api.link(client, s);
        String cursor = feed.head();
        int before = watch.waiting();
        java.util.concurrent.CompletableFuture<Answer> poll = longPoll("/clients/" + client + "/feed?wait=60&after=" + cursor);
        await().atMost(Duration.ofSeconds(10)).until(() -> watch.waiting() == before + 1);
        publish(other, 0, System.currentTimeMillis());
        await().atMost(Duration.ofSeconds(10)).until(() -> sequence(other) == 1);
        assertThat(poll).as("another client's sensor wakes nothing").isNotDone();

        publish(s, 0, System.currentTimeMillis());
        Answer answer = poll.get(50, java.util.concurrent.TimeUnit.SECONDS);
        assertThat(answer.status()).isEqualTo(200);
        assertThat(answer.body().get("items")).hasSize(1);
        assertThat(answer.body().at("/items/0/sensor_id").asText()).isEqualTo(s);
        assertThat(watch.waiting()).isEqualTo(before);
        // answered where it was held, it is the page its route gives for the same cursor
        assertThat(answer.body().get("items")).isEqualTo(
                api.call("GET", "/clients/" + client + "/feed?after=" + cursor, Api.READER, null).body().get("items"));

        // nothing comes: an empty answer when its wait is over, with the cursor moved past the others' events, as
        // JSON with its correlation id like any answer of the API
        var quiet = java.net.http.HttpClient.newHttpClient().send(java.net.http.HttpRequest.newBuilder(
                        java.net.URI.create("http://localhost:" + port + "/api/v1/clients/" + client + "/feed?wait=1&after="
                                + answer.body().get("next_cursor").asText()))
                .header("Authorization", "Bearer " + Api.READER).header("X-Correlation-Id", "quiet-poll").build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
        assertThat(quiet.statusCode()).isEqualTo(200);
        assertThat(quiet.headers().firstValue("Content-Type")).hasValue("application/json");
        assertThat(quiet.headers().firstValue("X-Correlation-Id")).hasValue("quiet-poll");
        JsonNode quietBody = new com.fasterxml.jackson.databind.ObjectMapper().readTree(quiet.body());
        assertThat(quietBody.get("items")).isEmpty();
        assertThat(quietBody.get("more").asBoolean()).isFalse();
        assertThat(FeedPlace.of(quietBody.get("next_cursor").asText())).isGreaterThan(FeedPlace.of(answer.body().get("next_cursor").asText()));

        // what the contract or the route refuses is refused at once, never held
        String held = "/clients/" + client + "/feed?wait=60&after=" + quietBody.get("next_cursor").asText();
        assertThat(api.call("GET", held + "&limit=0", Api.READER, null).status()).isEqualTo(400);
        assertThat(api.call("GET", "/clients/" + client + "/feed?wait=60&after=12x", Api.READER, null).status()).isEqualTo(400);
        assertThat(java.net.http.HttpClient.newHttpClient().send(java.net.http.HttpRequest.newBuilder(
                        java.net.URI.create("http://localhost:" + port + "/api/v1" + held))
                .header("Authorization", "Bearer " + Api.READER).header("Accept", "text/csv").build(),
                java.net.http.HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(406);

        // a read from the feed's start (a cursor older than the watch) is asked of the database, held, and woken too
        String newcomer = api.client(receiver, "/feed-newcomer");
        String door = sensor();
        api.link(newcomer, door);
        java.util.concurrent.CompletableFuture<Answer> fromStart = longPoll("/clients/" + newcomer + "/feed?wait=60");
        await().atMost(Duration.ofSeconds(10)).until(() -> watch.waiting() == before + 1);
        publish(door, 1, System.currentTimeMillis());
        assertThat(fromStart.get(50, java.util.concurrent.TimeUnit.SECONDS).body().at("/items/0/sensor_id").asText())
                .isEqualTo(door);

        // another client's key is answered at once (Api's client gives up after 10 s; the wait is 60)
        String otherClient = api.client(receiver, "/feed-other");
        String key = keys.create(UUID.fromString(otherClient), "k", io.lockwatch.selfservice.ClientKeys.READ, null, "test").token();
        assertThat(api.call("GET", "/clients/" + client + "/feed?wait=60&after=" + cursor, key, null).status()).isEqualTo(404);
    }

    /**
     * A client with delivery_mode pull needs no url, is posted nothing (its outbox rows are its feed's) and reads
     * its events in its feed; a client turning to pull has what waited to be posted to it cancelled.
     */
    @Test
    void aPullClientIsPostedNothingAndReadsItsFeed() throws Exception {
        Answer created = api.call("POST", "/clients", Api.ADMIN, Map.of("name", "puller", "delivery_mode", "pull"));
        assertThat(created.status()).as(String.valueOf(created.body())).isEqualTo(201);
        assertThat(created.body().get("url").isNull()).isTrue();
        String puller = created.body().get("id").asText();
        assertThat(api.call("POST", "/clients", Api.ADMIN, Map.of("name", "nowhere")).body().get("field").asText())
                .isEqualTo("url");
        String pushed = api.client(receiver, "/feed-pushed");
        String s = sensor();
        api.link(puller, s);
        api.link(pushed, s);
        String cursor = feed.head();

        publish(s, 0, System.currentTimeMillis());
        await().atMost(Duration.ofSeconds(20)).until(() -> receiver.at("/feed-pushed").size() == 1);
        assertThat(jdbc.queryForList("SELECT status FROM notifications WHERE client_id = ?::uuid", String.class, puller))
                .as("its feed's row, never posted").containsExactly("pulled");
        JsonNode pulled = api.call("GET", "/clients/" + puller + "/feed?after=" + cursor, Api.READER, null).body();
        assertThat(pulled.get("items")).hasSize(1);
        assertThat(pulled.at("/items/0/sensor_id").asText()).isEqualTo(s);
        assertThat(api.call("POST", "/clients/" + puller + "/test", Api.ADMIN, null).status()).isEqualTo(409);
        assertThat(api.call("PUT", "/clients/" + puller, Api.ADMIN, Map.of("delivery_mode", "every_event")).body()
                .get("field").asText()).as("posted to where?").isEqualTo("url");

        // a client paused with a backlog turns to pull: its backlog is not posted
        assertThat(api.call("PUT", "/clients/" + pushed, Api.ADMIN, Map.of("enabled", false)).status()).isEqualTo(200);
        publish(s, 1, System.currentTimeMillis());
        await().atMost(Duration.ofSeconds(20)).until(() -> jdbc.queryForObject(
                "SELECT count(*) FROM notifications WHERE client_id = ?::uuid AND status = 'pending'", Integer.class, pushed) == 1);
        assertThat(api.call("PUT", "/clients/" + pushed, Api.ADMIN, Map.of("delivery_mode", "pull")).status()).isEqualTo(200);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM notifications WHERE client_id = ?::uuid AND status = 'pending'",
                Integer.class, pushed)).isZero();
    }

    /**
     * Events a client's filters leave out are not in its feed, and its cursor moves past them: a long poll from the
     * new cursor is held, not answered again at once.
     */
    @Test
    void eventsTheClientsFiltersLeaveOutMoveItsCursorOn() throws Exception {
        Answer created = api.call("POST", "/clients", Api.ADMIN, Map.of("name", "only lost", "delivery_mode", "pull",
                "event_types", List.of("sensor.connection_lost")));
        String client = created.body().get("id").asText();
        String s = sensor();
        api.link(client, s);
        String cursor = feed.head();
        long t = System.currentTimeMillis() - 60_000;
        List<Message> readings = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            readings.add(Readings.reading(s, i % 2, t + i * 1000));
        }
        publishInOrder(readings);
        await().atMost(Duration.ofSeconds(20)).until(() -> sequence(s) == 5);
        Feed.Page page = feed.read(UUID.fromString(client), cursor, 100);
        assertThat(page.items()).isEmpty();
        assertThat(page.more()).isFalse();
        assertThat(page.nextCursor()).isNotEqualTo(cursor);

        // the watch may note the last of them only after this read (a transaction older than it was still running
        // then): one long poll may be answered at once, empty, its cursor past them; the next is held
        String next = api.call("GET", "/clients/" + client + "/feed?wait=1&after=" + page.nextCursor(), Api.READER, null)
                .body().get("next_cursor").asText();
        int before = watch.waiting();
        java.util.concurrent.CompletableFuture<Answer> poll = longPoll("/clients/" + client + "/feed?wait=2&after=" + next);
        await().atMost(Duration.ofSeconds(10)).until(() -> watch.waiting() == before + 1 || poll.isDone());
        assertThat(poll).as("held: nothing of its own to read").isNotDone();
        assertThat(poll.get(30, java.util.concurrent.TimeUnit.SECONDS).body().get("items")).isEmpty();
    }

    /**
     * Transaction A takes its id first; B records event 1 of a sensor and commits; then A records event 2 of it. By
     * transaction id alone A's event would sort first; the feed puts it after B's.
     */
    @Test
    void aSensorsLaterEventComesAfterItsEarlierOneWhateverTheTransactionsIds() throws Exception {
        String client = api.client(receiver, "/feed-inversion");
        String s = sensor(), elsewhere = sensor();
        api.link(client, s);
        String cursor = feed.head();
        try (Connection first = dataSource.getConnection(); Connection second = dataSource.getConnection()) {
            first.setAutoCommit(false);
            event(first, elsewhere, 1, null); // A has its id now
            second.setAutoCommit(false);
            event(second, s, 1, client);
            second.commit();
            event(first, s, 2, client);
            first.commit();
        }
        List<Object> sequences = new ArrayList<>();
        Feed.Page page = feed.read(UUID.fromString(client), cursor, 100);
        page.items().forEach(i -> sequences.add(i.get("sequence")));
        assertThat(sequences).containsExactly(1L, 2L);
    }

    /**
     * Changes keep coming while a client reads its snapshot a page at a time and then follows the feed from the first
     * page's cursor, skipping each sensor's events up to the sequence the snapshot gave: it ends with every door's
     * state, and saw each change after the snapshot once.
     */
    @Test
    void aSnapshotThenTheFeedGivesEveryChangeOnce() throws Exception {
        String client = api.client(receiver, "/feed-snapshot");
        List<String> sensors = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            String s = sensor();
            sensors.add(s);
            api.link(client, s);
        }
        long t = System.currentTimeMillis() - 600_000;
        publishInOrder(sensors.stream().map(s -> Readings.reading(s, 1, t)).toList());
        await().atMost(Duration.ofSeconds(20)).until(() -> sensors.stream().allMatch(s -> sequence(s) == 1));
        Thread writer = new Thread(() -> {
            List<Message> rounds = new ArrayList<>();
            for (int round = 1; round <= 8; round++) {
                for (String s : sensors) {
                    rounds.add(Readings.reading(s, round % 2 == 0 ? 1 : 0, t + round * 1000L));
                }
            }
            publishInOrder(rounds);
        });
        writer.start();

        Map<String, Long> seq = new HashMap<>();
        Map<String, Integer> state = new HashMap<>();
        String feedCursor = null, page = null;
        do {
            Answer a = api.call("GET", "/clients/" + client + "/sensors?limit=5" + (page == null ? "" : "&cursor=" + page),
                    Api.READER, null);
            if (feedCursor == null) {
                feedCursor = a.body().get("feed_cursor").asText();
            }
            for (JsonNode s : a.body().get("items")) {
                seq.put(s.get("id").asText(), s.get("sequence").asLong());
                state.put(s.get("id").asText(), s.get("state").isNull() ? null : s.get("state").asInt());
            }
            page = a.body().get("next_cursor").isNull() ? null : a.body().get("next_cursor").asText();
        } while (page != null);
        writer.join();
        await().atMost(Duration.ofSeconds(30)).until(() -> sensors.stream().allMatch(s -> sequence(s) == 9));

        String cursor = feedCursor;
        boolean more = true;
        for (int reads = 0; reads < 50 && (more || sensors.stream().anyMatch(s -> seq.get(s) < 9)); reads++) {
            JsonNode body = api.call("GET", "/clients/" + client + "/feed?limit=7&after=" + cursor, Api.READER, null).body();
            for (JsonNode e : body.get("items")) {
                String s = e.get("sensor_id").asText();
                long n = e.get("sequence").asLong();
                if (n <= seq.get(s)) {
                    continue; // the snapshot had it
                }
                assertThat(n).as("the next change of %s, once", s).isEqualTo(seq.get(s) + 1);
                seq.put(s, n);
                state.put(s, e.get("state").asInt());
            }
            cursor = body.get("next_cursor").asText();
            more = body.get("more").asBoolean();
        }
        for (String s : sensors) {
            assertThat(seq.get(s)).as(s).isEqualTo(9L);
            assertThat(state.get(s)).as(s).isEqualTo(jdbc.queryForObject("SELECT state FROM sensor_state WHERE sensor_id = ?",
                    Integer.class, s));
        }
    }

    /** An event of the sensor, and the client's notification of it as the outbox makes one (its place copied). */
    private void event(Connection c, String sensor, long sequence, String client) throws Exception {
        long id;
        try (PreparedStatement ps = c.prepareStatement("""
                INSERT INTO sensor_events (sensor_id, sequence, type, state, occurred_at)
                VALUES (?, ?, 'sensor.state_changed', 0, now()) RETURNING id""")) {
            ps.setString(1, sensor);
            ps.setLong(2, sequence);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                id = rs.getLong(1);
            }
        }
        if (client != null) {
            Outbox.notificationsTo(c, List.of(new Outbox.To(id, UUID.fromString(client))), null);
        }
    }

    /** A long poll as a client makes it, answered in the background (its wait may be up to a minute). */
    private java.util.concurrent.CompletableFuture<Answer> longPoll(String path) {
        return java.util.concurrent.CompletableFuture.supplyAsync(() -> {
            try {
                return new Api(port, Duration.ofSeconds(90)).call("GET", path, Api.READER, null);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
    }

    private String sensor() {
        String id = "F" + UUID.randomUUID().toString().replace("-", "").substring(0, 15);
        jdbc.update("INSERT INTO sensors (id, address) VALUES (?, 'feed door')", id);
        return id;
    }

    private long sequence(String sensor) {
        Long n = jdbc.queryForObject("SELECT coalesce(sequence, 0) FROM sensor_state WHERE sensor_id = ?", Long.class, sensor);
        return n == null ? 0 : n;
    }

    private void publish(String sensor, int data, long ts) {
        rabbit.send(ingest.exchange(), sensor, Readings.reading(sensor, data, ts));
    }

    /** A sensor's readings one after another: separate sends may take separate channels, unordered by the broker. */
    private void publishInOrder(List<Message> readings) {
        Readings.publishInOrder(rabbit, ingest.exchange(), readings);
    }
}
