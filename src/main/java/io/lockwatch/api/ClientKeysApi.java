package io.lockwatch.api;

import java.time.Instant;
import java.util.List;
import java.util.UUID;

import io.lockwatch.selfservice.ClientKeys;
import org.apache.camel.Exchange;

/**
 * A client's API keys: made (the token shown once), listed without it, set to expire, revoked. A client's own key
 * cannot lift a limit: it makes keys that expire no later than itself, and brings expiries forward only.
 */
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
        ClientKeys.Holder by = ClientScope.holder(exchange);
        if (by != null) {
            notBeyondItsOwn(by, body.expiry());
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
        if (ClientScope.holder(exchange) == null) {
            ClientKeys.Key changed = keys.expire(client, key, body.expiry());
            if (changed == null) {
                throw ApiProblem.notFound("key " + key + " of client " + client);
            }
            Json.respond(exchange, 200, changed);
            return;
        }
        // a client's own key may shorten a key's life, never lengthen what an operator (or the key's maker) set
        ClientKeys.Tightened changed = keys.expireNoLater(client, key, body.expiry());
        if (changed == null) {
            throw ApiProblem.notFound("key " + key + " of client " + client);
        }
        if (changed.refused()) {
            Instant now = changed.key().expiresAt();
            throw lift("a client's key may bring a key's expiry forward only, never later nor to never: key " + key
                    + (now == null ? " never expires" : (now.isAfter(Instant.now()) ? " expires at " : " expired at ") + now));
        }
        Json.respond(exchange, 200, changed.key());
    }

    /**
     * A key made by a client's key expires no later than the key that made it: a session of the portal (8 h) does
     * not become a key that never expires.
     */
    private void notBeyondItsOwn(ClientKeys.Holder by, Instant expiry) {
        ClientKeys.Key own = keys.find(by.clientId(), by.keyId());
        Instant limit = own == null ? null : own.expiresAt();
        if (limit != null && (expiry == null || expiry.isAfter(limit))) {
            throw lift("a key made by a client's key expires no later than it: by " + limit + " (give expires_at)");
        }
    }

    /** What a client's key is refused when it would lift a limit: 403, naming the field. */
    private static ApiProblem lift(String detail) {
        return new ApiProblem(403, "Forbidden", detail, "expires_at");
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
