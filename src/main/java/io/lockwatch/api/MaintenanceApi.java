package io.lockwatch.api;

import java.time.Instant;
import java.util.UUID;

import io.lockwatch.maintenance.MaintenanceWindows;
import org.apache.camel.Exchange;

/** Maintenance windows: planned over sensors by id or address, listed, ended early, cancelled before they start. */
public class MaintenanceApi {

    private final MaintenanceWindows windows;

    public MaintenanceApi(MaintenanceWindows windows) {
        this.windows = windows;
    }

    public void create(Exchange exchange) {
        RequestBodies.MaintenanceWindowCreate body = Json.bind(exchange, RequestBodies.MaintenanceWindowCreate.class);
        if ((body.sensorIds() == null) == (body.addressPrefix() == null)) {
            throw ApiProblem.badRequest("sensor_ids", "a window is over sensor_ids or an address_prefix, one of them");
        }
        Instant starts = body.startsAt() == null ? Instant.now() : body.startsAt();
        if (!body.endsAt().isAfter(starts)) {
            throw ApiProblem.badRequest("ends_at", "ends_at must be after starts_at");
        }
        if (!body.endsAt().isAfter(Instant.now())) {
            throw ApiProblem.badRequest("ends_at", "ends_at must be in the future");
        }
        try {
            Json.respond(exchange, 201, windows.create(body.startsAt(), body.endsAt(), body.reason(), body.sensorIds(),
                    body.addressPrefix()));
        } catch (MaintenanceWindows.UnknownSensors e) {
            throw ApiProblem.badRequest("sensor_ids", e.getMessage());
        }
    }

    public void list(Exchange exchange) {
        boolean all = "true".equals(Json.header(exchange, "all"));
        Json.respond(exchange, 200, new ResponseBodies.Items<>(windows.list(!all, Json.limit(exchange))));
    }

    public void get(Exchange exchange) {
        UUID id = Json.uuid(exchange, "windowId", "maintenance window");
        MaintenanceWindows.Window window = windows.find(id);
        if (window == null) {
            throw ApiProblem.notFound("maintenance window " + id);
        }
        Json.respond(exchange, 200, window);
    }

    public void end(Exchange exchange) {
        UUID id = Json.uuid(exchange, "windowId", "maintenance window");
        switch (windows.end(id)) {
            case NOT_FOUND -> throw ApiProblem.notFound("maintenance window " + id);
            case DONE -> Json.respond(exchange, 200, windows.find(id));
            default -> throw ApiProblem.conflict("maintenance window " + id + " is not open (cancel one that has not started)");
        }
    }

    public void cancel(Exchange exchange) {
        UUID id = Json.uuid(exchange, "windowId", "maintenance window");
        switch (windows.cancel(id)) {
            case NOT_FOUND -> throw ApiProblem.notFound("maintenance window " + id);
            case DONE -> Json.respond(exchange, 204, null);
            default -> throw ApiProblem.conflict("maintenance window " + id + " has started, or is over: end it instead");
        }
    }
}
