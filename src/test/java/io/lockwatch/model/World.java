package io.lockwatch.model;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.lockwatch.model.Model.Client;
import io.lockwatch.model.Model.Event;
import io.lockwatch.model.Model.Key;
import io.lockwatch.model.Model.KeyState;
import io.lockwatch.model.Model.Sensor;
import io.lockwatch.model.Model.Sent;
import io.lockwatch.notify.WebhookReceiver;
import io.lockwatch.testing.Api;
import io.lockwatch.testing.Api.Answer;
import org.awaitility.Awaitility;

/**
 * One run of {@link ApiModelTest}: the service (over HTTP, and a webhook receiver for every client) beside the
 * {@link Model}. Each operation is done on both; {@link #check()} compares them after every step.
 */
final class World {

    private static final ObjectMapper JSON = new ObjectMapper();
    /** Ids of this JVM's runs: the database outlives a run (and is shared with other test classes). */
    private static final String JVM = Long.toString(Math.abs(new java.util.Random().nextLong()) % 1_679_616L + 1_679_616L, 36);
    private static final AtomicInteger RUNS = new AtomicInteger();
    /** Dated this far ahead, a reading is in the future: beyond lockwatch.ingest.max-clock-skew (5 s) */
    private static final long FUTURE = Duration.ofHours(1).toMillis();
    private static final Duration WAIT = Duration.ofSeconds(60);

    final Model model;
    private final Api api;
    private final WebhookReceiver receiver;
    private final String prefix;
    private final String barrier;
    private int barrierState, barrierSequence, clientsMade, readingsSent;
    private long clock;

    World(Api api, WebhookReceiver receiver) {
        this.api = api;
        this.receiver = receiver;
        this.prefix = "M" + JVM + RUNS.incrementAndGet();
        this.model = new Model(prefix);
        // readings are applied asynchronously: each batch ends with a reading of this sensor of no client, and the
        // step waits until it is applied, so every reading before it is too (one queue, applied in order)
        this.barrier = prefix + "b";
        expect(call("POST", "/sensors", Api.ADMIN, Map.of("id", barrier, "address", "model barrier")), 201);
    }

    @Override
    public String toString() {
        return prefix;
    }

    // --- sensors and clients

    void registerSensor(int slot) {
        Sensor s = model.sensors[slot];
        if (s.registered) {
            return;
        }
        expect(call("POST", "/sensors", Api.ADMIN, Map.of("id", s.id, "address", "door " + slot)), 201);
        s.register();
    }

    void deleteSensor(int slot) {
        if (!model.sensors[slot].registered) {
            return;
        }
        expect(call("DELETE", "/sensors/" + model.sensors[slot].id, Api.ADMIN, null), 204);
        model.deleteSensor(slot);
    }

    void createClient(int slot) {
        if (model.clients[slot] != null) {
            return;
        }
        String path = "/" + prefix + "c" + clientsMade++;
        Answer made = call("POST", "/clients", Api.ADMIN, Map.of("name", "model " + path, "url", receiver.url(path)));
        expect(made, 201);
        Client c = new Client(slot, made.body().get("id").asText(), made.body().get("webhook_secret").asText(), path);
        model.clients[slot] = c;
        model.allClients.add(c);
    }

    void deleteClient(int slot) {
        Client c = model.clients[slot];
        if (c == null) {
            return;
        }
        expect(call("DELETE", "/clients/" + c.id, Api.ADMIN, null), 204);
        model.deleteClient(slot);
        // refused at once by the instance that deleted it: asked before anything else, so that no look at the
        // changed keys (every second) comes in between
        c.keys.forEach(this::refusedAtOnce);
    }

    /** A key just revoked, expired or deleted with its client, tried at once. */
    private void refusedAtOnce(Key k) {
        Answer me = call("GET", "/me", k.token, null);
        assertThat(me.status()).as("GET /me at once with %s key %s, %s", k.role, k.id,
                k.state == KeyState.ACTIVE ? "its client just deleted" : "just " + k.state.name().toLowerCase()).isEqualTo(401);
    }

    void link(int client, int sensor) {
        if (model.clients[client] == null || !model.sensors[sensor].registered || model.clients[client].links.contains(sensor)) {
            return;
        }
        expect(call("PUT", "/clients/" + model.clients[client].id + "/sensors/" + model.sensors[sensor].id, Api.ADMIN, null), 204);
        model.clients[client].links.add(sensor);
    }

    void unlink(int client, int sensor) {
        if (model.clients[client] == null || !model.clients[client].links.contains(sensor)) {
            return;
        }
        expect(call("DELETE", "/clients/" + model.clients[client].id + "/sensors/" + model.sensors[sensor].id, Api.ADMIN, null),
                204);
        model.unlink(client, sensor);
    }

    /** Paused or resumed by the operator, or by the client's own admin key if {@code byKey}. */
    void enable(int slot, boolean enabled, boolean asClient) {
        Client c = model.clients[slot];
        if (c == null || c.enabled == enabled) {
            return;
        }
        Key byKey = actor(slot, asClient);
        Answer a = call("PUT", "/clients/" + c.id, byKey == null ? Api.ADMIN : byKey.token, Map.of("enabled", enabled));
        expect(a, 200);
        assertThat(a.body().get("enabled").asBoolean()).as("enabled in the answer").isEqualTo(enabled);
        if (enabled) {
            model.resume(slot);
        } else {
            c.enabled = false;
        }
    }

    // --- readings

    enum Kind { IN_ORDER, SAME_TIME, STALE, FUTURE, DUPLICATE }

    record Planned(int sensor, Kind kind, int data, int pick) {
        @Override
        public String toString() {
            return "s" + sensor + (kind == Kind.DUPLICATE ? " duplicate#" + pick : " " + kind.name().toLowerCase() + "=" + data);
        }
    }

    /** One POST /readings of these readings (an array, in this order), then waits until ingest has applied them. */
    void readings(List<Planned> planned) {
        List<Sent> batch = new ArrayList<>();
        long now = System.currentTimeMillis();
        for (Planned p : planned) {
            Sensor s = model.sensors[p.sensor()];
            Sent r = switch (p.kind()) {
                case IN_ORDER -> new Sent(s.id, p.data(), tick(), id());
                case SAME_TIME -> new Sent(s.id, p.data(), s.lastTs == null ? tick() : s.lastTs, id());
                case STALE -> new Sent(s.id, p.data(), s.lastTs == null ? tick() - 60_000 : s.lastTs - 1_000, id());
                case FUTURE -> new Sent(s.id, p.data(), now + FUTURE, id());
                case DUPLICATE -> s.sent.isEmpty() ? new Sent(s.id, p.data(), tick(), id())
                        : s.sent.get(Math.max(0, s.sent.size() - 1 - p.pick() % Model.RECENT_IDS));
            };
            batch.add(r);
        }
        List<Map<String, Object>> body = new ArrayList<>();
        for (Sent r : batch) {
            body.add(Map.of("sensor_id", r.sensorId(), "data", r.data(), "ts", r.ts(), "message_id", r.messageId()));
        }
        int future = planned.stream().map(Planned::kind).toList().indexOf(Kind.FUTURE);
        if (future >= 0) {
            // the API judges the measured time itself: the whole array is refused, naming the element, and nothing
            // of it reaches ingest (the check after the step holds every sensor to that)
            Answer a = call("POST", "/readings", Api.ADMIN, body);
            expect(a, 400);
            assertThat(a.body().path("field").asText()).as(String.valueOf(a.body())).isEqualTo("[" + future + "].ts");
            return;
        }
        barrierState = 1 - barrierState;
        body.add(Map.of("sensor_id", barrier, "data", barrierState, "ts", tick(), "message_id", id()));
        Answer a = call("POST", "/readings", Api.ADMIN, body);
        expect(a, 202);
        assertThat(a.body().get("accepted").asInt()).as("accepted").isEqualTo(body.size());
        for (Sent r : batch) {
            model.sensor(r.sensorId()).sent.add(r);
            model.apply(r);
        }
        int expected = ++barrierSequence;
        Awaitility.await("readings applied (the batch's last reading, of " + barrier + ", at sequence " + expected + ")")
                .atMost(WAIT).pollInterval(Duration.ofMillis(20))
                .until(() -> call("GET", "/sensors/" + barrier, Api.ADMIN, null).body().get("sequence").asLong() >= expected);
    }

    /** A measured time after every one before, in the past (applied as measured: never later than its arrival). */
    private long tick() {
        clock = Math.max(clock + 1, System.currentTimeMillis() - 2_000);
        return clock;
    }

    private String id() {
        return prefix + "r" + readingsSent++;
    }

    // --- client keys
    //
    // Operations name clients by slot and keys by their place in their client's list, resolved as they run: a
    // sequence shrunk by jqwik runs again in a new world, where those name the same things.

    /** The key at that place of the live client in that slot, or null. */
    private Key key(int slot, int index) {
        Client c = model.clients[slot];
        return c == null || index >= c.keys.size() ? null : c.keys.get(index);
    }

    /** The client's first active admin key if {@code byKey} and it has one; else null: the operator. */
    Key actor(int slot, boolean byKey) {
        Client c = model.clients[slot];
        return !byKey || c == null ? null
                : c.keys.stream().filter(k -> k.admin() && k.state == KeyState.ACTIVE).findFirst().orElse(null);
    }

    void createKey(int slot, String role, boolean asClient) {
        Client c = model.clients[slot];
        if (c == null || c.liveKeys() >= 3) {
            return;
        }
        Key byKey = actor(slot, asClient);
        Answer made = call("POST", "/clients/" + c.id + "/keys", byKey == null ? Api.ADMIN : byKey.token,
                Map.of("name", "model key", "role", role));
        expect(made, 201);
        c.keys.add(new Key(made.body().at("/key/id").asText(), made.body().get("token").asText(), role));
    }

    void revokeKey(int slot, int index, boolean asClient) {
        if (key(slot, index) == null || key(slot, index).state == KeyState.REVOKED) {
            return;
        }
        Key key = model.clients[slot].keys.get(index), byKey = actor(slot, asClient);
        expect(call("DELETE", "/clients/" + model.clients[slot].id + "/keys/" + key.id, byKey == null ? Api.ADMIN : byKey.token,
                null), 204);
        key.state = KeyState.REVOKED;
        refusedAtOnce(key);
    }

    /** The operator expires a key. */
    void expireKey(int slot, int index) {
        if (key(slot, index) == null || key(slot, index).state != KeyState.ACTIVE) {
            return;
        }
        Key key = model.clients[slot].keys.get(index);
        Answer a = call("PATCH", "/clients/" + model.clients[slot].id + "/keys/" + key.id, Api.ADMIN,
                Map.of("expires_at", Instant.now().minusSeconds(1).toString()));
        expect(a, 200);
        assertThat(a.body().get("state").asText()).isEqualTo("expired");
        key.state = KeyState.EXPIRED;
        refusedAtOnce(key);
    }

    /** A client's admin key tries to lift the expiry its operator set: refused, the key stays expired. */
    void liftExpiry(int slot, int index) {
        if (key(slot, index) == null || key(slot, index).state != KeyState.EXPIRED || actor(slot, true) == null) {
            return;
        }
        Key key = model.clients[slot].keys.get(index), byKey = actor(slot, true);
        Map<String, Object> never = new HashMap<>();
        never.put("expires_at", null);
        Answer a = call("PATCH", "/clients/" + model.clients[slot].id + "/keys/" + key.id, byKey.token, never);
        assertThat(a.status()).as("a client-admin key lifting the operator's expiry: " + a.body()).isBetween(400, 499);
    }

    /** A client's key acts on another client's key: 404, as if there were none, and nothing changes. */
    void revokeAcross(int slot, int index, int otherSlot, int otherIndex) {
        if (slot == otherSlot || key(slot, index) == null || key(slot, index).state != KeyState.ACTIVE
                || key(otherSlot, otherIndex) == null) {
            return;
        }
        Key byKey = model.clients[slot].keys.get(index), other = model.clients[otherSlot].keys.get(otherIndex);
        Answer a = call("DELETE", "/clients/" + model.clients[otherSlot].id + "/keys/" + other.id, byKey.token, null);
        assertThat(a.status()).as("another client's key revoked by a client key: " + a.body()).isEqualTo(404);
    }

    // --- the comparison

    /** Everything the API says and every receiver heard, against the model. */
    void check() {
        for (Sensor s : model.sensors) {
            Answer a = call("GET", "/sensors/" + s.id, Api.ADMIN, null);
            if (!s.registered) {
                assertThat(a.status()).as("sensor %s, deleted or never registered", s.id).isEqualTo(404);
                continue;
            }
            expect(a, 200);
            assertThat(state(a.body())).as("state of sensor %s", s.id).isEqualTo(s.state);
            assertThat(a.body().get("sequence").asLong()).as("sequence of sensor %s", s.id).isEqualTo(s.sequence);
        }
        for (Client c : model.allClients) {
            checkClient(c);
        }
        for (Client c : model.allClients) {
            for (Key k : c.keys) {
                checkKey(c, k);
            }
        }
        for (Client c : model.allClients) {
            checkHeard(c);
        }
    }

    private void checkClient(Client c) {
        Answer a = call("GET", "/clients/" + c.id, Api.ADMIN, null);
        if (c.gone) {
            assertThat(a.status()).as("deleted client %s", c.id).isEqualTo(404);
            return;
        }
        expect(a, 200);
        assertThat(a.body().get("enabled").asBoolean()).as("client %s enabled", c.id).isEqualTo(c.enabled);
        Answer linked = call("GET", "/clients/" + c.id + "/sensors?limit=1000", Api.ADMIN, null);
        expect(linked, 200);
        Map<String, JsonNode> items = new LinkedHashMap<>();
        linked.body().get("items").forEach(i -> items.put(i.get("id").asText(), i));
        Set<String> expected = new HashSet<>();
        c.links.forEach(slot -> expected.add(model.sensors[slot].id));
        assertThat(items.keySet()).as("sensors linked to client %s", c.id).containsExactlyInAnyOrderElementsOf(expected);
        for (int slot : c.links) {
            Sensor s = model.sensors[slot];
            JsonNode i = items.get(s.id);
            assertThat(state(i)).as("state of %s in client %s's snapshot", s.id, c.id).isEqualTo(s.state);
            assertThat(i.get("sequence").asLong()).as("sequence of %s in client %s's snapshot", s.id, c.id).isEqualTo(s.sequence);
        }
        Answer keys = call("GET", "/clients/" + c.id + "/keys", Api.ADMIN, null);
        expect(keys, 200);
        Map<String, String> states = new HashMap<>();
        keys.body().get("items").forEach(k -> states.put(k.get("id").asText(), k.get("state").asText()));
        Map<String, String> expectedStates = new HashMap<>();
        c.keys.forEach(k -> expectedStates.put(k.id, k.state.name().toLowerCase()));
        assertThat(states).as("keys of client %s", c.id).isEqualTo(expectedStates);
    }

    /** A key answers for its own client while it is active and its client exists, for nothing else ever. */
    private void checkKey(Client c, Key k) {
        boolean live = !c.gone && k.state == KeyState.ACTIVE;
        Answer me = call("GET", "/me", k.token, null);
        assertThat(me.status()).as("GET /me with %s key %s (%s) of %s client %s", k.role, k.id, k.state,
                c.gone ? "deleted" : "live", c.id).isEqualTo(live ? 200 : 401);
        if (!live) {
            return;
        }
        assertThat(call("GET", "/clients/" + c.id, k.token, null).status()).as("key %s on its own client", k.id).isEqualTo(200);
        for (Client other : model.allClients) {
            if (other != c) {
                Answer a = call("GET", "/clients/" + other.id, k.token, null);
                assertThat(a.status()).as("key %s of %s on %s client %s", k.id, c.id, other.gone ? "deleted" : "another",
                        other.id).isEqualTo(404);
            }
        }
        for (int slot = 0; slot < Model.SENSORS; slot++) {
            Sensor s = model.sensors[slot];
            Answer a = call("GET", "/sensors/" + s.id, k.token, null);
            boolean own = s.registered && c.links.contains(slot);
            assertThat(a.status()).as("key %s of %s on sensor %s (%s)", k.id, c.id, s.id, own ? "linked" : "not its own")
                    .isEqualTo(own ? 200 : 404);
            if (own) {
                assertThat(a.body().get("sequence").asLong()).as("sequence of %s by key %s", s.id, k.id).isEqualTo(s.sequence);
            }
        }
    }

    /**
     * What the client's receiver heard: its linked sensors' changes, each once, each sensor's in sequence order
     * (different sensors are posted in parallel: their order among each other is not kept), nothing of any other
     * sensor, each signed with its secret. Delivery is asynchronous: waited for until as many have come as are due.
     */
    private void checkHeard(Client c) {
        int due = c.expectedCount();
        try {
            Awaitility.await("client " + c.id + " to hear " + due + " events").atMost(WAIT).pollInterval(Duration.ofMillis(20))
                    .until(() -> receiver.at(c.path).size() >= due);
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            // fall through: the comparison below says what is missing
        }
        Map<String, List<Event>> heard = new LinkedHashMap<>();
        for (WebhookReceiver.Received r : receiver.at(c.path)) {
            JsonNode e = read(r.body());
            try {
                assertThat(WebhookReceiver.signatureValid(r, c.secret)).as("signature of %s", r.body()).isTrue();
            } catch (Exception ex) {
                throw new AssertionError(ex);
            }
            assertThat(e.get("client_id").asText()).as("client_id of %s", r.body()).isEqualTo(c.id);
            heard.computeIfAbsent(e.get("sensor_id").asText(), k -> new ArrayList<>()).add(new Event(e.get("type").asText(),
                    state(e), e.get("previous_state").isNull() ? null : e.get("previous_state").asInt(), e.get("sequence").asLong()));
        }
        Map<String, List<Event>> expected = new LinkedHashMap<>();
        c.heard.forEach((k, v) -> {
            if (!v.isEmpty()) {
                expected.put(k, v);
            }
        });
        assertThat(heard).as("what client %s heard, by sensor", c.id).isEqualTo(expected);
    }

    // --- HTTP

    private static Integer state(JsonNode n) {
        JsonNode s = n.get("state");
        return s == null || s.isNull() ? null : s.asInt();
    }

    private Answer call(String method, String path, String token, Object body) {
        try {
            return api.call(method, path, token, body);
        } catch (Exception e) {
            throw new AssertionError(method + " " + path + ": " + e, e);
        }
    }

    private static void expect(Answer a, int status) {
        assertThat(a.status()).as(String.valueOf(a.body())).isEqualTo(status);
    }

    private static JsonNode read(String body) {
        try {
            return JSON.readTree(body);
        } catch (java.io.IOException e) {
            throw new AssertionError(body, e);
        }
    }
}
