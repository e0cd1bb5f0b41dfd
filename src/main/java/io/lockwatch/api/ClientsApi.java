package io.lockwatch.api;

import java.util.Map;
import java.util.UUID;

import com.fasterxml.jackson.databind.JsonNode;
import io.lockwatch.notify.TargetGuard;
import io.lockwatch.registry.Registry;
import org.apache.camel.Exchange;

/** Clients and their links to sensors. A client's secret is in the answer of create and rotate only. */
public class ClientsApi {

    private final Registry registry;
    private final TargetGuard guard;

    public ClientsApi(Registry registry, TargetGuard guard) {
        this.registry = registry;
        this.guard = guard;
    }

    public void create(Exchange exchange) {
        JsonNode body = Validation.object(Json.body(exchange), "name", "url");
        String name = Validation.text(body.get("name"), "name", 200, true);
        String url = url(body.get("url"), true);
        Json.respond(exchange, 201, registry.createClient(name, url));
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
        Json.respond(exchange, 200, Json.pageById(registry.clients(after, limit + 1), limit));
    }

    public void update(Exchange exchange) {
        UUID id = clientId(exchange);
        JsonNode body = Validation.object(Json.body(exchange), "name", "url");
        if (body.isEmpty()) {
            throw ApiProblem.badRequest(null, "nothing to change: give name and/or url");
        }
        String name = Validation.text(body.get("name"), "name", 200, false);
        String url = url(body.get("url"), false);
        Map<String, Object> client = registry.updateClient(id, name, url);
        if (client == null) {
            throw ApiProblem.notFound("client " + id);
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
        Map<String, Object> client = registry.rotateSecret(id);
        if (client == null) {
            throw ApiProblem.notFound("client " + id);
        }
        Json.respond(exchange, 200, client);
    }

    public void sensors(Exchange exchange) {
        existing(exchange);
        Json.respond(exchange, 200, Map.of("items", registry.sensorsOf(clientId(exchange))));
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

    Map<String, Object> existing(Exchange exchange) {
        UUID id = clientId(exchange);
        Map<String, Object> client = registry.client(id);
        if (client == null) {
            throw ApiProblem.notFound("client " + id);
        }
        return client;
    }

    static UUID clientId(Exchange exchange) {
        return Json.uuid(exchange, "clientId", "client");
    }

    private String url(JsonNode node, boolean required) {
        String url = Validation.text(node, "url", 2048, required);
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
