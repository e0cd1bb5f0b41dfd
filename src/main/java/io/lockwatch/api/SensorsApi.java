package io.lockwatch.api;


import io.lockwatch.ingest.ReadingParser;
import io.lockwatch.registry.Registry;
import io.lockwatch.registry.RegistryViews.Sensor;
import org.apache.camel.Exchange;
import org.openapitools.jackson.nullable.JsonNullable;

/** Sensors: register, list, read, change, delete; the clients linked to one. */
public class SensorsApi {

    private final Registry registry;
    private final io.lockwatch.registry.RegistryViews.Kept kept;
    private final io.lockwatch.adapters.DeviceProfiles profiles;

    public SensorsApi(Registry registry, io.lockwatch.registry.RegistryViews.Kept kept,
                      io.lockwatch.adapters.DeviceProfiles profiles) {
        this.kept = kept;
        this.registry = registry;
        this.profiles = profiles;
    }

    public void create(Exchange exchange) {
        RequestBodies.SensorCreate sensor = Json.bind(exchange, RequestBodies.SensorCreate.class);
        try {
            Json.respond(exchange, 201, registry.createSensor(sensor.id(), sensor.address(),
                    sensor.heartbeatTimeoutSeconds(), sensor.openAlarmSeconds(), sensor.openAlarmSeverity(),
                    device(profiles, sensor.profile(), sensor.deviceId())));
        } catch (Registry.AlreadyExists e) {
            throw ApiProblem.conflict(e.getMessage());
        }
    }

    /** The counts an operator looks at first (the console's overview). */
    public void overview(Exchange exchange) {
        Json.respond(exchange, 200, registry.overview().withKept(kept));
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
        // the contract has checked the values against their lists and q's length
        String connectivity = Json.header(exchange, "connectivity");
        String prefix = Json.header(exchange, "q");
        if (prefix != null && !ReadingParser.isPlainText(prefix, false)) {
            throw ApiProblem.badRequest("q", "q must not contain control characters");
        }
        String state = Json.header(exchange, "state");
        String battery = Json.header(exchange, "battery_at_most");
        Json.respond(exchange, 200, Json.pageById(registry.sensors(after, connectivity, prefix,
                state == null ? null : Integer.valueOf(state), battery == null ? null : Integer.valueOf(battery),
                limit + 1), limit, Sensor::id));
    }

    public void update(Exchange exchange) {
        String id = sensorId(exchange);
        RequestBodies.SensorUpdate change = Json.bind(exchange, RequestBodies.SensorUpdate.class);
        JsonNullable<Integer> timeout = change.heartbeatTimeoutSeconds();
        JsonNullable<Integer> openAlarm = change.openAlarmSeconds();
        JsonNullable<String> severity = change.openAlarmSeverity() == null ? JsonNullable.undefined() : change.openAlarmSeverity();
        Sensor sensor;
        try {
            sensor = registry.updateSensor(id, change.address(), timeout.isPresent(),
                    timeout.orElse(null), openAlarm.isPresent(), openAlarm.orElse(null), severity.isPresent(),
                    severity.orElse(null), change.profile().isPresent(),
                    device(profiles, change.profile().orElse(null), change.deviceId().orElse(null)));
        } catch (Registry.AlreadyExists e) {
            throw ApiProblem.conflict(e.getMessage());
        }
        if (sensor == null) {
            throw ApiProblem.notFound("sensor " + id);
        }
        Json.respond(exchange, 200, sensor);
    }

    /**
     * A profile and device id as given (both, or neither: the body checked that), the profile one configured, the id
     * as its network writes it.
     */
    static Registry.Device device(io.lockwatch.adapters.DeviceProfiles profiles, String profile, String deviceId) {
        if (profile == null) {
            return null;
        }
        if (!profiles.known(profile)) {
            throw ApiProblem.badRequest("profile", "unknown device profile " + profile + "; configured: "
                    + String.join(", ", profiles.profiles().keySet()));
        }
        if (profiles.byDevEui(profile)) {
            // a DevEUI as labels (and The Things Stack) print it, in upper case, is the one ChirpStack names in lower
            // case: kept so, and each adapter reads its network's the same way
            deviceId = deviceId.toLowerCase(java.util.Locale.ROOT);
            if (!deviceId.matches("[0-9a-f]{16}")) {
                throw ApiProblem.badRequest("device_id", "a LoRaWAN device's id is its DevEUI: 16 hex digits");
            }
        }
        return new Registry.Device(profile, deviceId);
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
        Json.respond(exchange, 200, new ResponseBodies.Items<>(registry.clientsOf(sensorId(exchange))));
    }

    Sensor existing(Exchange exchange) {
        String id = sensorId(exchange);
        Sensor sensor = registry.sensor(id);
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
