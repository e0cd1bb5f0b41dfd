package io.lockwatch.api;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import io.lockwatch.notify.ClaimWakeUp;
import io.lockwatch.notify.NotificationQueries;
import io.lockwatch.notify.NotificationStore;
import org.apache.camel.Exchange;

/** Notifications: list and inspect them, and put dead ones back for delivery. */
public class NotificationsApi {

    private final NotificationQueries queries;
    private final NotificationStore store;
    private final ClaimWakeUp claims;

    public NotificationsApi(NotificationQueries queries, NotificationStore store, ClaimWakeUp claims) {
        this.queries = queries;
        this.store = store;
        this.claims = claims;
    }

    public void list(Exchange exchange) {
        int limit = Json.limit(exchange);
        UUID clientId = Json.optionalUuid(exchange, "client_id");
        String sensor = Json.optionalSensorId(exchange, "sensor_id");
        String status = Json.header(exchange, "status");
        if (status != null && !NotificationQueries.STATUSES.contains(status)) {
            throw ApiProblem.badRequest("status", "status must be one of " + String.join(", ", NotificationQueries.STATUSES));
        }
        String[] after = Json.timeCursor(Json.header(exchange, "cursor"));
        List<Map<String, Object>> rows = queries.page(clientId, sensor, status,
                after == null ? null : Instant.parse(after[0]), after == null ? null : UUID.fromString(after[1]),
                limit + 1);
        Json.respond(exchange, 200, Json.pageByTime(rows, limit, "created_at"));
    }

    public void get(Exchange exchange) {
        UUID id = Json.uuid(exchange, "notificationId", "notification");
        Map<String, Object> n = find(id);
        n.put("attempts_made", queries.attemptsOf(id));
        Json.respond(exchange, 200, n);
    }

    /** A dead or cancelled notification is due again, from its first attempt, with the same webhook-id. */
    public void redeliver(Exchange exchange) {
        UUID id = Json.uuid(exchange, "notificationId", "notification");
        Map<String, Object> n = find(id);
        if (!store.redeliver(id)) {
            throw ApiProblem.conflict("notification " + id + " is " + n.get("status") + "; only dead or cancelled ones are redelivered");
        }
        claims.wakeUp();
        Json.respond(exchange, 202, find(id));
    }

    /** Every dead notification of a client is due again. */
    public void redeliverDead(Exchange exchange) {
        UUID client = ClientsApi.clientId(exchange);
        Integer redelivered = store.redeliverDead(client);
        if (redelivered == null) {
            throw ApiProblem.notFound("client " + client);
        }
        if (redelivered > 0) {
            claims.wakeUp();
        }
        Json.respond(exchange, 200, Map.of("redelivered", redelivered));
    }

    private Map<String, Object> find(UUID id) {
        return queries.find(id).orElseThrow(() -> ApiProblem.notFound("notification " + id));
    }
}
