package io.lockwatch.security;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.stream.Stream;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.lockwatch.notify.WebhookReceiver;
import io.lockwatch.selfservice.ClientKeys;
import org.apache.camel.test.spring.junit5.CamelSpringBootTest;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Every operation of the contract × every caller (none, an operator's read and full tokens, a client's read and
 * admin keys) × whose resource it names (the key's own client, another client, or its own client with another's
 * sensor), over real HTTP against a fresh pair of clients each time. A client's key is admitted to its own client's
 * resources where the contract gives the operation a client role, is 403 for a write with a read key, and 404 for
 * everything else: never another's data.
 */
@CamelSpringBootTest
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ClientAccessMatrixTest {

    @RegisterExtension
    static final WebhookReceiver receiver = WebhookReceiver.forTheClass();

    static final ObjectMapper JSON = new ObjectMapper();
    static final HttpClient HTTP = HttpClient.newHttpClient();
    static final String FULL = "test-admin-token", READ = "test-read-token";

    /** What the contract gives a client's keys: the test pins it, so that widening it is a decision seen here. */
    static final Set<String> CLIENT_READS = Set.of("getApiDocument", "getSensor", "listSensorReadings", "listSensorEvents",
            "getSensorStats", "getClient", "listClientSensors", "getClientStats", "getClientDeliveryStats",
            "listNotifications", "getNotification", "listAlarms", "getAlarm", "getOpenSchedule", "getLinkEscalationChain",
            "listClientKeys", "readClientFeed", "getCaller");
    /** Called without a token: the portal link in the body is the credential. */
    static final Set<String> PUBLIC = Set.of("openPortalSession");
    static final Set<String> CLIENT_WRITES = Set.of("updateClient", "rotateClientSecret", "pingClient",
            "replayClientNotifications", "redeliverDeadNotifications", "redeliverNotification", "acknowledgeAlarm",
            "replaceLinkEscalationChain", "createClientKey", "revokeClientKey", "updateClientKey");

    enum Who { NONE, OPERATOR_READ, OPERATOR_FULL, CLIENT_READ, CLIENT_ADMIN }

    /** Whose resources the request names: the caller's client's, another client's, or its client with another's sensor. */
    enum Whose { OWN, OTHERS, OWN_CLIENT_OTHERS_SENSOR }

    record Operation(String id, String method, String path, Set<String> roles, Set<String> query) {
        boolean names(String parameter) {
            return path.contains("{" + parameter + "}");
        }
    }

    record Cell(Operation op, Who who, Whose whose) {
        @Override
        public String toString() {
            return op.method + " " + op.path + " (" + op.id + ") / " + who + " / " + whose;
        }
    }

    /** Two clients, each with a linked sensor, a dead notification, an alarm, a spare key, and keys to call with. */
    record World(Map<String, String> own, Map<String, String> others, String readKey, String adminKey) {
    }

    @LocalServerPort int port;
    @Autowired JdbcTemplate jdbc;
    @Autowired ClientKeys keys;

    static List<Operation> operations() throws Exception {
        JsonNode contract = new ObjectMapper(new YAMLFactory()).readTree(
                ClientAccessMatrixTest.class.getClassLoader().getResourceAsStream("openapi.yaml"));
        List<Operation> ops = new ArrayList<>();
        contract.get("paths").fields().forEachRemaining(path -> path.getValue().fields().forEachRemaining(m -> {
            if (!m.getValue().has("operationId")) {
                return;
            }
            Set<String> roles = new TreeSet<>();
            m.getValue().get("security").forEach(r -> r.fieldNames().forEachRemaining(roles::add));
            Set<String> query = new TreeSet<>();
            m.getValue().path("parameters").forEach(p -> {
                if ("query".equals(p.path("in").asText())) {
                    query.add(p.get("name").asText());
                }
            });
            ops.add(new Operation(m.getValue().get("operationId").asText(), m.getKey().toUpperCase(),
                    path.getKey(), roles, query));
        }));
        return ops;
    }

    static Stream<Cell> matrix() throws Exception {
        List<Cell> cells = new ArrayList<>();
        for (Operation op : operations()) {
            for (Who who : Who.values()) {
                cells.add(new Cell(op, who, Whose.OWN));
                boolean scoped = op.names("clientId") || op.names("sensorId") || op.names("notificationId")
                        || op.names("alarmId") || op.query().contains("client_id");
                if (scoped) {
                    cells.add(new Cell(op, who, Whose.OTHERS));
                }
                if (op.names("clientId") && op.names("sensorId")) {
                    cells.add(new Cell(op, who, Whose.OWN_CLIENT_OTHERS_SENSOR));
                }
            }
        }
        return cells.stream();
    }

    @Test
    void theContractGivesClientKeysExactlyTheseOperations() throws Exception {
        for (Operation op : operations()) {
            boolean read = op.roles().contains("clientRead"), admin = op.roles().contains("clientAdmin");
            assertThat(read).as(op.id() + " for a client's read key").isEqualTo(CLIENT_READS.contains(op.id()));
            assertThat(admin).as(op.id() + " for a client's admin key")
                    .isEqualTo(CLIENT_READS.contains(op.id()) || CLIENT_WRITES.contains(op.id()));
            assertThat(op.roles().isEmpty()).as(op.id() + ": every operation names who may call it, or is public")
                    .isEqualTo(PUBLIC.contains(op.id()));
        }
    }

    @ParameterizedTest
    @MethodSource("matrix")
    void eachCell(Cell cell) throws Exception {
        World world = world();
        Map<String, String> target = cell.whose() == Whose.OWN ? world.own() : world.others();
        String path = cell.op().path();
        for (String id : List.of("clientId", "sensorId", "notificationId", "alarmId", "keyId")) {
            String value = cell.whose() == Whose.OWN_CLIENT_OTHERS_SENSOR
                    ? (id.equals("sensorId") ? world.others() : world.own()).get(id) : target.get(id);
            path = path.replace("{" + id + "}", value);
        }
        path = path.replace("{gatewayId}", "gw1").replace("{credentialId}", UUID.randomUUID().toString())
                .replace("{importId}", UUID.randomUUID().toString()).replace("{windowId}", UUID.randomUUID().toString());
        if (cell.op().query().contains("client_id") && cell.whose() == Whose.OTHERS) {
            path += "?client_id=" + world.others().get("clientId");
        }
        String token = switch (cell.who()) {
            case NONE -> null;
            case OPERATOR_READ -> READ;
            case OPERATOR_FULL -> FULL;
            case CLIENT_READ -> world.readKey();
            case CLIENT_ADMIN -> world.adminKey();
        };
        HttpResponse<String> answer = send(cell.op().method(), path, token, body(cell.op().id(), world));
        int status = answer.statusCode();
        String seen = status + " " + answer.body();

        boolean get = cell.op().method().equals("GET");
        boolean forClients = cell.op().roles().contains("clientRead") || cell.op().roles().contains("clientAdmin");
        if (PUBLIC.contains(cell.op().id()) && (cell.who() == Who.NONE || cell.who() == Who.OPERATOR_READ
                || cell.who() == Who.OPERATOR_FULL)) {
            assertThat(status).as(seen).isNotIn(401, 403);
            return;
        }
        switch (cell.who()) {
            case NONE -> assertThat(status).as(seen).isEqualTo(401);
            case OPERATOR_READ -> {
                if (get) {
                    assertThat(status).as(seen).isNotIn(401, 403);
                } else {
                    assertThat(status).as(seen).isEqualTo(403);
                }
            }
            case OPERATOR_FULL -> assertThat(status).as(seen).isNotIn(401, 403);
            case CLIENT_READ, CLIENT_ADMIN -> {
                if (cell.op().id().equals("postReadings")) {
                    assertThat(status).as("readings are the devices': " + seen).isEqualTo(403);
                } else if (!forClients || cell.whose() != Whose.OWN) {
                    // the ids it names are echoed; nothing else of the other client's is
                    assertThat(status).as(seen).isEqualTo(404);
                    assertThat(answer.body()).as("nothing of another's").doesNotContain("ZZother");
                } else if (cell.who() == Who.CLIENT_READ && !cell.op().roles().contains("clientRead")) {
                    assertThat(status).as(seen).isEqualTo(403);
                } else {
                    assertThat(status).as(seen).isBetween(200, 299);
                    assertThat(answer.body()).as("nothing of another's").doesNotContain(world.others().get("sensorId"))
                            .doesNotContain(world.others().get("clientId")).doesNotContain("ZZother");
                }
            }
        }
    }

    /** A body the contract takes for the operation, or null if it has none. */
    private String body(String op, World world) throws Exception {
        Object body = switch (op) {
            case "createSensor" -> Map.of("id", "M" + UUID.randomUUID().toString().replace("-", "").substring(0, 12),
                    "address", "x");
            case "updateSensor" -> Map.of("address", "y");
            case "createClient" -> Map.of("name", "n", "url", receiver.url("/new"));
            case "updateClient" -> Map.of("enabled", true);
            case "replayClientNotifications" -> Map.of("since", Instant.now().minusSeconds(600).toString());
            case "createGateway" -> Map.of("id", "gw" + UUID.randomUUID().toString().substring(0, 8), "sensors", List.of());
            case "updateGateway" -> Map.of("description", "d");
            case "postReadings" -> Map.of("sensor_id", world.own().get("sensorId"), "data", 1);
            case "importRegistry" -> List.of(Map.of("sensor_id", "M" + UUID.randomUUID().toString().substring(0, 8),
                    "address", "imported"));
            case "replaceOpenSchedule" -> Map.of("time_zone", "UTC",
                    "ranges", List.of(Map.of("days", List.of("mon"), "from", "08:00", "to", "09:00")));
            case "replaceEscalationChain", "replaceLinkEscalationChain" -> Map.of("steps", List.of());
            case "createClientKey" -> Map.of("name", "another", "role", "client-read");
            case "updateClientKey" -> Map.of("expires_at", Instant.now().plusSeconds(3600).toString());
            case "createMaintenanceWindow" -> Map.of("ends_at", Instant.now().plusSeconds(3600).toString(),
                    "reason", "works", "sensor_ids", List.of(world.own().get("sensorId")));
            case "acknowledgeAlarm" -> Map.of("by", "someone");
            case "createPortalLink" -> Map.of("ttl_seconds", 600);
            case "openPortalSession" -> Map.of("link", "lwp_" + "0".repeat(32) + "_" + "A".repeat(43));
            default -> null;
        };
        return body == null ? null : JSON.writeValueAsString(body);
    }

    private HttpResponse<String> send(String method, String path, String token, String body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/api/v1" + path))
                .timeout(Duration.ofSeconds(20));
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        if (body != null) {
            b.header("Content-Type", "application/json");
        }
        b.method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private World world() throws Exception {
        Map<String, String> own = party("own"), others = party("ZZother");
        String readKey = keys.create(UUID.fromString(own.get("clientId")), "reader", ClientKeys.READ, null, "test").token();
        String adminKey = keys.create(UUID.fromString(own.get("clientId")), "admin", ClientKeys.ADMIN, null, "test").token();
        return new World(own, others, readKey, adminKey);
    }

    /** A client with a linked sensor with a schedule, a dead notification of it, an alarm of it, and a spare key. */
    private Map<String, String> party(String name) throws Exception {
        HttpResponse<String> created = send("POST", "/clients", FULL,
                JSON.writeValueAsString(Map.of("name", name, "url", receiver.url("/" + name))));
        assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
        String client = JSON.readTree(created.body()).get("id").asText();
        String sensor = "M" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        jdbc.update("INSERT INTO sensors (id, address) VALUES (?, ?)", sensor, name + " door");
        jdbc.update("INSERT INTO client_sensors (client_id, sensor_id) VALUES (?::uuid, ?)", client, sensor);
        assertThat(send("PUT", "/sensors/" + sensor + "/open-schedule", FULL, body("replaceOpenSchedule", null))
                .statusCode()).isEqualTo(200);
        Long event = jdbc.queryForObject("""
                INSERT INTO sensor_events (sensor_id, sequence, type, state, occurred_at)
                VALUES (?, 1, 'sensor.state_changed', 0, now()) RETURNING id""", Long.class, sensor);
        String notification = jdbc.queryForObject("""
                INSERT INTO notifications (event_id, client_id, sensor_id, type, sequence, status, finished_at)
                VALUES (?, ?::uuid, ?, 'sensor.state_changed', 1, 'dead', now()) RETURNING id::text""", String.class,
                event, client, sensor);
        String alarm = jdbc.queryForObject("""
                INSERT INTO alarms (sensor_id, type, opened_at, threshold_seconds, raised_at, raised_sequence)
                VALUES (?, 'door_open_too_long', now() - interval '1 hour', 60, now() - interval '59 minutes', 2)
                RETURNING id::text""", String.class, sensor);
        String key = keys.create(UUID.fromString(client), "spare", ClientKeys.READ, null, "test").key().id().toString();
        Map<String, String> ids = new HashMap<>();
        ids.put("clientId", client);
        ids.put("sensorId", sensor);
        ids.put("notificationId", notification);
        ids.put("alarmId", alarm);
        ids.put("keyId", key);
        return ids;
    }
}
