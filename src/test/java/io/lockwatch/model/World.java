package io.lockwatch.model;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
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
    /** People of the organisation, signed in to the console at the identity provider (or not yet, or signed out). */
    static final int PEOPLE = 2;

    static final class Person {
        final String subject, name;
        String token;           // the access token of their last sign-in; null before the first
        boolean signedOut;      // an operator ended their sign-in since
        long signedOutSecond;   // when that was answered, by this clock
        String endedSignIn;     // the id of the sign-in last ended; no handle on a later one
        final List<String> endedTokens = new ArrayList<>(); // of sign-ins ended: refused for good

        Person(String subject, String name) {
            this.subject = subject;
            this.name = name;
        }
    }

    private final Person[] people = new Person[PEOPLE];

    /** Every change this run asked of the service, as the audit log must name it: method, resource, actor, status. */
    private final List<String> changes = new java.util.ArrayList<>();
    private final java.time.Instant began = java.time.Instant.now();

    World(Api api, WebhookReceiver receiver) {
        this.api = api;
        this.receiver = receiver;
        this.prefix = "M" + JVM + RUNS.incrementAndGet();
        this.model = new Model(prefix);
        // readings are applied asynchronously: each batch ends with a reading of this sensor of no client, and the
        // step waits until it is applied, so every reading before it is too (one queue, applied in order)
        for (int i = 0; i < PEOPLE; i++) {
            people[i] = new Person(prefix + "-p" + i, prefix + "person" + i);
        }
        this.barrier = prefix + "b";
        expect(call("POST", "/sensors", Api.ADMIN, Map.of("id", barrier, "address", "model barrier")), 201);
    }

    @Override
    public String toString() {
        return prefix;
    }

    /**
     * How often each operation met a state it applies to, in this JVM: ApiModelTest prints it after a run, so that a
     * run shows which of its operations it exercised (one drawn where it does not apply changes nothing).
     */
    static final Map<String, AtomicInteger> REACHED = new java.util.concurrent.ConcurrentSkipListMap<>();

    private static void reached(String what) {
        REACHED.computeIfAbsent(what, k -> new AtomicInteger()).incrementAndGet();
    }

    // --- sensors and clients

    void registerSensor(int slot) {
        Sensor s = model.sensors[slot];
        if (s.registered) {
            return;
        }
        // the middle slot is a Zigbee2MQTT device's, the last a LoRaWAN one's (its readings come through The Things
        // Stack's webhook): a device id is free again once its sensor is deleted
        String device = slot == 1 ? s.id + "/contact" : slot == Model.LORAWAN ? devEui(slot) : null;
        String profile = slot == 1 ? "zigbee2mqtt" : "dragino-lds02";
        expect(call("POST", "/sensors", Api.ADMIN, device == null ? Map.of("id", s.id, "address", "door " + slot)
                : Map.of("id", s.id, "address", "door " + slot, "profile", profile, "device_id", device)), 201);
        s.register();
        s.deviceId = device;
    }

    void deleteSensor(int slot) {
        if (!model.sensors[slot].registered) {
            return;
        }
        reached("a sensor deleted");
        expect(call("DELETE", "/sensors/" + model.sensors[slot].id, Api.ADMIN, null), 204);
        if (model.sensors[slot].alarm != null) {
            reached("a sensor deleted with its alarm active");
        }
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

    // --- people signed in at the identity provider

    /**
     * The person signs in to the console at the identity provider, as a browser would (the authorisation code flow,
     * its sealed cookie, the hand-over page), with the operator role. One signed out waits for the next second first:
     * a token dated the sign-out's own second is refused, as the service documents.
     */
    void signIn(int slot) {
        Person p = people[slot];
        if (p.signedOut) {
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(3))
                    .until(() -> java.time.Instant.now().getEpochSecond() > p.signedOutSecond);
        }
        io.lockwatch.testing.IdentityProvider.get().nextSignIn(p.subject, p.name,
                List.of(io.lockwatch.testing.IdentityProvider.OPERATOR));
        java.net.http.HttpClient browser = java.net.http.HttpClient.newBuilder()
                .cookieHandler(new java.net.CookieManager()).followRedirects(java.net.http.HttpClient.Redirect.ALWAYS).build();
        HttpResponse<String> page;
        try {
            page = browser.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(
                    api.base().replace("/api/v1", "") + "/oauth2/authorization/lockwatch")).build(), HttpResponse.BodyHandlers.ofString());
        } catch (Exception e) {
            throw new AssertionError("signing in " + p.name + ": " + e, e);
        }
        java.util.regex.Matcher token = java.util.regex.Pattern.compile("name=\"lockwatch-token\" content=\"([^\"]+)\"")
                .matcher(page.body());
        assertThat(token.find()).as("the hand-over page of %s's sign-in: %s", p.name, page.body()).isTrue();
        p.token = token.group(1);
        p.signedOut = false;
        reached("sign in");
    }

    /** The person pauses or resumes a client as an operator; signed out, they are refused (401) and nothing changes. */
    void personEnables(int slot, int clientSlot, boolean enabled) {
        Person p = people[slot];
        Client c = model.clients[clientSlot];
        if (p.token == null || c == null || c.enabled == enabled) {
            return;
        }
        Answer a = call("PUT", "/clients/" + c.id, p.token, Map.of("enabled", enabled));
        if (p.signedOut) {
            expect(a, 401);
            reached("a signed-out person refused");
            return;
        }
        expect(a, 200);
        if (enabled) {
            model.resume(clientSlot);
        } else {
            c.enabled = false;
        }
        reached("a person acts");
    }

    /** An operator signs the person out, by their sign-in in the list of who is signed in; with none there, a 404. */
    void endSession(int slot) {
        Person p = people[slot];
        if (p.endedSignIn != null) {
            // a sign-in ended before is not found again, and ending it signs out nobody (checkPeople holds that)
            expect(call("POST", "/sessions/" + p.endedSignIn + "/end", Api.ADMIN, null), 404);
            reached("an earlier sign-in ended again");
        }
        String id = signInOf(p);
        if (id == null) {
            expect(call("POST", "/sessions/" + java.util.UUID.randomUUID() + "/end", Api.ADMIN, null), 404);
            return;
        }
        expect(call("POST", "/sessions/" + id + "/end", Api.ADMIN, null), 204);
        expect(call("POST", "/sessions/" + id + "/end", Api.ADMIN, null), 404); // ended, it is no handle any more
        p.endedSignIn = id;
        p.endedTokens.add(p.token);
        p.signedOut = true;
        p.signedOutSecond = java.time.Instant.now().getEpochSecond();
        reached("sign out");
    }

    /** The person's sign-in as the operator's list shows it, or null. */
    private String signInOf(Person p) {
        Answer list = call("GET", "/sessions", Api.READER, null);
        expect(list, 200);
        for (JsonNode si : list.body().get("items")) {
            if (si.get("subject").asText().equals(p.subject)) {
                return si.get("id").asText();
            }
        }
        return null;
    }

    /** Who is signed in, as the operator's list shows it, and what each person's token opens. */
    private void checkPeople() {
        for (Person p : people) {
            boolean in = p.token != null && !p.signedOut;
            assertThat(signInOf(p) != null).as("%s in the list of who is signed in", p.name).isEqualTo(in);
            if (p.token != null) {
                Answer me = call("GET", "/me", p.token, null);
                expect(me, in ? 200 : 401);
                if (in) {
                    assertThat(me.body().get("name").asText()).isEqualTo(p.name);
                }
            }
            for (String ended : p.endedTokens) {
                expect(call("GET", "/me", ended, null), 401); // signed in again, the old token stays refused
            }
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

    /**
     * One POST /readings of these readings (an array, in this order), then waits until ingest has applied them. A
     * reading that closes the door of an active alarm ends its POST: the step waits for the scan to clear the alarm
     * before it posts the rest, so that the clearing's sequence comes where the model puts it.
     */
    void readings(List<Planned> planned) {
        List<Sent> batch = new ArrayList<>();
        long now = System.currentTimeMillis();
        for (Planned p : planned) {
            Sensor s = model.sensors[p.sensor()];
            Sent r = switch (p.kind()) {
                case IN_ORDER -> sent(s.id, p.data(), tick());
                case SAME_TIME -> sent(s.id, p.data(), s.lastTs == null ? tick() : s.lastTs);
                case STALE -> sent(s.id, p.data(), s.lastTs == null ? tick() - 60_000 : s.lastTs - 1_000);
                case FUTURE -> sent(s.id, p.data(), now + FUTURE);
                case DUPLICATE -> s.sent.isEmpty() ? sent(s.id, p.data(), tick())
                        : s.sent.get(Math.max(0, s.sent.size() - 1 - p.pick() % Model.RECENT_IDS));
            };
            batch.add(r);
        }
        int future = planned.stream().map(Planned::kind).toList().indexOf(Kind.FUTURE);
        if (future >= 0) {
            // the API judges the measured time itself: the whole array is refused, naming the element, and nothing
            // of it reaches ingest (the check after the step holds every sensor to that)
            Answer a = call("POST", "/readings", Api.ADMIN, body(batch));
            expect(a, 400);
            assertThat(a.body().path("field").asText()).as(String.valueOf(a.body())).isEqualTo("[" + future + "].ts");
            return;
        }
        List<Sent> part = new ArrayList<>();
        for (Sent r : batch) {
            part.add(r);
            Sensor s = model.sensor(r.sensorId());
            Model.Alarm alarm = s.alarm;
            s.sent.add(r);
            long before = s.sequence;
            boolean closes = model.apply(r);
            if (s.sequence > before && model.inWindow(s)) {
                reached("a state change inside a maintenance window");
            }
            if (closes) {
                post(part);
                part.clear();
                awaitAlarm(alarm, false);
                reached(alarm.held ? "an alarm held by a window cleared inside it" : "an alarm cleared by its door's closing");
                model.clear(s);
            }
            // a battery that raises or clears its alarm ends the POST as well: the step waits for the scan to judge it
            Boolean judged = s.registered ? model.batteryJudged(s) : null;
            if (judged != null) {
                post(part);
                part.clear();
                if (judged) {
                    model.raiseBattery(s, awaitBatteryAlarm(s));
                    reached(model.inWindow(s) ? "a battery alarm held by a window" : "a battery alarm raised");
                } else {
                    Model.Alarm low = s.batteryAlarm;
                    awaitAlarm(low, false);
                    reached(low.held ? "a battery alarm held by a window cleared inside it" : "a battery alarm cleared");
                    model.clearBattery(s);
                }
            }
        }
        if (!part.isEmpty()) {
            post(part);
        }
    }

    private static List<Map<String, Object>> body(List<Sent> readings) {
        List<Map<String, Object>> body = new ArrayList<>();
        for (Sent r : readings) {
            Map<String, Object> reading = new java.util.LinkedHashMap<>(Map.of("sensor_id", r.sensorId(), "data", r.data(),
                    "ts", r.ts(), "message_id", r.messageId()));
            if (r.battery() != null) {
                reading.put("battery", r.battery());
            }
            body.add(reading);
        }
        return body;
    }

    /** A DevEUI of this run's own (lower case, as lockwatch keeps it). */
    private String devEui(int slot) {
        return String.format("%08x%08x", prefix.hashCode(), slot);
    }

    /**
     * The LoRaWAN sensor's readings go as its network's uplinks through The Things Stack's webhook, one at a time in
     * their order; the others in one array to /readings. The uplink's session key is the reading's id and its frame
     * counter 1, so the adapter's message id is one per reading, and a duplicate is the same uplink again.
     */
    private void post(List<Sent> all) {
        List<Sent> readings = new ArrayList<>();
        for (Sent r : all) {
            if (!r.sensorId().equals(model.sensors[Model.LORAWAN].id)) {
                readings.add(r);
                continue;
            }
            Answer a = call("POST", "/adapters/the-things-stack/uplinks", Api.ADMIN, Map.of(
                    "end_device_ids", Map.of("device_id", "door-" + Model.LORAWAN, "dev_eui", devEui(Model.LORAWAN).toUpperCase()),
                    "received_at", java.time.Instant.ofEpochMilli(r.ts()).toString(),
                    "uplink_message", Map.of("session_key_id", r.messageId(), "f_cnt", 1, "frm_payload", "AQ==",
                            "decoded_payload", Map.of("DOOR_OPEN_STATUS", r.data() == 0 ? 1 : 0),
                            "received_at", java.time.Instant.ofEpochMilli(r.ts()).toString())));
            expect(a, 202);
            // a deleted sensor's device is no one's: nothing to read, and no failure for the stack to count
            assertThat(a.body().get("accepted").asInt()).as("uplink of sensor %s accepted", r.sensorId())
                    .isEqualTo(model.sensors[Model.LORAWAN].registered ? 1 : 0);
            reached(model.sensors[Model.LORAWAN].registered ? "an uplink through the webhook" : "an uplink of a deleted sensor's device");
        }
        List<Map<String, Object>> body = body(readings);
        barrierState = 1 - barrierState;
        body.add(Map.of("sensor_id", barrier, "data", barrierState, "ts", tick(), "message_id", id()));
        Answer a = call("POST", "/readings", Api.ADMIN, body);
        expect(a, 202);
        assertThat(a.body().get("accepted").asInt()).as("accepted").isEqualTo(body.size());
        int expected = ++barrierSequence;
        Awaitility.await("readings applied (the batch's last reading, of " + barrier + ", at sequence " + expected + ")")
                .atMost(WAIT).pollInterval(Duration.ofMillis(20))
                .until(() -> call("GET", "/sensors/" + barrier, Api.ADMIN, null).body().get("sequence").asLong() >= expected);
    }

    /** Until the sensor's battery alarm is raised by the scan: its id. */
    private String awaitBatteryAlarm(Sensor s) {
        String[] id = new String[1];
        Awaitility.await("the battery alarm of " + s.id + " (" + s.battery + " %)").atMost(WAIT)
                .pollInterval(Duration.ofMillis(50)).until(() -> {
                    for (JsonNode a : call("GET", "/alarms?sensor_id=" + s.id + "&active=true", Api.ADMIN, null).body().get("items")) {
                        if (a.get("type").asText().equals("battery_low")) {
                            id[0] = a.get("id").asText();
                        }
                    }
                    return id[0] != null;
                });
        return id[0];
    }

    /** Until the alarm is active (or not), as the alarm scan, every lockwatch.alarms.scan-interval, makes it. */
    private void awaitAlarm(Model.Alarm alarm, boolean active) {
        Awaitility.await("alarm " + alarm.id + " of " + alarm.sensor.id + (active ? " raised" : " cleared"))
                .atMost(WAIT).pollInterval(Duration.ofMillis(50))
                .until(() -> call("GET", "/alarms/" + alarm.id, Api.ADMIN, null).body().get("active").asBoolean() == active);
    }

    /** A measured time after every one before, in the past (applied as measured: never later than its arrival). */
    private long tick() {
        clock = Math.max(clock + 1, System.currentTimeMillis() - 2_000);
        return clock;
    }

    private String id() {
        return prefix + "r" + readingsSent++;
    }

    /** Batteries the readings say, in turn: across the low threshold (20) and its hysteresis (back at 30), both ways. */
    private static final int[] BATTERIES = {90, 40, 22, 19, 25, 12, 29, 31, 8, 50};

    /**
     * A reading; two in three say the device's battery too, which only an applied one keeps (issue 57), and which may
     * raise or clear its alarm. One that may close the door of an active alarm says none: the scan that clears the
     * door's alarm and the one that judges the battery might then be two, in either order.
     */
    private Sent sent(String sensor, int data, long ts) {
        String id = id();
        Sensor s = model.sensor(sensor);
        boolean mayClose = s != null && s.alarm != null && data == 1;
        // the LoRaWAN sensor's uplinks say no battery (its profile reads volts)
        boolean lorawan = sensor.equals(model.sensors[Model.LORAWAN].id);
        return new Sent(sensor, data, ts, id, readingsSent % 3 == 0 || mayClose || lorawan ? null
                : BATTERIES[readingsSent % BATTERIES.length]);
    }

    // --- alarms
    //
    // The clock of alarms is the readings' measured time, and the scan that raises them runs every
    // lockwatch.alarms.scan-interval: a door is left open too long by lowering its sensor's threshold below how long
    // it has been open, and the step waits for the scan to raise the alarm; the threshold then goes back to none,
    // which raises nothing more for this opening. The steps of its chains due soon are waited for too, sent; the
    // others are due in an hour, and stay pending until an acknowledgement or the clearing stops them.

    /** Delays of the steps due within a step of the test, and of those that never come due in one. */
    static final int SOON = 1, LATER = 3600;

    void doorLeftOpen(int slot) {
        Sensor s = model.sensors[slot];
        if (!s.registered || s.alarm != null) {
            return;
        }
        if (s.state == null || s.state != 0) {
            // opened first: a door left open is one that was opened
            readings(List.of(new Planned(slot, Kind.IN_ORDER, 0, 0)));
        }
        reached("a door left open too long");
        expect(call("PUT", "/sensors/" + s.id, Api.ADMIN, Map.of("open_alarm_seconds", 1)), 200);
        String[] id = new String[1];
        Awaitility.await("the alarm of " + s.id + ", open past its threshold of 1 s").atMost(WAIT)
                .pollInterval(Duration.ofMillis(50)).until(() -> {
                    for (JsonNode a : call("GET", "/alarms?sensor_id=" + s.id + "&active=true", Api.ADMIN, null).body().get("items")) {
                        if (a.get("type").asText().equals("door_open_too_long")) {
                            id[0] = a.get("id").asText();
                        }
                    }
                    return id[0] != null;
                });
        Map<String, Object> none = new HashMap<>();
        none.put("open_alarm_seconds", null);
        expect(call("PUT", "/sensors/" + s.id, Api.ADMIN, none), 200);
        Model.Alarm alarm = model.raise(s, id[0]);
        awaitSoonSteps(alarm);
    }

    /** The steps of the alarm due soon, waited for until sent, and sent in the model; none of a held alarm. */
    private void awaitSoonSteps(Model.Alarm alarm) {
        if (alarm.held) {
            return;
        }
        List<Model.AlarmStep> soon = alarm.steps.stream().filter(st -> st.afterSeconds < LATER)
                .filter(st -> st.state == Model.StepState.PENDING).sorted(Model.AlarmStep.ORDER).toList();
        if (!soon.isEmpty()) {
            Awaitility.await(soon.size() + " escalation steps of alarm " + alarm.id + " sent").atMost(WAIT)
                    .pollInterval(Duration.ofMillis(50)).until(() -> {
                        JsonNode steps = call("GET", "/alarms/" + alarm.id, Api.ADMIN, null).body().get("escalation");
                        int sent = 0;
                        for (JsonNode st : steps) {
                            sent += st.get("state").asText().equals("sent") ? 1 : 0;
                        }
                        return sent >= soon.size();
                    });
            soon.forEach(model::escalate);
            reached("escalation steps sent");
        }
    }

    /**
     * The sensor's active alarm acknowledged, by the operator or a client's admin key: 200 for the operator and a
     * key of a client linked to the sensor (the chain stops), 404 for another client's key, 409 once acknowledged.
     */
    void acknowledge(int slot, int clientSlot, boolean asClient) {
        Sensor s = model.sensors[slot];
        if (!s.registered || s.alarm == null) {
            return;
        }
        Key byKey = actor(clientSlot, asClient);
        Answer a = call("POST", "/alarms/" + s.alarm.id + "/acknowledge", byKey == null ? Api.ADMIN : byKey.token,
                Map.of("by", "model", "comment", "on my way"));
        if (byKey != null && !model.clients[clientSlot].links.contains(slot)) {
            assertThat(a.status()).as("acknowledged by a key of a client not linked: %s", a.body()).isEqualTo(404);
            reached("an alarm acknowledged by a key of a client not linked");
            return;
        }
        if (s.alarm.acknowledged) {
            assertThat(a.status()).as("acknowledged again: %s", a.body()).isEqualTo(409);
            reached("an alarm acknowledged again");
            return;
        }
        expect(a, 200);
        reached("an alarm acknowledged");
        model.acknowledge(s.alarm);
    }

    // --- maintenance windows: one open at a time here

    private String window;

    /** A window opened now over the registered sensors of these slots, for an hour (ended by {@link #endMaintenance}). */
    void maintenance(List<Integer> slots) {
        List<String> ids = slots.stream().distinct().map(i -> model.sensors[i]).filter(s -> s.registered).map(s -> s.id).toList();
        if (window != null || ids.isEmpty()) {
            return;
        }
        reached("a maintenance window opened");
        Answer a = call("POST", "/maintenance", Api.ADMIN, Map.of("reason", "model", "sensor_ids", ids,
                "ends_at", Instant.now().plus(Duration.ofHours(1)).toString()));
        expect(a, 201);
        assertThat(a.body().get("state").asText()).as(String.valueOf(a.body())).isEqualTo("open");
        window = a.body().get("id").asText();
        model.window = Set.copyOf(ids);
    }

    /**
     * The open window ended early: the maintenance scan releases it (waited for), sending the alarms it held that
     * are still active, whose chains start again (their steps due soon waited for too).
     */
    void endMaintenance() {
        if (window == null) {
            return;
        }
        reached("a maintenance window ended");
        expect(call("POST", "/maintenance/" + window + "/end", Api.ADMIN, null), 200);
        String id = window;
        Awaitility.await("maintenance window " + id + " released").atMost(WAIT).pollInterval(Duration.ofMillis(50))
                .until(() -> !absent(call("GET", "/maintenance/" + id, Api.ADMIN, null).body().path("released_at")));
        window = null;
        for (Model.Alarm a : model.release()) {
            reached("an alarm held by a window sent at its end");
            awaitSoonSteps(a);
        }
    }

    /** Escalation steps as drawn: to the client in that slot, due soon or not. */
    record PlannedStep(int client, boolean soon) {
        @Override
        public String toString() {
            return "c" + client + (soon ? " soon" : " later");
        }
    }

    /** The planned steps of live clients, the soon ones first, each after a longer delay than the one before. */
    private List<Model.ChainStep> chain(List<PlannedStep> planned) {
        List<Model.ChainStep> steps = new ArrayList<>();
        int soon = 0, later = 0;
        for (boolean first : new boolean[] {true, false}) {
            for (PlannedStep p : planned) {
                if (p.soon() == first && model.clients[p.client()] != null) {
                    steps.add(new Model.ChainStep(model.clients[p.client()], first ? SOON + soon++ : LATER + later++));
                }
            }
        }
        return steps;
    }

    private static Map<String, Object> chainBody(List<Model.ChainStep> steps) {
        return Map.of("steps", steps.stream().map(st -> Map.of("after_seconds", st.afterSeconds(), "client_id", st.to().id)).toList());
    }

    /** The operator sets the sensor's chain. */
    void sensorChain(int slot, List<PlannedStep> planned) {
        Sensor s = model.sensors[slot];
        if (!s.registered) {
            return;
        }
        List<Model.ChainStep> steps = chain(planned);
        Answer a = call("PUT", "/sensors/" + s.id + "/escalation", Api.ADMIN, chainBody(steps));
        expect(a, 200);
        reached("a sensor's chain set");
        s.chain = steps;
    }

    /**
     * A linked client's own chain for the sensor, set by the operator (any client) or by its admin key: another
     * client named gets 400 (steps[i].client_id), a chain the operator set naming another client 403; nothing changes.
     */
    void linkChain(int clientSlot, int slot, List<PlannedStep> planned, boolean asClient) {
        Client c = model.clients[clientSlot];
        Sensor s = model.sensors[slot];
        if (c == null || !c.links.contains(slot)) {
            return;
        }
        Key byKey = actor(clientSlot, asClient);
        List<Model.ChainStep> steps = chain(planned);
        Answer a = call("PUT", "/clients/" + c.id + "/sensors/" + s.id + "/escalation", byKey == null ? Api.ADMIN : byKey.token,
                chainBody(steps));
        if (byKey != null) {
            int other = -1;
            for (int i = 0; i < steps.size() && other < 0; i++) {
                other = steps.get(i).to() != c ? i : -1;
            }
            if (other >= 0) {
                expect(a, 400);
                assertThat(a.body().get("field").asText()).isEqualTo("steps[" + other + "].client_id");
                reached("a key's chain naming another client");
                return;
            }
            if (s.linkChains.getOrDefault(c, List.of()).stream().anyMatch(st -> st.to() != c)) {
                assertThat(a.status()).as("a key replacing the operator's chain: %s", a.body()).isEqualTo(403);
                reached("a key replacing the operator's chain");
                return;
            }
        }
        expect(a, 200);
        reached("a link's chain set");
        s.linkChains.put(c, steps);
    }

    /** The alarm filters of a client, set by the operator or its admin key. */
    static final List<List<String>> EVENT_TYPES = List.of(List.of(), List.of(Model.STATE_CHANGED),
            List.of(Model.STATE_CHANGED, Model.RAISED), List.of(Model.STATE_CHANGED, Model.CLEARED),
            List.of(Model.STATE_CHANGED, Model.BATTERY_LOW));
    static final List<List<String>> SEVERITIES = List.of(List.of(), List.of("critical"), List.of("major", "minor"));

    void filters(int slot, int types, int severities, boolean asClient) {
        Client c = model.clients[slot];
        if (c == null) {
            return;
        }
        reached("a client's filters set");
        Key byKey = actor(slot, asClient);
        Map<String, Object> body = new HashMap<>();
        body.put("event_types", EVENT_TYPES.get(types).isEmpty() ? null : EVENT_TYPES.get(types));
        body.put("alarm_severities", SEVERITIES.get(severities).isEmpty() ? null : SEVERITIES.get(severities));
        expect(call("PUT", "/clients/" + c.id, byKey == null ? Api.ADMIN : byKey.token, body), 200);
        c.eventTypes = EVENT_TYPES.get(types).isEmpty() ? null : Set.copyOf(EVENT_TYPES.get(types));
        c.severities = SEVERITIES.get(severities).isEmpty() ? null : Set.copyOf(SEVERITIES.get(severities));
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

    /**
     * A client's admin key tries to lift the expiry its operator set: refused, the key stays expired. The client gets
     * an admin key, and an expired key, from the operator first if it has none.
     */
    void liftExpiry(int slot, int index) {
        Client c = model.clients[slot];
        if (c == null) {
            return;
        }
        if (actor(slot, true) == null) {
            if (c.liveKeys() >= 3) {
                return;
            }
            createKey(slot, "client-admin", false);
        }
        if (c.keys.stream().noneMatch(k -> k.state == KeyState.EXPIRED)) {
            if (c.liveKeys() >= 3) {
                return;
            }
            createKey(slot, "client-read", false);
            expireKey(slot, c.keys.size() - 1);
        }
        List<Key> expired = c.keys.stream().filter(k -> k.state == KeyState.EXPIRED).toList();
        Key key = expired.get(index % expired.size()), byKey = actor(slot, true);
        Map<String, Object> never = new HashMap<>();
        never.put("expires_at", null);
        Answer a = call("PATCH", "/clients/" + c.id + "/keys/" + key.id, byKey.token, never);
        assertThat(a.status()).as("a client-admin key lifting the operator's expiry: " + a.body()).isEqualTo(403);
        assertThat(a.body().path("field").asText()).as(String.valueOf(a.body())).isEqualTo("expires_at");
        reached("a client-admin key lifting an operator's expiry");
    }

    /** A client's key acts on another client's key: 404, as if there were none, and nothing changes. */
    void revokeAcross(int slot, int index, int otherSlot, int otherIndex) {
        if (slot == otherSlot || key(slot, index) == null || key(slot, index).state != KeyState.ACTIVE
                || key(otherSlot, otherIndex) == null) {
            return;
        }
        reached("a key revoking across clients");
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
            assertThat(absent(a.body().path("device_id")) ? null : a.body().get("device_id").asText())
                    .as("device id of sensor %s", s.id).isEqualTo(s.deviceId);
            assertThat(absent(a.body().path("profile"))).as("profile of sensor %s", s.id).isEqualTo(s.deviceId == null);
            JsonNode battery = a.body().path("health").path("battery");
            assertThat(battery.isMissingNode() || battery.isNull() ? null : battery.asInt())
                    .as("battery of sensor %s (of its newest applied reading that gave one)", s.id).isEqualTo(s.battery);
        }
        // the batteries to change: the list filtered by battery is the model's sensors at or below the threshold
        Answer low = call("GET", "/sensors?limit=1000&q=" + prefix + "s&battery_at_most=" + Model.BATTERY_LOW_AT,
                Api.ADMIN, null);
        expect(low, 200);
        assertThat(low.body().get("items").findValuesAsText("id")).as("sensors listed with a battery at or below %d %%",
                Model.BATTERY_LOW_AT).containsExactlyInAnyOrderElementsOf(java.util.Arrays.stream(model.sensors)
                .filter(s -> s.registered && s.battery != null && s.battery <= Model.BATTERY_LOW_AT)
                .map(s -> s.id).toList());
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
        for (Model.Alarm a : model.alarms) {
            checkAlarm(a);
        }
        for (Sensor s : model.sensors) {
            checkChains(s);
        }
        for (Client c : model.live()) {
            checkFeed(c);
        }
        checkPeople();
        checkAudit();
    }

    /**
     * An alarm as the operator reads it (active, acknowledged, each step's state), its sensor's active alarms, and
     * as each live key of a linked client reads it: only the steps sent to its own client, of the sensor's chain or
     * its own.
     */
    private void checkAlarm(Model.Alarm a) {
        Answer read = call("GET", "/alarms/" + a.id, Api.ADMIN, null);
        expect(read, 200);
        JsonNode alarm = read.body();
        assertThat(alarm.get("active").asBoolean()).as("alarm %s of %s active", a.id, a.sensor.id).isEqualTo(a.active);
        assertThat(absent(alarm.path("acknowledged_at"))).as("alarm %s acknowledged: %s", a.id, alarm).isEqualTo(!a.acknowledged);
        assertThat(steps(alarm.get("escalation"))).as("the steps of alarm %s", a.id).containsExactlyInAnyOrderElementsOf(
                a.steps.stream().map(World::step).toList());
        if (a.sensor.registered) {
            JsonNode active = call("GET", "/alarms?sensor_id=" + a.sensor.id + "&active=true", Api.ADMIN, null).body().get("items");
            assertThat(active.findValuesAsText("id")).as("active alarms of %s", a.sensor.id).containsExactlyInAnyOrderElementsOf(
                    java.util.stream.Stream.of(a.sensor.alarm, a.sensor.batteryAlarm).filter(java.util.Objects::nonNull)
                            .map(x -> x.id).toList());
        }
        assertThat(alarm.get("type").asText()).as("type of alarm %s", a.id).isEqualTo(a.battery ? "battery_low" : "door_open_too_long");
        assertThat(alarm.get("severity").asText()).as("severity of alarm %s", a.id).isEqualTo(a.severity());
        if (a.sensor.registered && (a.sensor.alarm == a || a.sensor.batteryAlarm == a)) {
            int slot = model.slot(a.sensor);
            for (Client c : model.live()) {
                if (!c.links.contains(slot)) {
                    continue;
                }
                for (Key k : c.keys) {
                    if (k.state != KeyState.ACTIVE) {
                        continue;
                    }
                    Answer seen = call("GET", "/alarms/" + a.id, k.token, null);
                    expect(seen, 200);
                    assertThat(steps(seen.body().get("escalation"))).as("the steps of alarm %s shown to key %s of %s", a.id, k.id, c.id)
                            .containsExactlyInAnyOrderElementsOf(a.steps.stream()
                                    .filter(st -> st.to == c && (st.chain == null || st.chain == c)).map(World::step).toList());
                }
            }
        }
    }

    private static List<String> steps(JsonNode escalation) {
        List<String> steps = new ArrayList<>();
        escalation.forEach(st -> steps.add((absent(st.path("chain_client_id")) ? "sensor" : st.get("chain_client_id").asText())
                + "#" + st.get("step").asInt() + " to " + st.get("client_id").asText() + " after " + st.get("after_seconds").asInt()
                + " " + st.get("state").asText()));
        return steps;
    }

    private static String step(Model.AlarmStep st) {
        return (st.chain == null ? "sensor" : st.chain.id) + "#" + st.step + " to " + st.to.id + " after " + st.afterSeconds
                + " " + st.state.name().toLowerCase();
    }

    /** The sensor's chain, each linked client's own as the operator and as its keys read it (their own steps only). */
    private void checkChains(Sensor s) {
        if (!s.registered) {
            return;
        }
        Answer chain = call("GET", "/sensors/" + s.id + "/escalation", Api.ADMIN, null);
        expect(chain, 200);
        assertThat(chainSteps(chain.body())).as("the chain of %s", s.id).isEqualTo(chainSteps(s.chain));
        int slot = model.slot(s);
        for (Client c : model.live()) {
            if (!c.links.contains(slot)) {
                continue;
            }
            String path = "/clients/" + c.id + "/sensors/" + s.id + "/escalation";
            List<Model.ChainStep> own = s.linkChains.getOrDefault(c, List.of());
            Answer a = call("GET", path, Api.ADMIN, null);
            expect(a, 200);
            assertThat(chainSteps(a.body())).as("the chain of %s for %s", s.id, c.id).isEqualTo(chainSteps(own));
            for (Key k : c.keys) {
                if (k.state == KeyState.ACTIVE) {
                    Answer seen = call("GET", path, k.token, null);
                    expect(seen, 200);
                    assertThat(chainSteps(seen.body())).as("the chain of %s for %s, as its key %s reads it", s.id, c.id, k.id)
                            .isEqualTo(chainSteps(own.stream().filter(st -> st.to() == c).toList()));
                }
            }
        }
    }

    private static List<String> chainSteps(JsonNode chain) {
        List<String> steps = new ArrayList<>();
        chain.get("steps").forEach(st -> steps.add(st.get("after_seconds").asInt() + " " + st.get("client_id").asText()));
        return steps;
    }

    private static List<String> chainSteps(List<Model.ChainStep> chain) {
        return chain.stream().map(st -> st.afterSeconds() + " " + st.to().id).toList();
    }

    /**
     * The client's pull feed, read with the operator's token and with each of its live keys: every notification it
     * was given (its outbox rows: those a pause superseded or an unlinking cancelled too), each sensor's in sequence
     * order, and every webhook it heard is there under the same id.
     */
    private void checkFeed(Client c) {
        int due = c.rows.size();
        List<JsonNode> feed = new ArrayList<>();
        try {
            Awaitility.await("the feed of " + c.id + " to hold " + due + " events").atMost(WAIT).pollInterval(Duration.ofMillis(50))
                    .until(() -> {
                        feed.clear();
                        feed.addAll(feed(c, Api.ADMIN));
                        return feed.size() >= due;
                    });
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            // the comparison below says what is missing
        }
        Map<String, List<Event>> got = new LinkedHashMap<>();
        Map<String, String> ids = new HashMap<>();
        for (JsonNode e : feed) {
            Event event = event(e);
            got.computeIfAbsent(e.get("sensor_id").asText(), k -> new ArrayList<>()).add(event);
            ids.put(e.get("id").asText(), e.get("sensor_id").asText() + " " + event);
        }
        Map<String, List<Event>> expected = new LinkedHashMap<>();
        for (Model.Row r : c.rows) {
            expected.computeIfAbsent(r.sensorId, k -> new ArrayList<>()).add(r.event);
        }
        expected.values().forEach(v -> v.sort(java.util.Comparator.comparingLong(Event::sequence)));
        assertThat(got).as("the feed of client %s, by sensor", c.id).isEqualTo(expected);
        for (WebhookReceiver.Received r : receiver.at(c.path)) {
            JsonNode e = read(r.body());
            assertThat(ids.get(e.get("id").asText())).as("webhook %s in the feed of %s", r.body(), c.id)
                    .isEqualTo(e.get("sensor_id").asText() + " " + event(e));
        }
        for (Key k : c.keys) {
            if (k.state == KeyState.ACTIVE) {
                assertThat(feed(c, k.token).stream().map(e -> e.get("id").asText()).toList())
                        .as("the feed of %s read with its key %s", c.id, k.id)
                        .isEqualTo(feed.stream().map(e -> e.get("id").asText()).toList());
            }
        }
    }

    private List<JsonNode> feed(Client c, String token) {
        List<JsonNode> items = new ArrayList<>();
        String after = null;
        while (true) {
            Answer page = call("GET", "/clients/" + c.id + "/feed?limit=500" + (after == null ? "" : "&after=" + after), token, null);
            expect(page, 200);
            page.body().get("items").forEach(items::add);
            after = page.body().get("next_cursor").asText();
            if (!page.body().path("more").asBoolean()) {
                return items;
            }
        }
    }

    private static boolean absent(JsonNode n) {
        return n.isNull() || n.isMissingNode();
    }

    private static Event event(JsonNode e) {
        return new Event(e.get("type").asText(), state(e),
                absent(e.path("previous_state")) ? null : e.get("previous_state").asInt(),
                e.get("sequence").asLong(), e.path("maintenance").asBoolean(false));
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
                Answer feed = call("GET", "/clients/" + other.id + "/feed", k.token, null);
                assertThat(feed.status()).as("key %s of %s on the feed of %s client %s", k.id, c.id,
                        other.gone ? "deleted" : "another", other.id).isEqualTo(404);
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
            heard.computeIfAbsent(e.get("sensor_id").asText(), k -> new ArrayList<>()).add(event(e));
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
        Answer a;
        try {
            a = api.call(method, path, token, body);
        } catch (Exception e) {
            throw new AssertionError(method + " " + path + ": " + e, e);
        }
        if (!method.equals("GET") && !path.equals("/readings") && !path.equals("/adapters/the-things-stack/uplinks")) {
            changes.add(method + " " + path.replaceFirst("\\?.*", "").substring(1) + " " + actor(token, a.status()) + " " + a.status());
        }
        return a;
    }

    /** Who the audit log names for a call with this token: nobody, when the token was refused as no credential. */
    private String actor(String token, int status) {
        if (status == 401) {
            return "anonymous";
        }
        if (token.equals(Api.ADMIN)) {
            return "full-token-1";
        }
        if (token.equals(Api.READER)) {
            return "read-token-1";
        }
        for (Person p : people) {
            if (token.equals(p.token)) {
                return p.name;
            }
        }
        return model.allClients.stream().flatMap(c -> c.keys.stream()).filter(k -> k.token.equals(token))
                .map(k -> "client-key-" + k.id).findFirst().orElse("unknown");
    }

    /**
     * The audit log holds every change of this run, once, with who made it and how it ended; and nothing else since.
     * Its filters agree: a client's resource finds what was done to it and under it (its keys, links, secret), for
     * every client of the run, the deleted ones too and none of another client made after it; a person's name finds
     * what that person did.
     */
    private void checkAudit() {
        assertAudited("", changes, "the audit log since this run began");
        for (Model.Client c : model.allClients) {
            String resource = "clients/" + c.id;
            assertAudited("&resource=" + resource, changes.stream()
                    .filter(ch -> ch.split(" ")[1].equals(resource) || ch.split(" ")[1].startsWith(resource + "/")).toList(),
                    "the audit log of " + resource + " and below");
        }
        for (Person p : people) {
            assertAudited("&actor=" + p.name, changes.stream().filter(ch -> ch.split(" ")[2].equals(p.name)).toList(),
                    "the audit log of what " + p.name + " did");
        }
    }

    /** The audit log's entries since this run began that the query narrows to are these, as {@link #changes} names them. */
    private void assertAudited(String query, List<String> expected, String what) {
        HttpResponse<String> export;
        try {
            export = api.send("GET", "/api/v1/audit?format=jsonl&from="
                    + java.net.URLEncoder.encode(began.toString(), java.nio.charset.StandardCharsets.UTF_8) + query, "Bearer " + Api.READER, null);
        } catch (Exception e) {
            throw new AssertionError("the audit log: " + e, e);
        }
        List<String> recorded = export.body().lines().map(World::read)
                .filter(e -> e.hasNonNull("method")) // the routes directory's reloads are no run's
                .map(e -> e.get("method").asText() + " " + e.get("resource").asText() + " " + e.get("actor").asText() + " "
                        + e.get("status").asInt())
                .toList();
        assertThat(recorded).as(what).containsExactlyInAnyOrderElementsOf(expected);
        // a range with no entry at all is a 204 with no body
        assertThat(export.statusCode()).as(what + ": " + export.body()).isEqualTo(export.body().isEmpty() ? 204 : 200);
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
