package io.lockwatch.api;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import io.lockwatch.history.HistoryRecords.DailyCount;
import io.lockwatch.history.HistoryRecords.EventRecord;
import io.lockwatch.history.HistoryRecords.Page;
import io.lockwatch.history.HistoryRecords.ReadingRecord;
import io.lockwatch.history.HistoryStore;
import io.lockwatch.registry.Registry;
import org.apache.camel.Exchange;

/** History questions, answered by whichever store keeps history. */
public class HistoryApi {

    private static final long DAY = 86_400_000L;

    private final HistoryStore store;
    private final Registry registry;

    public HistoryApi(HistoryStore store, Registry registry) {
        this.store = store;
        this.registry = registry;
    }

    public void readings(Exchange exchange) {
        String sensor = SensorsApi.sensorId(exchange);
        long[] range = range(exchange);
        Page<ReadingRecord> page;
        try {
            page = store.readings(sensor, range[0], range[1], Json.limit(exchange), cursor(exchange));
        } catch (IllegalArgumentException e) {
            throw ApiProblem.badRequest("cursor", "invalid cursor");
        }
        Json.respond(exchange, 200, Json.page(page.items().stream().map(HistoryApi::reading).toList(), page.nextCursor()));
    }

    public void events(Exchange exchange) {
        String sensor = SensorsApi.sensorId(exchange);
        long[] range = range(exchange);
        Page<EventRecord> page;
        try {
            page = store.events(sensor, range[0], range[1], Json.limit(exchange), cursor(exchange));
        } catch (IllegalArgumentException e) {
            throw ApiProblem.badRequest("cursor", "invalid cursor");
        }
        Json.respond(exchange, 200, Json.page(page.items().stream().map(HistoryApi::event).toList(), page.nextCursor()));
    }

    public void sensorStats(Exchange exchange) {
        String sensor = SensorsApi.sensorId(exchange);
        long[] range = range(exchange);
        Json.respond(exchange, 200, Map.of("items", counts(store.dailyCounts(List.of(sensor), range[0], range[1]))));
    }

    public void clientStats(Exchange exchange) {
        UUID client = ClientsApi.clientId(exchange);
        if (registry.client(client) == null) {
            throw ApiProblem.notFound("client " + client);
        }
        long[] range = range(exchange);
        Json.respond(exchange, 200, Map.of("items",
                counts(store.dailyCounts(registry.sensorIdsOf(client), range[0], range[1]))));
    }

    private static String cursor(Exchange exchange) {
        return Json.header(exchange, "cursor");
    }

    /** [from, to): default the last 24 hours; at most a year. */
    private static long[] range(Exchange exchange) {
        long to = Json.time(exchange, "to", System.currentTimeMillis());
        long from = Json.time(exchange, "from", to - DAY);
        if (from >= to) {
            throw ApiProblem.badRequest("from", "from must be before to");
        }
        if (to - from > 366 * DAY) {
            throw ApiProblem.badRequest("from", "a range spans at most 366 days");
        }
        return new long[] {from, to};
    }

    private static Map<String, Object> reading(ReadingRecord r) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("reading_id", r.readingId());
        m.put("sensor_id", r.sensorId());
        m.put("data", r.data());
        m.put("measured_at", Json.instant(r.measuredAt()));
        m.put("received_at", Json.instant(r.receivedAt()));
        m.put("time_source", r.timeSource());
        m.put("registered", r.registered());
        m.put("message_id", r.messageId());
        return m;
    }

    private static Map<String, Object> event(EventRecord e) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("sensor_id", e.sensorId());
        m.put("sequence", e.sequence());
        m.put("type", e.type());
        m.put("state", e.state());
        m.put("previous_state", e.previousState());
        m.put("occurred_at", Json.instant(e.occurredAt()));
        return m;
    }

    private static List<Map<String, Object>> counts(List<DailyCount> counts) {
        return counts.stream().map(c -> {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("day", c.day());
            m.put("state_changes", c.stateChanges());
            m.put("connections_lost", c.connectionsLost());
            return m;
        }).toList();
    }
}
