package io.lockwatch.api;

import java.util.List;
import java.util.UUID;

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
        Json.respond(exchange, 200, new ResponseBodies.Page<>(page.items().stream().map(ResponseBodies.Reading::of).toList(),
                page.nextCursor()));
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
        Json.respond(exchange, 200, new ResponseBodies.Page<>(page.items().stream().map(ResponseBodies.Event::of).toList(),
                page.nextCursor()));
    }

    public void sensorStats(Exchange exchange) {
        String sensor = SensorsApi.sensorId(exchange);
        long[] range = range(exchange);
        Json.respond(exchange, 200, new ResponseBodies.Items<>(store.dailyCounts(List.of(sensor), range[0], range[1])));
    }

    public void clientStats(Exchange exchange) {
        UUID client = ClientsApi.clientId(exchange);
        if (registry.client(client) == null) {
            throw ApiProblem.notFound("client " + client);
        }
        long[] range = range(exchange);
        Json.respond(exchange, 200, new ResponseBodies.Items<>(
                store.dailyCounts(registry.sensorIdsOf(client), range[0], range[1])));
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
}
