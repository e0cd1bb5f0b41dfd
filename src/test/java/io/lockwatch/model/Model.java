package io.lockwatch.model;

import java.util.ArrayDeque;
import java.util.ArrayList;
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
    /** How many message ids a sensor remembers (SensorStateStore.RECENT_IDS): a duplicate is re-sent within them. */
    static final int RECENT_IDS = 8;

    /** One event as a webhook carries it. */
    record Event(String type, Integer state, Integer previousState, long sequence) {
        @Override
        public String toString() {
            return sequence + ":" + previousState + "->" + state;
        }
    }

    /** A reading as sent. */
    record Sent(String sensorId, int data, long ts, String messageId) {
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

    /** A sensor id (a slot) and its registration now; a registration again is a new sensor. */
    static final class Sensor {
        final String id;
        boolean registered;
        Integer state;
        long sequence;
        Long lastTs;
        final Deque<String> seen = new ArrayDeque<>();
        /** Every reading sent to this id, registered or not: what a duplicate re-sends. */
        final List<Sent> sent = new ArrayList<>();

        Sensor(String id) {
            this.id = id;
        }

        /**
         * A new sensor under the id: no state, nothing seen; its events go on with the id's numbering (its first
         * sequence follows the last registration's), so that a sensor id and a sequence name one event for ever.
         */
        void register() {
            registered = true;
            state = null;
            lastTs = null;
            seen.clear();
        }
    }

    /** A client as created; a client deleted stays here (gone) so that what it heard and its keys are still checked. */
    static final class Client {
        final int slot;
        final String id, secret, path;
        boolean gone, enabled = true;
        final Set<Integer> links = new LinkedHashSet<>();
        /** Per sensor id, what must have been heard, in order. */
        final Map<String, List<Event>> heard = new LinkedHashMap<>();
        /** While paused: per sensor id, the newest event waiting (the older ones collapse into it). */
        final Map<String, Event> waiting = new LinkedHashMap<>();
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
    }

    final Sensor[] sensors = new Sensor[SENSORS];
    final Client[] clients = new Client[CLIENTS];
    final List<Client> allClients = new ArrayList<>();

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

    void deleteSensor(int slot) {
        Sensor s = sensors[slot];
        s.registered = false;
        for (Client c : live()) {
            c.links.remove(slot);
            c.waiting.remove(s.id); // its undelivered notifications are cancelled
        }
    }

    void deleteClient(int slot) {
        Client c = clients[slot];
        c.gone = true;
        c.waiting.clear();
        clients[slot] = null;
    }

    void unlink(int client, int sensor) {
        Client c = clients[client];
        c.links.remove(sensor);
        c.waiting.remove(sensors[sensor].id);
    }

    void resume(int slot) {
        Client c = clients[slot];
        c.enabled = true;
        c.waiting.forEach((sensor, e) -> c.heard.computeIfAbsent(sensor, k -> new ArrayList<>()).add(e));
        c.waiting.clear();
    }

    /**
     * A reading applied as ingest does (SensorStateStore.decide): unknown sensor, a message id seen, older than the
     * newest applied (stale) change nothing; else it is applied, and a change of state is an event for every client
     * linked now.
     */
    void apply(Sent r) {
        Sensor s = sensor(r.sensorId());
        if (s == null || !s.registered) {
            return;
        }
        if (s.seen.contains(r.messageId())) {
            return;
        }
        if (s.lastTs != null && r.ts() < s.lastTs) {
            return;
        }
        s.lastTs = r.ts();
        s.seen.addFirst(r.messageId());
        if (s.seen.size() > RECENT_IDS) {
            s.seen.removeLast();
        }
        if (s.state == null || s.state != r.data()) {
            s.sequence++;
            Event e = new Event("sensor.state_changed", r.data(), s.state, s.sequence);
            s.state = r.data();
            int slot = java.util.Arrays.asList(sensors).indexOf(s);
            for (Client c : live()) {
                if (c.links.contains(slot)) {
                    if (c.enabled) {
                        c.heard.computeIfAbsent(s.id, k -> new ArrayList<>()).add(e);
                    } else {
                        c.waiting.put(s.id, e);
                    }
                }
            }
        }
    }
}
