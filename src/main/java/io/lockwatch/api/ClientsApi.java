package io.lockwatch.api;

import java.util.List;
import java.util.Map;
import java.util.UUID;

import io.lockwatch.notify.ClaimWakeUp;
import io.lockwatch.notify.Lanes;
import io.lockwatch.notify.NotificationStore;
import io.lockwatch.notify.TestPing;
import io.lockwatch.notify.TargetGuard;
import io.lockwatch.registry.Registry;
import io.lockwatch.registry.RegistryViews.Client;
import io.lockwatch.registry.RegistryViews.ClientWithSecret;
import org.apache.camel.Exchange;
import org.openapitools.jackson.nullable.JsonNullable;

/** Clients and their links to sensors. A client's secret is in the answer of create and rotate only. */
public class ClientsApi {

    private final Registry registry;
    private final TargetGuard guard;
    private final NotificationStore notifications;
    private final java.time.Duration secretGrace;
    private final java.time.Duration replayMaxAge;
    private final TestPing ping;
    private final Lanes lanes;
    private final ClaimWakeUp claims;

    private final io.lockwatch.notify.Feed feed;

    public ClientsApi(Registry registry, TargetGuard guard, NotificationStore notifications, java.time.Duration secretGrace,
                      java.time.Duration replayMaxAge, TestPing ping, Lanes lanes, ClaimWakeUp claims,
                      io.lockwatch.notify.Feed feed) {
        this.feed = feed;
        this.registry = registry;
        this.guard = guard;
        this.notifications = notifications;
        this.secretGrace = secretGrace;
        this.replayMaxAge = replayMaxAge;
        this.ping = ping;
        this.lanes = lanes;
        this.claims = claims;
    }

    public void create(Exchange exchange) {
        RequestBodies.ClientCreate body = Json.bind(exchange, RequestBodies.ClientCreate.class);
        ClientWithSecret created = registry.createClient(body.name(), guarded(body.url()),
                new Registry.DeliverySettings(body.deliveryMode(), body.eventTypes() != null, body.eventTypes(),
                        body.maxEventsPerRequest(), body.alarmSeverities() != null, body.alarmSeverities()));
        if (Boolean.FALSE.equals(body.enabled())) {
            UUID id = created.client().id();
            notifications.pause(id, NotificationStore.PAUSED_BY_AN_OPERATOR);
            created = new ClientWithSecret(registry.client(id), created.webhookSecret());
        }
        Json.respond(exchange, 201, created);
    }

    public void get(Exchange exchange) {
        Json.respond(exchange, 200, existing(exchange));
    }

    public void list(Exchange exchange) {
        int limit = Json.limit(exchange);
        String cursor = Json.header(exchange, "cursor");
        UUID after;
        try {
            after = cursor == null ? null : UUID.fromString(cursor);
        } catch (IllegalArgumentException e) {
            throw ApiProblem.badRequest("cursor", "invalid cursor");
        }
        Json.respond(exchange, 200, Json.pageById(registry.clients(after, limit + 1), limit, c -> c.id().toString()));
    }

    public void update(Exchange exchange) {
        UUID id = clientId(exchange);
        RequestBodies.ClientUpdate body = Json.bind(exchange, RequestBodies.ClientUpdate.class);
        boolean byItself = ClientScope.holder(exchange) != null;
        if (byItself && body.name() != null) {
            // the operator's label for the client: its own key changes how it is served, not what it is called
            throw ApiProblem.forbidden("a client's key may change its url, delivery, event types, severities and "
                    + "pause or resume it, not its name", List.of("name"));
        }
        if (byItself && Boolean.TRUE.equals(body.enabled())
                && NotificationStore.PAUSED_BY_AN_OPERATOR.equals(existing(exchange).pausedReason())) {
            // a client's key cannot lift what an operator set (the settings are its own, the pause is not)
            throw new ApiProblem(403, "Forbidden", "client " + id + " was paused by an operator: only an operator "
                    + "resumes it", "enabled");
        }
        if (body.deliveryMode() != null && !body.deliveryMode().equals("pull") && body.url() == null
                && existing(exchange).url() == null) {
            throw ApiProblem.badRequest("url", "a client that is posted to needs a url: give one with delivery_mode");
        }
        JsonNullable<List<String>> types = body.eventTypes();
        JsonNullable<List<String>> severities = body.alarmSeverities() == null ? JsonNullable.undefined() : body.alarmSeverities();
        Client client = registry.updateClient(id, body.name(), guarded(body.url()),
                new Registry.DeliverySettings(body.deliveryMode(), types.isPresent(), types.orElse(null),
                        body.maxEventsPerRequest(), severities.isPresent(), severities.orElse(null)));
        if (client == null) {
            throw ApiProblem.notFound("client " + id);
        }
        Boolean enabled = body.enabled();
        if (enabled != null) {
            if (enabled) {
                if (byItself) {
                    notifications.resumeUnlessPausedByAnOperator(id);
                } else {
                    notifications.resume(id);
                }
            } else {
                notifications.pause(id, byItself ? "paused by the client" : NotificationStore.PAUSED_BY_AN_OPERATOR);
            }
            // read again: an operator's pause of a client paused already changes its reason
            client = registry.client(id);
        }
        Json.respond(exchange, 200, client);
    }

    public void delete(Exchange exchange) {
        UUID id = clientId(exchange);
        if (!registry.deleteClient(id)) {
            throw ApiProblem.notFound("client " + id);
        }
        Json.respond(exchange, 204, null);
    }

    public void rotateSecret(Exchange exchange) {
        UUID id = clientId(exchange);
        ClientWithSecret client = registry.rotateSecret(id, secretGrace);
        if (client == null) {
            throw ApiProblem.notFound("client " + id);
        }
        Json.respond(exchange, 200, client);
    }

    /** A signed webhook.test event, sent at once; the answer says how the endpoint took it. */
    public void ping(Exchange exchange) {
        UUID id = clientId(exchange);
        pushed(existing(exchange), "sent a test event");
        TestPing.Result result = ping.send(id);
        if (result == null) {
            throw ApiProblem.notFound("client " + id);
        }
        Json.respond(exchange, 200, ResponseBodies.PingResult.of(result));
    }

    /** Every notification since a time that the client was not sent (dead or superseded) is due again, in order. */
    public void replay(Exchange exchange) {
        UUID id = clientId(exchange);
        pushed(existing(exchange), "replayed: it reads its feed again from an older cursor");
        java.time.Instant from = Json.storable(Json.bind(exchange, RequestBodies.ReplayRequest.class).since().toInstant(), "since");
        if (from.isBefore(java.time.Instant.now().minus(replayMaxAge))) {
            // what is replayed goes to the client behind its live events: a backlog, bounded
            long hours = replayMaxAge.toHours();
            throw ApiProblem.badRequest("since", "since may reach back " + (hours % 24 == 0 ? hours / 24 + " days" : hours + " hours")
                    + " at most (lockwatch.notify.replay-max-age)");
        }
        Integer replayed = notifications.replay(id, from);
        if (replayed == null) {
            throw ApiProblem.notFound("client " + id);
        }
        if (replayed > 0) {
            claims.wakeUp();
        }
        Json.respond(exchange, 200, Map.of("replayed", replayed));
    }

    /**
     * The last hour's and day's deliveries, the last error, whether it is paused, and its lane in this instance: the
     * circuit, the adaptive bound on requests in flight and those in flight.
     */
    public void deliveryStats(Exchange exchange) {
        Client client = existing(exchange);
        UUID id = client.id();
        Map<String, Object> stats = new java.util.LinkedHashMap<>();
        stats.put("client_id", id);
        stats.put("enabled", client.enabled());
        stats.put("paused_reason", client.pausedReason());
        stats.put("failing_since", client.failingSince());
        Lanes.View lane = lanes.view(id);
        stats.put("circuit", lane.circuit());
        stats.put("concurrency_limit", lane.concurrencyLimit());
        stats.put("in_flight", lane.inFlight());
        stats.putAll(notifications.deliveryStats(id));
        Json.respond(exchange, 200, stats);
    }

    /**
     * A page of the client's sensors with their state, connectivity and sequence, and the feed's cursor as of before
     * the page was read: following the feed from the first page's cursor, skipping each sensor's events up to the
     * sequence the snapshot gave, yields every change after the snapshot once.
     */
    public void sensors(Exchange exchange) {
        existing(exchange);
        int limit = Json.limit(exchange);
        String after = Json.header(exchange, "cursor");
        if (after != null && !io.lockwatch.ingest.ReadingParser.SENSOR_ID.matcher(after).matches()) {
            throw ApiProblem.badRequest("cursor", "invalid cursor");
        }
        String state = Json.header(exchange, "state");
        String feedCursor = feed.head();
        List<io.lockwatch.registry.RegistryViews.Sensor> rows = registry.sensorsOf(clientId(exchange), after,
                Json.header(exchange, "connectivity"), state == null ? null : Integer.valueOf(state), limit + 1);
        ResponseBodies.Page<io.lockwatch.registry.RegistryViews.Sensor> page = Json.pageById(rows, limit,
                io.lockwatch.registry.RegistryViews.Sensor::id);
        Json.respond(exchange, 200, new ResponseBodies.ClientSensorPage(page.items(), page.nextCursor(), feedCursor));
    }

    public void feed(Exchange exchange) {
        existing(exchange);
        try {
            Json.respond(exchange, 200, feed.read(clientId(exchange), Json.header(exchange, "after"), Json.limit(exchange)));
        } catch (io.lockwatch.notify.Feed.BadCursor e) {
            throw ApiProblem.badRequest("after", e.getMessage());
        }
    }

    public void link(Exchange exchange) {
        UUID client = clientId(exchange);
        String sensor = SensorsApi.sensorId(exchange);
        if (!registry.link(client, sensor)) {
            throw ApiProblem.notFound("client " + client + " or sensor " + sensor);
        }
        Json.respond(exchange, 204, null);
    }

    public void unlink(Exchange exchange) {
        UUID client = clientId(exchange);
        String sensor = SensorsApi.sensorId(exchange);
        if (!registry.unlink(client, sensor)) {
            throw ApiProblem.notFound("link of client " + client + " to sensor " + sensor);
        }
        Json.respond(exchange, 204, null);
    }

    Client existing(Exchange exchange) {
        UUID id = clientId(exchange);
        Client client = registry.client(id);
        if (client == null) {
            throw ApiProblem.notFound("client " + id);
        }
        return client;
    }

    static UUID clientId(Exchange exchange) {
        return Json.uuid(exchange, "clientId", "client");
    }

    /** The URL, if given, once the target guard allows it (the contract has checked its form). */
    /** A client that reads its feed is posted nothing: this act is not for it. */
    private static void pushed(Client client, String what) {
        if ("pull".equals(client.deliveryMode())) {
            throw ApiProblem.conflict("client " + client.id() + " pulls its feed (delivery_mode pull): it is not " + what);
        }
    }

    private String guarded(String url) {
        if (url == null) {
            return null;
        }
        String problem = guard.problemWith(url);
        if (problem != null) {
            throw ApiProblem.badRequest("url", "url refused: " + problem);
        }
        return url;
    }
}
