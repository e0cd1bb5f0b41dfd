package io.lockwatch.api;

import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import io.lockwatch.ingest.ReadingParser;
import io.lockwatch.registry.Registry;
import org.apache.camel.Exchange;

/** Sensors: register, list, read, change, delete; the clients linked to one. */
public class SensorsApi {

    private final Registry registry;

    public SensorsApi(Registry registry) {
        this.registry = registry;
    }

    public void create(Exchange exchange) {
        JsonNode body = Validation.object(Json.body(exchange), "id", "address", "heartbeat_timeout_seconds",
                "open_alarm_seconds");
        String id = Validation.sensorId(body.get("id"), "id");
        String address = Validation.text(body.get("address"), "address", 500, true);
        Integer timeout = Validation.timeout(body.get("heartbeat_timeout_seconds"));
        Integer openAlarm = Validation.seconds(body.get("open_alarm_seconds"), "open_alarm_seconds");
        try {
            Json.respond(exchange, 201, registry.createSensor(id, address, timeout, openAlarm));
        } catch (Registry.AlreadyExists e) {
            throw ApiProblem.conflict(e.getMessage());
        }
    }

    /** The counts an operator looks at first (the console's overview). */
    public void overview(Exchange exchange) {
        Json.respond(exchange, 200, registry.overview());
    }

    public void get(Exchange exchange) {
        Json.respond(exchange, 200, existing(exchange));
    }

    public void list(Exchange exchange) {
        int limit = Json.limit(exchange);
        String after = Json.header(exchange, "cursor");
        if (after != null && !ReadingParser.SENSOR_ID.matcher(after).matches()) {
            throw ApiProblem.badRequest("cursor", "invalid cursor");
        }
        String connectivity = Json.header(exchange, "connectivity");
        if (connectivity != null && !List.of("unknown", "online", "lost").contains(connectivity)) {
            throw ApiProblem.badRequest("connectivity", "connectivity must be unknown, online or lost");
        }
        String prefix = Json.header(exchange, "q");
        if (prefix != null && (prefix.length() > 100 || !ReadingParser.isPlainText(prefix, false))) {
            throw ApiProblem.badRequest("q", "q must be at most 100 characters without control characters");
        }
        String state = Json.header(exchange, "state");
        if (state != null && !state.equals("0") && !state.equals("1")) {
            throw ApiProblem.badRequest("state", "state must be 0 (open) or 1 (closed)");
        }
        Json.respond(exchange, 200, Json.pageById(registry.sensors(after, connectivity, prefix,
                state == null ? null : Integer.valueOf(state), limit + 1), limit));
    }

    public void update(Exchange exchange) {
        String id = sensorId(exchange);
        JsonNode body = Validation.object(Json.body(exchange), "address", "heartbeat_timeout_seconds",
                "open_alarm_seconds");
        if (body.isEmpty()) {
            throw ApiProblem.badRequest(null,
                    "nothing to change: give address, heartbeat_timeout_seconds and/or open_alarm_seconds");
        }
        String address = body.has("address") ? Validation.text(body.get("address"), "address", 500, true) : null;
        boolean setTimeout = body.has("heartbeat_timeout_seconds");
        Integer timeout = Validation.timeout(body.get("heartbeat_timeout_seconds"));
        boolean setOpenAlarm = body.has("open_alarm_seconds");
        Integer openAlarm = Validation.seconds(body.get("open_alarm_seconds"), "open_alarm_seconds");
        Map<String, Object> sensor = registry.updateSensor(id, address, setTimeout, timeout, setOpenAlarm, openAlarm);
        if (sensor == null) {
            throw ApiProblem.notFound("sensor " + id);
        }
        Json.respond(exchange, 200, sensor);
    }

    public void delete(Exchange exchange) {
        String id = sensorId(exchange);
        if (!registry.deleteSensor(id)) {
            throw ApiProblem.notFound("sensor " + id);
        }
        Json.respond(exchange, 204, null);
    }

    public void clients(Exchange exchange) {
        existing(exchange);
        Json.respond(exchange, 200, Map.of("items", registry.clientsOf(sensorId(exchange))));
    }

    Map<String, Object> existing(Exchange exchange) {
        String id = sensorId(exchange);
        Map<String, Object> sensor = registry.sensor(id);
        if (sensor == null) {
            throw ApiProblem.notFound("sensor " + id);
        }
        return sensor;
    }

    static String sensorId(Exchange exchange) {
        String id = Json.header(exchange, "sensorId");
        if (id == null || !ReadingParser.SENSOR_ID.matcher(id).matches()) {
            throw ApiProblem.badRequest("sensorId", "a sensor id is 1 to 16 letters and digits");
        }
        return id;
    }
}
