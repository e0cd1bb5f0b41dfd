package io.lockwatch.api;

import java.util.Map;
import java.util.UUID;

import io.lockwatch.selfservice.ClientKeys;
import org.apache.camel.Exchange;
import org.apache.camel.component.platform.http.springboot.PlatformHttpMessage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Holds a client's key to its own client, before any operation answers: the operations the contract gives a client
 * role (clientRead, clientAdmin), on that client, its linked sensors, its notifications and the alarms of its sensors.
 * Anything else is 404, as if it did not exist, so that a key cannot probe for other clients' ids; only what is its
 * own and beyond its role (a write with a read key) is 403. A list that a client_id narrows is narrowed to its own.
 * Operators' tokens pass: Spring Security has decided for them. Every request by a client's key is logged with the
 * key and its client.
 */
public class ClientScope {

    static final String OPERATION = "lockwatch.operation";
    static final String CLIENT_READ = "clientRead", CLIENT_ADMIN = "clientAdmin";

    private static final Logger log = LoggerFactory.getLogger(ClientScope.class);

    private final Map<String, ApiDocument.Operation> operations;
    private final JdbcTemplate jdbc;
    private final ClientKeys keys;

    ClientScope(ApiDocument contract, JdbcTemplate jdbc, ClientKeys keys) {
        this.operations = contract.operations();
        this.jdbc = jdbc;
        this.keys = keys;
    }

    public void admit(Exchange exchange) {
        ClientKeys.Holder key = holder(exchange);
        if (key == null) {
            forgetKeysOfADeletedClient(exchange);
            return;
        }
        String op = exchange.getProperty(OPERATION, String.class);
        log.info("Client key {} of client {}: {}", key.keyId(), key.clientId(), op);
        ApiDocument.Operation operation = operations.get(op);
        if (operation == null || !operation.roles().contains(CLIENT_READ) && !operation.roles().contains(CLIENT_ADMIN)) {
            throw ApiProblem.notFound("such a resource of client " + key.clientId());
        }
        String client = exchange.getMessage().getHeader("clientId", String.class);
        if (client != null && !client.equalsIgnoreCase(key.clientId().toString())) {
            throw ApiProblem.notFound("client " + client);
        }
        String sensor = exchange.getMessage().getHeader("sensorId", String.class);
        if (sensor != null && !exists("SELECT 1 FROM client_sensors WHERE client_id = ? AND sensor_id = ?",
                key.clientId(), sensor)) {
            throw ApiProblem.notFound("sensor " + sensor);
        }
        UUID notification = uuid(exchange, "notificationId");
        if (notification != null && !exists("SELECT 1 FROM notifications WHERE id = ? AND client_id = ?", notification,
                key.clientId())) {
            throw ApiProblem.notFound("notification " + notification);
        }
        UUID alarm = uuid(exchange, "alarmId");
        if (alarm != null && !exists("""
                SELECT 1 FROM alarms a JOIN client_sensors cs ON cs.sensor_id = a.sensor_id
                 WHERE a.id = ? AND cs.client_id = ?""", alarm, key.clientId())) {
            throw ApiProblem.notFound("alarm " + alarm);
        }
        if (operation.queryParameters().contains("client_id")) {
            String asked = exchange.getMessage().getHeader("client_id", String.class);
            if (asked == null) {
                exchange.getMessage().setHeader("client_id", key.clientId().toString());
            } else if (!asked.equalsIgnoreCase(key.clientId().toString())) {
                throw ApiProblem.notFound("client " + asked);
            }
        }
        if (!operation.roles().contains(CLIENT_READ) && !key.admin()) {
            throw ApiProblem.forbidden("this client key may only read", java.util.List.of());
        }
    }

    /**
     * A client deleted here: its keys, proven lately, are forgotten once the delete is done and before its answer is
     * sent, so that they are refused at once by this instance (and by the others at their next look). Whatever the
     * outcome: forgetting the keys of a client still there only has them proven again.
     */
    private void forgetKeysOfADeletedClient(Exchange exchange) {
        if (!"deleteClient".equals(exchange.getProperty(OPERATION, String.class))) {
            return;
        }
        String client = exchange.getMessage().getHeader("clientId", String.class);
        UUID id;
        try {
            id = UUID.fromString(client);
        } catch (RuntimeException e) {
            return; // no client's id: the operation answers 400, and no key is of it
        }
        exchange.getExchangeExtension().addOnCompletion(new org.apache.camel.support.SynchronizationAdapter() {
            @Override
            public void onDone(Exchange done) {
                keys.forgetClient(id);
            }
        });
    }

    /** The client's key the request came with, or null for an operator's token. */
    static ClientKeys.Holder holder(Exchange exchange) {
        return request(exchange).getAttribute(ClientKeys.REQUEST_ATTRIBUTE) instanceof ClientKeys.Holder h ? h : null;
    }

    /** Who calls, by name: an operator's token by its place ({@code full-token-1}), a key as {@code client-key-<id>}. */
    static String caller(Exchange exchange) {
        Object name = request(exchange).getAttribute(ClientKeys.CALLER_ATTRIBUTE);
        return name == null ? "operator" : name.toString();
    }

    static jakarta.servlet.http.HttpServletRequest request(Exchange exchange) {
        PlatformHttpMessage http = exchange.getIn(PlatformHttpMessage.class);
        if (http == null || http.getRequest() == null) {
            // without the request nothing tells a client's key from an operator's token: refuse
            throw new IllegalStateException("the HTTP request of an API operation is not at hand");
        }
        return http.getRequest();
    }

    private boolean exists(String sql, Object... args) {
        return !jdbc.queryForList(sql, Integer.class, args).isEmpty();
    }

    /** A path's id, or null when the path has none; one that is not a UUID names nothing of the client's. */
    private static UUID uuid(Exchange exchange, String name) {
        String text = exchange.getMessage().getHeader(name, String.class);
        if (text == null) {
            return null;
        }
        try {
            return UUID.fromString(text);
        } catch (IllegalArgumentException e) {
            throw ApiProblem.notFound(name.replace("Id", "") + " " + text);
        }
    }
}
