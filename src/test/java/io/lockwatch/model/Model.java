package io.lockwatch.model;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The reference model of {@link ApiModelTest}: what the service should hold and what each client should have
 * heard, after the same operations, by the rules the README and the contract state. It knows nothing of HTTP.
 */
final class Model {

    static final int SENSORS = 3, CLIENTS = 3;
    /** The sensor slot registered as a LoRaWAN device, whose readings come through The Things Stack's webhook. */
    static final int LORAWAN = SENSORS - 1;
    /** How many message ids a sensor remembers (SensorStateStore.RECENT_IDS): a duplicate is re-sent within them. */
    static final int RECENT_IDS = 8;
    static final String STATE_CHANGED = "sensor.state_changed", RAISED = "sensor.alarm_raised",
            CLEARED = "sensor.alarm_cleared", ESCALATED = "sensor.alarm_escalated", BATTERY_LOW = "sensor.battery_low",
            BATTERY_RESTORED = "sensor.battery_restored";
    /** Every door's alarm here has its sensor's severity unset: major; a battery's is minor (the default). */
    static final String SEVERITY = "major", BATTERY_SEVERITY = "minor";
    /** lockwatch.alarms.battery-low-percent and its hysteresis: the defaults. */
    static final int BATTERY_LOW_AT = 20, BATTERY_BACK_AT = 30;

    /** One event as a webhook carries it. */
    record Event(String type, Integer state, Integer previousState, long sequence, boolean maintenance) {
        @Override
        public String toString() {
            return (type.equals(STATE_CHANGED) ? sequence + ":" + previousState + "->" + state
                    : sequence + ":" + type.substring("sensor.".length())) + (maintenance ? "(m)" : "");
        }
    }

    /** A reading as sent. */
    /** {@code battery}: the device's, percent, or null when the reading says nothing of it. */
    record Sent(String sensorId, int data, long ts, String messageId, Integer battery) {
    }

    enum KeyState { ACTIVE, EXPIRED, REVOKED }

    static final class Key {
        final String id, token, role;
        KeyState state = KeyState.ACTIVE;

        Key(String id, String token, String role) {
            this.id = id;
            this.token = token;
            this.role = role;
        }

        boolean admin() {
            return role.equals("client-admin");
        }
    }

    /** A step of a chain: to this client after so long. */
    record ChainStep(Client to, int afterSeconds) {
    }

    enum StepState { PENDING, SENT, STOPPED }

    /** A step of an alarm: of the sensor's chain ({@code chain} null) or of that linked client's. */
    static final class AlarmStep {
        final Client chain, to;
        final int step, afterSeconds;
        StepState state = StepState.PENDING;
        Event event;

        AlarmStep(Client chain, int step, int afterSeconds, Client to) {
            this.chain = chain;
            this.step = step;
            this.afterSeconds = afterSeconds;
            this.to = to;
        }

        /** The order the scan sends due steps in: due time (all raised at once), step, the sensor's chain last. */
        static final Comparator<AlarmStep> ORDER = Comparator.<AlarmStep>comparingInt(s -> s.afterSeconds)
                .thenComparingInt(s -> s.step)
                .thenComparing(s -> s.chain == null ? null : s.chain.id, Comparator.nullsLast(Comparator.naturalOrder()));
    }

    static final class Alarm {
        final String id;
        final Sensor sensor;
        /** A battery's (battery_low), or a door's (door_open_too_long). */
        final boolean battery;
        final List<AlarmStep> steps = new ArrayList<>();
        boolean active = true, acknowledged;
        /** Raised inside a maintenance window: recorded, not sent until the window ends. */
        boolean held;

        Alarm(String id, Sensor sensor, boolean battery) {
            this.id = id;
            this.sensor = sensor;
            this.battery = battery;
        }

        String severity() {
            return battery ? BATTERY_SEVERITY : SEVERITY;
        }

        String raising() {
            return battery ? BATTERY_LOW : RAISED;
        }

        String clearing() {
            return battery ? BATTERY_RESTORED : CLEARED;
        }
    }

    /** A sensor id (a slot) and its registration now; a registration again is a new sensor. */
    static final class Sensor {
        final String id;
        boolean registered;
        Integer state;
        long sequence;
        Long lastTs;
        /** The battery of its newest applied reading that gave one; null: none since it was registered. */
        Integer battery;
        final Deque<String> seen = new ArrayDeque<>();
        /** Every reading sent to this id, registered or not: what a duplicate re-sends. */
        final List<Sent> sent = new ArrayList<>();
        /** Its door's active alarm, or null. */
        Alarm alarm;
        /** Its battery's active alarm, or null. */
        Alarm batteryAlarm;
        /** Its Zigbee2MQTT device, registered with the profile zigbee2mqtt; null: none. */
        String deviceId;
        List<ChainStep> chain = List.of();
        /** The chains of its links: per linked client. */
        final Map<Client, List<ChainStep>> linkChains = new LinkedHashMap<>();

        Sensor(String id) {
            this.id = id;
        }

        /**
         * A new sensor under the id: no state, nothing seen, no alarm, no chains; its events go on with the id's
         * numbering (its first sequence follows the last registration's), so that a sensor id and a sequence name one
         * event for ever.
         */
        void register() {
            registered = true;
            state = null;
            lastTs = null;
            battery = null;
            seen.clear();
            alarm = null;
            batteryAlarm = null;
            chain = List.of();
            linkChains.clear();
        }
    }

    enum RowState { PENDING, DELIVERED, SUPERSEDED, CANCELLED }

    /** A notification: one event for one client, a row of its outbox and of its feed. */
    static final class Row {
        final String sensorId;
        final Event event;
        final Alarm alarm;
        RowState state = RowState.PENDING;

        Row(String sensorId, Event event, Alarm alarm) {
            this.sensorId = sensorId;
            this.event = event;
            this.alarm = alarm;
        }

        /** What a paused client's queue collapses by: the newest of each kind stays (Outbox.COLLAPSE). */
        String kind() {
            return event.type().startsWith("sensor.connection") ? "connectivity" : event.type();
        }
    }

    /** A client as created; a client deleted stays here (gone) so that what it heard and its keys are still checked. */
    static final class Client {
        final int slot;
        final String id, secret, path;
        boolean gone, enabled = true;
        /** null: every type (severity). */
        Set<String> eventTypes, severities;
        final Set<Integer> links = new LinkedHashSet<>();
        /** Per sensor id, what must have been heard, in order. */
        final Map<String, List<Event>> heard = new LinkedHashMap<>();
        /** Every notification it was given, in the order given: its feed. */
        final List<Row> rows = new ArrayList<>();
        final List<Key> keys = new ArrayList<>();

        Client(int slot, String id, String secret, String path) {
            this.slot = slot;
            this.id = id;
            this.secret = secret;
            this.path = path;
        }

        int expectedCount() {
            return heard.values().stream().mapToInt(List::size).sum();
        }

        long liveKeys() {
            return keys.stream().filter(k -> k.state == KeyState.ACTIVE).count();
        }

        /** Whether its filters take the event: its type, and an alarm's severity (Outbox.notificationsFor). */
        boolean takes(String type, Alarm alarm) {
            return (eventTypes == null || eventTypes.contains(type))
                    && (severities == null || alarm == null || severities.contains(alarm.severity()));
        }

        Row row(Event e, String sensorId) {
            return rows.stream().filter(r -> r.sensorId.equals(sensorId) && r.event.equals(e)).findFirst().orElse(null);
        }

        void cancelPending(String sensorId, java.util.function.Predicate<Row> which) {
            for (Row r : rows) {
                if (r.state == RowState.PENDING && r.sensorId.equals(sensorId) && which.test(r)) {
                    r.state = RowState.CANCELLED;
                }
            }
        }
    }

    final Sensor[] sensors = new Sensor[SENSORS];
    final Client[] clients = new Client[CLIENTS];
    final List<Client> allClients = new ArrayList<>();
    /** Every alarm raised, active or not. */
    final List<Alarm> alarms = new ArrayList<>();
    /** The sensor ids of the open maintenance window, or null: one at a time here. */
    Set<String> window;

    boolean inWindow(Sensor s) {
        return window != null && window.contains(s.id);
    }

    Model(String prefix) {
        for (int i = 0; i < SENSORS; i++) {
            sensors[i] = new Sensor(prefix + "s" + i);
        }
    }

    List<Client> live() {
        List<Client> live = new ArrayList<>();
        for (Client c : clients) {
            if (c != null) {
                live.add(c);
            }
        }
        return live;
    }

    Sensor sensor(String id) {
        for (Sensor s : sensors) {
            if (s.id.equals(id)) {
                return s;
            }
        }
        return null;
    }

    int slot(Sensor s) {
        return java.util.Arrays.asList(sensors).indexOf(s);
    }

    /**
     * A notification of the event for the client (none if it has one of it already: one per event and client). An
     * enabled client hears it; a paused one's queue holds it, the older pending ones of its kind superseded.
     */
    void give(Client c, Sensor s, Event e, Alarm alarm) {
        if (c.gone || c.row(e, s.id) != null) {
            return;
        }
        Row row = new Row(s.id, e, alarm);
        c.rows.add(row);
        if (c.enabled) {
            row.state = RowState.DELIVERED;
            c.heard.computeIfAbsent(s.id, k -> new ArrayList<>()).add(e);
            return;
        }
        for (Row r : c.rows) {
            if (r != row && r.state == RowState.PENDING && r.sensorId.equals(s.id) && r.kind().equals(row.kind())) {
                r.state = RowState.SUPERSEDED;
            }
        }
    }

    /** The event for every client linked to the sensor whose filters take it. */
    private void toLinked(Sensor s, Event e, Alarm alarm) {
        int slot = slot(s);
        for (Client c : live()) {
            if (c.links.contains(slot) && c.takes(e.type(), alarm)) {
                give(c, s, e, alarm);
            }
        }
    }

    void deleteSensor(int slot) {
        Sensor s = sensors[slot];
        // its undelivered notifications are cancelled, then an active alarm ends with its clearing (V42) to those
        // told of it: sent a step, or given its raising (not cancelled just now) and taking clearings
        for (Client c : live()) {
            c.cancelPending(s.id, r -> true);
        }
        // each active alarm in the order of its type's name (V47): battery_low, then door_open_too_long
        for (Alarm a : java.util.stream.Stream.of(s.batteryAlarm, s.alarm).filter(java.util.Objects::nonNull).toList()) {
            List<Client> told = new ArrayList<>(stepClients(a));
            for (Client c : live()) {
                boolean raised = c.rows.stream().anyMatch(r -> r.alarm == a && r.event.type().equals(a.raising())
                        && r.state != RowState.CANCELLED);
                if (raised && (c.eventTypes == null || c.eventTypes.contains(a.clearing())) && !told.contains(c)) {
                    told.add(c);
                }
            }
            // recorded by the deletion's trigger, beside the window's marking: never "maintenance"
            Event e = new Event(a.clearing(), s.state, null, ++s.sequence, false);
            end(a);
            a.held = false; // what a window held of it goes with it (V41)
            for (Client c : told) {
                give(c, s, e, a);
            }
        }
        s.registered = false;
        s.alarm = null;
        s.batteryAlarm = null;
        s.chain = List.of();
        s.linkChains.clear();
        for (Client c : live()) {
            c.links.remove(slot);
        }
    }

    /** The clients an alarm's sent steps went to, but those whose step was cancelled before it went. */
    private List<Client> stepClients(Alarm a) {
        List<Client> to = new ArrayList<>();
        for (AlarmStep st : a.steps) {
            if (st.state == StepState.SENT && !st.to.gone && !to.contains(st.to)) {
                Row r = st.to.row(st.event, a.sensor.id);
                if (r != null && r.state != RowState.CANCELLED) {
                    to.add(st.to);
                }
            }
        }
        return to;
    }

    private void end(Alarm a) {
        a.active = false;
        a.steps.stream().filter(st -> st.state == StepState.PENDING).forEach(st -> st.state = StepState.STOPPED);
    }

    void deleteClient(int slot) {
        Client c = clients[slot];
        c.gone = true;
        clients[slot] = null;
        // the steps naming it go with it (ON DELETE CASCADE), and its own chains with its links
        for (Sensor s : sensors) {
            s.chain = s.chain.stream().filter(st -> st.to() != c).toList();
            s.linkChains.remove(c);
            s.linkChains.replaceAll((k, v) -> v.stream().filter(st -> st.to() != c).toList());
        }
    }

    void unlink(int client, int sensor) {
        Client c = clients[client];
        c.links.remove(sensor);
        c.cancelPending(sensors[sensor].id, r -> true);
        sensors[sensor].linkChains.remove(c);
    }

    void resume(int slot) {
        Client c = clients[slot];
        c.enabled = true;
        c.rows.stream().filter(r -> r.state == RowState.PENDING).sorted(Comparator.comparingLong(r -> r.event.sequence()))
                .forEach(r -> {
                    r.state = RowState.DELIVERED;
                    c.heard.computeIfAbsent(r.sensorId, k -> new ArrayList<>()).add(r.event);
                });
    }

    /**
     * A reading applied as ingest does (SensorStateStore.decide): unknown sensor, a message id seen, older than the
     * newest applied (stale) change nothing; else it is applied, and a change of state is an event for every client
     * linked now that takes it.
     *
     * @return whether it closed the door of an active alarm (which the alarm scan then clears)
     */
    boolean apply(Sent r) {
        Sensor s = sensor(r.sensorId());
        if (s == null || !s.registered) {
            return false;
        }
        if (s.seen.contains(r.messageId())) {
            return false;
        }
        if (s.lastTs != null && r.ts() < s.lastTs) {
            return false;
        }
        s.lastTs = r.ts();
        if (r.battery() != null) {
            s.battery = r.battery();
        }
        s.seen.addFirst(r.messageId());
        if (s.seen.size() > RECENT_IDS) {
            s.seen.removeLast();
        }
        if (s.state == null || s.state != r.data()) {
            s.sequence++;
            Event e = new Event(STATE_CHANGED, r.data(), s.state, s.sequence, inWindow(s));
            s.state = r.data();
            toLinked(s, e, null);
            return s.alarm != null && r.data() == 1;
        }
        return false;
    }

    /**
     * The alarm of a door left open, raised (its id the service's): the sensor's next sequence, to the linked clients
     * whose filters take it; its steps from the chains as they are now.
     */
    Alarm raise(Sensor s, String id) {
        Alarm a = new Alarm(id, s, false);
        for (int i = 0; i < s.chain.size(); i++) {
            a.steps.add(new AlarmStep(null, i + 1, s.chain.get(i).afterSeconds(), s.chain.get(i).to()));
        }
        s.linkChains.forEach((c, chain) -> {
            for (int i = 0; i < chain.size(); i++) {
                a.steps.add(new AlarmStep(c, i + 1, chain.get(i).afterSeconds(), chain.get(i).to()));
            }
        });
        s.alarm = a;
        alarms.add(a);
        Event e = new Event(RAISED, 0, null, ++s.sequence, inWindow(s));
        if (inWindow(s)) {
            a.held = true;
        } else {
            toLinked(s, e, a);
        }
        return a;
    }

    /** A due step sent: the sensor's next sequence, to its client alone, whatever it filters. */
    void escalate(AlarmStep st) {
        Sensor s = sensorOf(st);
        st.state = StepState.SENT;
        st.event = new Event(ESCALATED, s.state, null, ++s.sequence, false);
        give(st.to, s, st.event, s.alarm);
    }

    private Sensor sensorOf(AlarmStep st) {
        for (Alarm a : alarms) {
            if (a.steps.contains(st)) {
                return a.sensor;
            }
        }
        throw new IllegalStateException("a step of no alarm");
    }

    /** Acknowledged: its pending steps stop, and what of its sent steps still waits for a client is cancelled. */
    void acknowledge(Alarm a) {
        a.acknowledged = true;
        a.steps.stream().filter(st -> st.state == StepState.PENDING).forEach(st -> st.state = StepState.STOPPED);
        cancelSteps(a);
    }

    private void cancelSteps(Alarm a) {
        for (Client c : live()) {
            c.cancelPending(a.sensor.id, r -> r.alarm == a && r.event.type().equals(ESCALATED));
        }
    }

    /**
     * The alarm of a closed door cleared by the scan: the sensor's next sequence; its pending steps stopped and the
     * unsent ones cancelled; heard by the linked clients whose filters take it, by those given its raising that are
     * still linked and take clearings, and by those sent a step (not cancelled), linked or not, whatever they filter.
     */
    void clear(Sensor s) {
        Alarm a = s.alarm;
        s.alarm = null;
        clear(s, a);
    }

    private void clear(Sensor s, Alarm a) {
        cancelSteps(a);
        List<Client> stepClients = stepClients(a);
        end(a);
        Event e = new Event(a.clearing(), s.state, null, ++s.sequence, inWindow(s));
        if (a.held) {
            // the clearing of what a window held resolves it: nobody heard of the alarm, nobody hears of its end
            a.held = false;
            return;
        }
        toLinked(s, e, a);
        int slot = slot(s);
        for (Client c : live()) {
            boolean raised = c.rows.stream().anyMatch(r -> r.alarm == a && r.event.type().equals(a.raising()));
            if (raised && c.links.contains(slot) && (c.eventTypes == null || c.eventTypes.contains(a.clearing()))) {
                give(c, s, e, a);
            }
        }
        for (Client c : stepClients) {
            give(c, s, e, a);
        }
    }

    /** What the alarm scan does with the sensor's battery as it is now: raise (true), clear (false), nothing (null). */
    Boolean batteryJudged(Sensor s) {
        if (s.battery == null) {
            return null;
        }
        if (s.batteryAlarm == null && s.battery <= BATTERY_LOW_AT) {
            return true;
        }
        return s.batteryAlarm != null && s.battery >= BATTERY_BACK_AT ? false : null;
    }

    /**
     * The battery's alarm raised by the scan (its id the service's): the sensor's next sequence, to the linked clients
     * whose filters take it (its severity minor); no escalation (a battery calls nobody out).
     */
    Alarm raiseBattery(Sensor s, String id) {
        Alarm a = new Alarm(id, s, true);
        s.batteryAlarm = a;
        alarms.add(a);
        Event e = new Event(BATTERY_LOW, s.state, null, ++s.sequence, inWindow(s));
        if (inWindow(s)) {
            a.held = true;
        } else {
            toLinked(s, e, a);
        }
        return a;
    }

    /** The battery's alarm cleared by the scan, as a door's is. */
    void clearBattery(Sensor s) {
        Alarm a = s.batteryAlarm;
        s.batteryAlarm = null;
        clear(s, a);
    }

    /**
     * The window ended and released: each alarm it held that is still active is sent now, as a raising at the
     * sensor's next sequence, to the linked clients whose filters take it; its chain starts again from now.
     *
     * @return the alarms released
     */
    List<Alarm> release() {
        List<Alarm> released = new ArrayList<>();
        window = null;
        for (Sensor s : sensors) {
            // a sensor's held kinds in descending order of their names (MaintenanceRelease): battery_low, then alarm
            for (Alarm a : java.util.stream.Stream.of(s.batteryAlarm, s.alarm).filter(java.util.Objects::nonNull).toList()) {
                if (s.registered && a.held) {
                    a.held = false;
                    toLinked(s, new Event(a.raising(), a.battery ? s.state : Integer.valueOf(0), null, ++s.sequence, false), a);
                    released.add(a);
                }
            }
        }
        return released;
    }
}
