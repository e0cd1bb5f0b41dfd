package io.lockwatch.api;

import java.util.List;
import java.util.UUID;

import io.lockwatch.selfservice.ClientKeys;
import org.apache.camel.Exchange;

/** A client's API keys: made (the token shown once), listed without it, set to expire, revoked. */
public class ClientKeysApi {

    /** Live keys a client may hold at once: enough for every system and person of one organisation, not a leak. */
    static final int MAX_LIVE_KEYS = 50;

    private final ClientKeys keys;

    ClientKeysApi(ClientKeys keys) {
        this.keys = keys;
    }

    public void list(Exchange exchange) {
        UUID client = Json.uuid(exchange, "clientId", "client");
        List<ClientKeys.Key> all = keys.list(client);
        if (all == null) {
            throw ApiProblem.notFound("client " + client);
        }
        Json.respond(exchange, 200, new ResponseBodies.ClientKeyList(all));
    }

    public void create(Exchange exchange) {
        UUID client = Json.uuid(exchange, "clientId", "client");
        RequestBodies.ClientKeyCreate body = Json.bind(exchange, RequestBodies.ClientKeyCreate.class);
        List<ClientKeys.Key> all = keys.list(client);
        if (all == null) {
            throw ApiProblem.notFound("client " + client);
        }
        if (all.stream().filter(k -> k.state().equals("active")).count() >= MAX_LIVE_KEYS) {
            throw ApiProblem.conflict("client " + client + " holds " + MAX_LIVE_KEYS + " live keys, the most it may: "
                    + "revoke one first");
        }
        ClientKeys.NewKey made = keys.create(client, body.name(), body.role(), body.expiry(), ClientScope.caller(exchange));
        if (made == null) {
            throw ApiProblem.notFound("client " + client);
        }
        Json.respond(exchange, 201, made);
    }

    public void update(Exchange exchange) {
        UUID client = Json.uuid(exchange, "clientId", "client");
        UUID key = Json.uuid(exchange, "keyId", "key");
        RequestBodies.ClientKeyUpdate body = Json.bind(exchange, RequestBodies.ClientKeyUpdate.class);
        ClientKeys.Key changed = keys.expire(client, key, body.expiry());
        if (changed == null) {
            throw ApiProblem.notFound("key " + key + " of client " + client);
        }
        Json.respond(exchange, 200, changed);
    }

    public void revoke(Exchange exchange) {
        UUID client = Json.uuid(exchange, "clientId", "client");
        UUID key = Json.uuid(exchange, "keyId", "key");
        if (keys.revoke(client, key) == null) {
            throw ApiProblem.notFound("key " + key + " of client " + client);
        }
        Json.respond(exchange, 204, null);
    }
}
