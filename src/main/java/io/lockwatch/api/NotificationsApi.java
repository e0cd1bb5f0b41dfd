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
        String status = Json.header(exchange, "status"); // one of the contract's list, which it has checked
        String[] after = Json.timeCursor(Json.header(exchange, "cursor"));
        List<NotificationQueries.Notification> rows = queries.page(clientId, sensor, status,
                after == null ? null : Instant.parse(after[0]), after == null ? null : UUID.fromString(after[1]),
                limit + 1);
        Json.respond(exchange, 200, Json.pageByTime(rows, limit, NotificationQueries.Notification::createdAt,
                NotificationQueries.Notification::id));
    }

    public void get(Exchange exchange) {
        UUID id = Json.uuid(exchange, "notificationId", "notification");
        Json.respond(exchange, 200, new NotificationQueries.NotificationDetail(find(id), queries.attemptsOf(id)));
    }

    /** A dead or cancelled notification is due again, from its first attempt, with the same webhook-id. */
    public void redeliver(Exchange exchange) {
        UUID id = Json.uuid(exchange, "notificationId", "notification");
        NotificationQueries.Notification n = find(id);
        if (!store.redeliver(id)) {
            throw ApiProblem.conflict("notification " + id + " is " + n.status() + "; only dead or cancelled ones are redelivered");
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

    private NotificationQueries.Notification find(UUID id) {
        return queries.find(id).orElseThrow(() -> ApiProblem.notFound("notification " + id));
    }
}
