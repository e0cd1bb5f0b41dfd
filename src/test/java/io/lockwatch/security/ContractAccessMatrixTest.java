package io.lockwatch.security;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.stream.Stream;

import com.atlassian.oai.validator.OpenApiInteractionValidator;
import com.atlassian.oai.validator.model.Request;
import com.atlassian.oai.validator.model.SimpleResponse;
import com.atlassian.oai.validator.report.LevelResolverFactory;
import com.atlassian.oai.validator.report.ValidationReport;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.lockwatch.notify.WebhookReceiver;
import io.lockwatch.selfservice.ClientKeys;
import io.lockwatch.testing.Api;
import io.lockwatch.testing.IdentityProvider;
import org.apache.camel.test.spring.junit5.CamelSpringBootTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Every operation of the contract × every kind of caller, over real HTTP, the expected outcomes in one table
 * ({@link #TABLE}). A row's operation is called by each caller against a fresh world of two clients (the caller's
 * own and another), each with a linked sensor with a schedule, a dead notification, an alarm and a spare key.
 *
 * <p>The callers: no token; an operator's read and full tokens; people signed in at the identity provider with the
 * operator role, the viewer role, and no role of lockwatch's (each a real access token of the test's provider); a
 * client's read (CR) and admin (CA) keys on their
 * own client's resources, on another client's (_X), and on their own client with another's sensor (_MIX); a portal
 * session (a client-admin key a portal link opened); a sensor's and a gateway's device credential (HTTP Basic);
 * a revoked key, an expired key, and the key of a client just deleted.
 *
 * <p>The outcomes: {@code ok} a 2xx; {@code no} refused as a request (400, 403 or 409: what a client key may not
 * set); a status, that status; {@code -} no such cell (the operation names nothing of a client's). Whatever it is,
 * every answer must be one the contract declares for the operation (status, media type, body), a client's key
 * is never shown anything of another client's, and every call of a change (all but GETs and readings) is in the
 * audit log once by the time its answer comes, naming the caller ({@code anonymous} for no valid credential) and the
 * status. The full token goes last in a row: it may delete what the row's
 * world holds.
 */
@CamelSpringBootTest
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ContractAccessMatrixTest {

    /** Operation × caller → outcome. A new operation of the contract fails the test until it has its row. */
    static final String TABLE = """
            operation                  NONE READ FULL CR  CR_X CR_MIX CA  CA_X CA_MIX PORTAL DEVICE GATEWAY REVOKED EXPIRED DELETED  OPERATOR VIEWER NOROLE
            getApiDocument             401  ok   ok   ok  -    -      ok  -    -      ok     401    401     401     401     401  ok       ok     403
            createSensor               401  403  ok   404 -    -      404 -    -      404    401    401     401     401     401  ok       403    403
            listSensors                401  ok   ok   404 -    -      404 -    -      404    401    401     401     401     401  ok       ok     403
            getSensor                  401  ok   ok   ok  404  -      ok  404  -      ok     401    401     401     401     401  ok       ok     403
            updateSensor               401  403  ok   404 404  -      404 404  -      404    401    401     401     401     401  ok       403    403
            deleteSensor               401  403  ok   404 404  -      404 404  -      404    401    401     401     401     401  ok       403    403
            listSensorClients          401  ok   ok   404 404  -      404 404  -      404    401    401     401     401     401  ok       ok     403
            listSensorReadings         401  ok   ok   ok  404  -      ok  404  -      ok     401    401     401     401     401  ok       ok     403
            listSensorEvents           401  ok   ok   ok  404  -      ok  404  -      ok     401    401     401     401     401  ok       ok     403
            getSensorStats             401  ok   ok   ok  404  -      ok  404  -      ok     401    401     401     401     401  ok       ok     403
            listSensorCredentials      401  ok   ok   404 404  -      404 404  -      404    401    401     401     401     401  ok       ok     403
            createSensorCredential     401  403  ok   404 404  -      404 404  -      404    401    401     401     401     401  ok       403    403
            revokeSensorCredential     401  403  404  404 404  -      404 404  -      404    401    401     401     401     401  404      403    403
            createClient               401  403  ok   404 -    -      404 -    -      404    401    401     401     401     401  ok       403    403
            listClients                401  ok   ok   404 -    -      404 -    -      404    401    401     401     401     401  ok       ok     403
            getClient                  401  ok   ok   ok  404  -      ok  404  -      ok     401    401     401     401     401  ok       ok     403
            updateClient               401  403  ok   403 404  -      ok  404  -      ok     401    401     401     401     401  ok       403    403
            deleteClient               401  403  ok   404 404  -      404 404  -      404    401    401     401     401     401  ok       403    403
            rotateClientSecret         401  403  ok   403 404  -      ok  404  -      ok     401    401     401     401     401  ok       403    403
            listClientSensors          401  ok   ok   ok  404  -      ok  404  -      ok     401    401     401     401     401  ok       ok     403
            linkSensor                 401  403  ok   404 404  404    404 404  404    404    401    401     401     401     401  ok       403    403
            unlinkSensor               401  403  ok   404 404  404    404 404  404    404    401    401     401     401     401  ok       403    403
            getClientStats             401  ok   ok   ok  404  -      ok  404  -      ok     401    401     401     401     401  ok       ok     403
            pingClient                 401  403  ok   403 404  -      ok  404  -      ok     401    401     401     401     401  ok       403    403
            getClientDeliveryStats     401  ok   ok   ok  404  -      ok  404  -      ok     401    401     401     401     401  ok       ok     403
            replayClientNotifications  401  403  ok   403 404  -      ok  404  -      ok     401    401     401     401     401  ok       403    403
            redeliverDeadNotifications 401  403  ok   403 404  -      ok  404  -      ok     401    401     401     401     401  ok       403    403
            listNotifications          401  ok   ok   ok  404  -      ok  404  -      ok     401    401     401     401     401  ok       ok     403
            getNotification            401  ok   ok   ok  404  -      ok  404  -      ok     401    401     401     401     401  ok       ok     403
            redeliverNotification      401  403  409  403 404  -      ok  404  -      409    401    401     401     401     401  ok       403    403
            createGateway              401  403  ok   404 -    -      404 -    -      404    401    401     401     401     401  ok       403    403
            listGateways               401  ok   ok   404 -    -      404 -    -      404    401    401     401     401     401  ok       ok     403
            getGateway                 401  404  404  404 -    -      404 -    -      404    401    401     401     401     401  404      404    403
            updateGateway              401  403  404  404 -    -      404 -    -      404    401    401     401     401     401  404      403    403
            deleteGateway              401  403  404  404 -    -      404 -    -      404    401    401     401     401     401  404      403    403
            listGatewayCredentials     401  404  404  404 -    -      404 -    -      404    401    401     401     401     401  404      404    403
            createGatewayCredential    401  403  404  404 -    -      404 -    -      404    401    401     401     401     401  404      403    403
            revokeGatewayCredential    401  403  404  404 -    -      404 -    -      404    401    401     401     401     401  404      403    403
            postReadings               401  403  ok   403 -    -      403 -    -      403    ok     ok      401     401     401  ok       403    403
            postTheThingsStackUplink   401  403  ok   403 -    -      403 -    -      403    ok     ok      401     401     401  ok       403    403
            getOverview                401  ok   ok   404 -    -      404 -    -      404    401    401     401     401     401  ok       ok     403
            importRegistry             401  403  ok   404 -    -      404 -    -      404    401    401     401     401     401  ok       403    403
            listImports                401  ok   ok   404 -    -      404 -    -      404    401    401     401     401     401  ok       ok     403
            getImport                  401  404  404  404 -    -      404 -    -      404    401    401     401     401     401  404      404    403
            exportRegistry             401  ok   ok   404 -    -      404 -    -      404    401    401     401     401     401  ok       ok     403
            listAlarms                 401  ok   ok   ok  404  -      ok  404  -      ok     401    401     401     401     401  ok       ok     403
            getAlarm                   401  ok   ok   ok  404  -      ok  404  -      ok     401    401     401     401     401  ok       ok     403
            getOpenSchedule            401  ok   ok   ok  404  -      ok  404  -      ok     401    401     401     401     401  ok       ok     403
            replaceOpenSchedule        401  403  ok   404 404  -      404 404  -      404    401    401     401     401     401  ok       403    403
            deleteOpenSchedule         401  403  ok   404 404  -      404 404  -      404    401    401     401     401     401  ok       403    403
            getEscalationChain         401  ok   ok   404 404  -      404 404  -      404    401    401     401     401     401  ok       ok     403
            replaceEscalationChain     401  403  ok   404 404  -      404 404  -      404    401    401     401     401     401  ok       403    403
            getLinkEscalationChain     401  ok   ok   ok  404  404    ok  404  404    ok     401    401     401     401     401  ok       ok     403
            replaceLinkEscalationChain 401  403  ok   403 404  404    no  404  404    no     401    401     401     401     401  ok       403    403
            readClientFeed             401  ok   ok   ok  404  -      ok  404  -      ok     401    401     401     401     401  ok       ok     403
            createPortalLink           401  403  ok   404 404  -      404 404  -      404    401    401     401     401     401  ok       403    403
            openPortalSession          404  404  404  404 -    -      404 -    -      404    404    404     401     401     401  404      404    404
            getCaller                  401  ok   ok   ok  -    -      ok  -    -      ok     401    401     401     401     401  ok       ok     403
            listClientKeys             401  ok   ok   ok  404  -      ok  404  -      ok     401    401     401     401     401  ok       ok     403
            createClientKey            401  403  ok   403 404  -      ok  404  -      ok     401    401     401     401     401  ok       403    403
            updateClientKey            401  403  ok   403 404  -      no  404  -      no     401    401     401     401     401  ok       403    403
            revokeClientKey            401  403  ok   403 404  -      ok  404  -      ok     401    401     401     401     401  ok       403    403
            createMaintenanceWindow    401  403  ok   404 -    -      404 -    -      404    401    401     401     401     401  ok       403    403
            listMaintenanceWindows     401  ok   ok   404 -    -      404 -    -      404    401    401     401     401     401  ok       ok     403
            getMaintenanceWindow       401  404  404  404 -    -      404 -    -      404    401    401     401     401     401  404      404    403
            cancelMaintenanceWindow    401  403  404  404 -    -      404 -    -      404    401    401     401     401     401  404      403    403
            endMaintenanceWindow       401  403  404  404 -    -      404 -    -      404    401    401     401     401     401  404      403    403
            acknowledgeAlarm           401  403  409  403 404  -      ok  404  -      409    401    401     401     401     401  ok       403    403
            listAuditLog               401  ok   ok   404 -    -      404 -    -      404    401    401     401     401     401  ok       ok     403
            listSessions               401  ok   ok   404 -    -      404 -    -      404    401    401     401     401     401  ok       ok     403
            endSession                 401  403  ok   404 -    -      404 -    -      404    401    401     401     401     401  ok       403    403
            """;

    @RegisterExtension
    static final WebhookReceiver receiver = WebhookReceiver.forTheClass();

    static final ObjectMapper JSON = new ObjectMapper();
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

    /** The table's columns, in the order a row calls them: the full token last. */
    enum Caller { NONE, READ, VIEWER, NOROLE, CR_X, CR_MIX, CA_X, CA_MIX, DEVICE, GATEWAY, REVOKED, EXPIRED, DELETED, CR, CA,
        PORTAL, FULL, OPERATOR }

    record Operation(String id, String method, String path, Set<String> roles, Set<String> query) {
        boolean names(String parameter) {
            return path.contains("{" + parameter + "}");
        }

        /** Whether it names a client's resource, so that a key can ask for another client's. */
        boolean scoped() {
            return names("clientId") || names("sensorId") || names("notificationId") || names("alarmId")
                    || query.contains("client_id");
        }
    }

    record Row(Operation op, Map<Caller, String> expected) {
        @Override
        public String toString() {
            return op.method + " " + op.path + " (" + op.id + ")";
        }
    }

    /**
     * Two clients, each with a linked sensor, a dead notification, an alarm, a spare key (the own one's expired by the
     * operator); and the credentials each caller calls with.
     */
    record World(Map<String, String> own, Map<String, String> others, Map<Caller, String> authorization,
                 Map<Caller, String> actors) {
    }

    @LocalServerPort int port;
    @Autowired JdbcTemplate jdbc;
    @Autowired ClientKeys keys;

    static final OpenApiInteractionValidator CONTRACT;

    static {
        try {
            CONTRACT = OpenApiInteractionValidator.createForInlineApiSpecification(
                    new String(ContractAccessMatrixTest.class.getClassLoader().getResourceAsStream("openapi.yaml").readAllBytes(),
                            StandardCharsets.UTF_8))
                    .withLevelResolver(LevelResolverFactory.withAdditionalPropertiesIgnored()).build();
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
    }

    static List<Operation> operations() throws Exception {
        JsonNode contract = new ObjectMapper(new YAMLFactory()).readTree(
                ContractAccessMatrixTest.class.getClassLoader().getResourceAsStream("openapi.yaml"));
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

    /** The table, read: each row by its operation, each cell by its column. */
    static Map<String, Map<Caller, String>> table() {
        List<String> lines = TABLE.strip().lines().toList();
        String[] header = lines.get(0).trim().split("\\s+");
        Map<String, Map<Caller, String>> rows = new LinkedHashMap<>();
        for (String line : lines.subList(1, lines.size())) {
            String[] cells = line.trim().split("\\s+");
            assertThat(cells).as(line).hasSameSizeAs(header);
            Map<Caller, String> row = new java.util.EnumMap<>(Caller.class);
            for (int i = 1; i < cells.length; i++) {
                row.put(Caller.valueOf(header[i]), cells[i]);
            }
            assertThat(rows.put(cells[0], row)).as("one row for " + cells[0]).isNull();
        }
        return rows;
    }

    static Stream<Row> rows() throws Exception {
        Map<String, Map<Caller, String>> table = table();
        return operations().stream().map(op -> new Row(op, table.get(op.id())));
    }

    @Test
    void theTableHasARowForEachOperationOfTheContractAndACellForEachCallerItCanName() throws Exception {
        Map<String, Map<Caller, String>> table = table();
        List<Operation> ops = operations();
        assertThat(table.keySet()).containsExactlyInAnyOrderElementsOf(ops.stream().map(Operation::id).toList());
        for (Operation op : ops) {
            Map<Caller, String> row = table.get(op.id());
            assertThat(row.keySet()).as(op.id()).containsExactlyInAnyOrder(Caller.values());
            for (Caller c : List.of(Caller.CR_X, Caller.CA_X)) {
                assertThat(row.get(c).equals("-")).as(op.id() + " " + c + ": a cell where it names a client's").isEqualTo(!op.scoped());
            }
            boolean mixed = op.names("clientId") && op.names("sensorId");
            for (Caller c : List.of(Caller.CR_MIX, Caller.CA_MIX)) {
                assertThat(row.get(c).equals("-")).as(op.id() + " " + c + ": a cell where it names a client and a sensor")
                        .isEqualTo(!mixed);
            }
        }
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

    @ParameterizedTest(name = "{0}")
    @MethodSource("rows")
    void eachRow(Row row) throws Exception {
        assertThat(row.expected()).as("a row of the table for " + row.op().id()).isNotNull();
        World shared = world();
        List<String> failures = new ArrayList<>();
        for (Caller caller : Caller.values()) {
            String expected = row.expected().get(caller);
            if (expected.equals("-")) {
                continue;
            }
            // a person with the operator role acts on a world of its own, as the full token may delete the row's
            World world = caller == Caller.OPERATOR ? world() : shared;
            String path = path(row.op(), caller, world);
            long recorded = audited(row.op()) ? entries(row.op()) : 0;
            boolean liveBefore = row.op().path().startsWith("/sessions") && signInLive(world);
            HttpResponse<String> answer = send(row.op().method(), path, world.authorization().get(caller),
                    body(row.op().id(), caller, world));
            String wrong = judge(row.op(), caller, expected, answer, world);
            if (wrong == null) {
                wrong = sessionsAsAnswered(row.op(), answer, world, liveBefore);
            }
            if (wrong == null && audited(row.op())) {
                wrong = recordedOnce(row.op(), recorded, world.actors().get(caller), answer.statusCode());
            }
            if (wrong != null) {
                failures.add(caller + " expected " + expected + ", got " + answer.statusCode() + " " + excerpt(answer.body())
                        + (wrong.isEmpty() ? "" : ": " + wrong));
            }
        }
        assertThat(failures).as(row.toString()).isEmpty();
    }

    /**
     * Null if the world's sign-in is as the answer says: listed by a listing that succeeded, ended by an end that
     * succeeded, and left as it was by one refused; else what is wrong.
     */
    private String sessionsAsAnswered(Operation op, HttpResponse<String> answer, World world, boolean liveBefore) {
        boolean done = answer.statusCode() < 300;
        if (op.id().equals("listSessions") && done && liveBefore && !answer.body().contains(world.own().get("sessionId"))) {
            return "the world's live sign-in is not listed";
        }
        if (op.id().equals("endSession")) {
            boolean liveAfter = signInLive(world);
            if (done ? liveAfter || !liveBefore : liveAfter != liveBefore) {
                return "the world's sign-in was live " + liveBefore + ", is now " + liveAfter;
            }
        }
        return null;
    }

    /** Whether the world's sign-in is live: not expired, its person not signed out since. */
    private boolean signInLive(World world) {
        return Boolean.TRUE.equals(jdbc.queryForObject("""
                SELECT EXISTS (SELECT 1 FROM sign_ins i LEFT JOIN sign_outs o ON o.subject = i.subject
                                WHERE i.id = ?::uuid AND i.expires_at > now()
                                  AND (o.before IS NULL OR i.signed_in_at >= o.before))""",
                Boolean.class, world.own().get("sessionId")));
    }

    /** A change of lockwatch, which the audit log records: every operation but a GET and the devices' readings. */
    private static boolean audited(Operation op) {
        return !op.method().equals("GET") && !op.id().equals("postReadings") && !op.id().equals("postTheThingsStackUplink");
    }

    private long entries(Operation op) {
        return jdbc.queryForObject("SELECT count(*) FROM audit_log WHERE operation = ?", Long.class, op.id());
    }

    /**
     * Null if the audit log has recorded the call once, naming its caller and its status, by the time its answer came
     * (the answer is held until its entry is recorded); else what is wrong.
     */
    private String recordedOnce(Operation op, long before, String actor, int status) {
        long now = entries(op);
        if (now != before + 1) {
            return "recorded " + (now - before) + " times in the audit log, not once";
        }
        Map<String, Object> newest = jdbc.queryForMap(
                "SELECT actor, status FROM audit_log WHERE operation = ? ORDER BY at DESC, id DESC LIMIT 1", op.id());
        if (!actor.equals(newest.get("actor")) || !Integer.valueOf(status).equals(newest.get("status"))) {
            return "the audit log names " + newest + ", not " + actor + " and " + status;
        }
        return null;
    }

    /** Null if the answer is as the cell says, the contract declares it, and it shows nothing of another's; else why not. */
    private static String judge(Operation op, Caller caller, String expected, HttpResponse<String> answer, World world) {
        int status = answer.statusCode();
        boolean as = switch (expected) {
            case "ok" -> status >= 200 && status < 300;
            case "no" -> status == 400 || status == 403 || status == 409;
            default -> status == Integer.parseInt(expected);
        };
        if (!as) {
            return "";
        }
        SimpleResponse.Builder response = SimpleResponse.Builder.status(status);
        answer.headers().firstValue("Content-Type").ifPresent(response::withContentType);
        if (!answer.body().isEmpty()) {
            response.withBody(answer.body());
        }
        ValidationReport report = CONTRACT.validateResponse(op.path(), Request.Method.valueOf(op.method()), response.build());
        if (report.hasErrors()) {
            StringBuilder why = new StringBuilder("not as the contract declares: ");
            report.getMessages().stream().filter(m -> m.getLevel() == ValidationReport.Level.ERROR)
                    .forEach(m -> why.append(m.getKey()).append(": ").append(m.getMessage()).append("; "));
            return why.toString();
        }
        if (caller.name().startsWith("C") || caller == Caller.PORTAL) {
            // the ids a refusal names are echoed; nothing else of the other client's is
            if (answer.body().contains("ZZother")) {
                return "shows another client's";
            }
            if (status < 300 && (answer.body().contains(world.others().get("sensorId"))
                    || answer.body().contains(world.others().get("clientId")))) {
                return "shows another client's";
            }
        }
        return null;
    }

    private static String path(Operation op, Caller caller, World world) {
        boolean others = caller.name().endsWith("_X"), mixed = caller.name().endsWith("_MIX");
        String path = op.path();
        for (String id : List.of("clientId", "sensorId", "notificationId", "alarmId", "keyId", "sessionId")) {
            Map<String, String> whose = others || mixed && id.equals("sensorId") ? world.others() : world.own();
            path = path.replace("{" + id + "}", whose.get(id));
        }
        path = path.replace("{gatewayId}", "gw1").replace("{credentialId}", UUID.randomUUID().toString())
                .replace("{importId}", UUID.randomUUID().toString()).replace("{windowId}", UUID.randomUUID().toString());
        if (op.query().contains("client_id") && others) {
            path += "?client_id=" + world.others().get("clientId");
        }
        return path;
    }

    /** A body the contract takes for the operation, or null if it has none. */
    private String body(String op, Caller caller, World world) throws Exception {
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
            // a device no sensor names: no reading, accepted all the same (the webhook's tests: NetworkAdaptersContract)
            case "postTheThingsStackUplink" -> Map.of("end_device_ids", Map.of("dev_eui", "00000000000000A1"),
                    "uplink_message", Map.of("decoded_payload", Map.of("DOOR_OPEN_STATUS", 1)));
            case "importRegistry" -> List.of(Map.of("sensor_id", "M" + UUID.randomUUID().toString().substring(0, 8),
                    "address", "imported"));
            case "replaceOpenSchedule" -> Map.of("time_zone", "UTC",
                    "ranges", List.of(Map.of("days", List.of("mon"), "from", "08:00", "to", "09:00")));
            case "replaceEscalationChain" -> Map.of("steps", List.of());
            // a step naming the other client: the operator may, a client's key may name its own client only
            case "replaceLinkEscalationChain" -> Map.of("steps", List.of(Map.of("after_seconds", 60,
                    "client_id", world.others().get("clientId"))));
            // within the hour: a key made with a portal session (8 h) may not outlive it (ClientKeysTest)
            case "createClientKey" -> Map.of("name", "another", "role", "client-read",
                    "expires_at", Instant.now().plusSeconds(3600).toString());
            // the spare key was expired by the operator: a client's key cannot lift that, the operator can
            case "updateClientKey" -> java.util.Collections.singletonMap("expires_at", null);
            case "createMaintenanceWindow" -> Map.of("ends_at", Instant.now().plusSeconds(3600).toString(),
                    "reason", "works", "sensor_ids", List.of(world.own().get("sensorId")));
            case "acknowledgeAlarm" -> Map.of("by", "someone");
            case "createPortalLink" -> Map.of("ttl_seconds", 600);
            case "openPortalSession" -> Map.of("link", "lwp_" + "0".repeat(32) + "_" + "A".repeat(43));
            default -> null;
        };
        return body == null ? null : JSON.writeValueAsString(body);
    }

    private HttpResponse<String> send(String method, String path, String authorization, String body) throws Exception {
        return new Api(port, Duration.ofSeconds(20)).send(method, "/api/v1" + path, authorization, body);
    }

    private JsonNode created(String method, String path, Object body) throws Exception {
        HttpResponse<String> r = send(method, path, "Bearer " + FULL, body == null ? null : JSON.writeValueAsString(body));
        assertThat(r.statusCode()).as(method + " " + path + ": " + r.body()).isBetween(200, 299);
        return r.body().isEmpty() ? null : JSON.readTree(r.body());
    }

    private World world() throws Exception {
        Map<String, String> own = party("own"), others = party("ZZother");
        UUID client = UUID.fromString(own.get("clientId"));
        Map<Caller, String> auth = new java.util.EnumMap<>(Caller.class);
        auth.put(Caller.READ, "Bearer " + READ);
        auth.put(Caller.FULL, "Bearer " + FULL);
        // who the audit log names for each caller: a credential that is not one (a device's on the API, a revoked
        // key's) names nobody
        Map<Caller, String> actors = new java.util.EnumMap<>(Caller.class);
        for (Caller c : Caller.values()) {
            actors.put(c, "anonymous");
        }
        actors.put(Caller.READ, "read-token-1");
        actors.put(Caller.FULL, "full-token-1");
        // people signed in at the identity provider, by the role its claim gives them
        IdentityProvider provider = IdentityProvider.get();
        auth.put(Caller.OPERATOR, "Bearer " + provider.token("sub-otto", "otto", List.of(IdentityProvider.OPERATOR)));
        auth.put(Caller.VIEWER, "Bearer " + provider.token("sub-vera", "vera", List.of(IdentityProvider.VIEWER)));
        auth.put(Caller.NOROLE, "Bearer " + provider.token("sub-nora", "nora", List.of("accounting")));
        actors.put(Caller.OPERATOR, "otto");
        actors.put(Caller.VIEWER, "vera");
        actors.put(Caller.NOROLE, "nora");
        ClientKeys.NewKey reader = keys.create(client, "reader", ClientKeys.READ, null, "test");
        ClientKeys.NewKey admin = keys.create(client, "admin", ClientKeys.ADMIN, null, "test");
        String readKey = "Bearer " + reader.token();
        String adminKey = "Bearer " + admin.token();
        for (Caller c : List.of(Caller.CR, Caller.CR_X, Caller.CR_MIX)) {
            auth.put(c, readKey);
            actors.put(c, "client-key-" + reader.key().id());
        }
        for (Caller c : List.of(Caller.CA, Caller.CA_X, Caller.CA_MIX)) {
            auth.put(c, adminKey);
            actors.put(c, "client-key-" + admin.key().id());
        }
        ClientKeys.NewKey revoked = keys.create(client, "revoked", ClientKeys.ADMIN, null, "test");
        keys.revoke(client, revoked.key().id());
        auth.put(Caller.REVOKED, "Bearer " + revoked.token());
        ClientKeys.NewKey expired = keys.create(client, "expired", ClientKeys.ADMIN, Instant.now().plusSeconds(3600), "test");
        keys.expire(client, expired.key().id(), Instant.now().minusSeconds(1));
        auth.put(Caller.EXPIRED, "Bearer " + expired.token());
        // a portal session: a link exchanged for a key
        String url = created("POST", "/clients/" + client + "/portal-links", Map.of("role", "client-admin")).get("url").asText();
        HttpResponse<String> session = send("POST", "/portal/sessions", null,
                JSON.writeValueAsString(Map.of("link", url.substring(url.indexOf("portal=") + "portal=".length()))));
        assertThat(session.statusCode()).as(session.body()).isEqualTo(201);
        auth.put(Caller.PORTAL, "Bearer " + JSON.readTree(session.body()).get("token").asText());
        actors.put(Caller.PORTAL, "client-key-" + JSON.readTree(session.body()).at("/key/id").asText());
        // a device's credentials: the own sensor's, and a gateway's that reports for it
        JsonNode sensorCredential = created("POST", "/sensors/" + own.get("sensorId") + "/credentials", null);
        auth.put(Caller.DEVICE, basic(sensorCredential));
        String gateway = "gw" + UUID.randomUUID().toString().substring(0, 8);
        created("POST", "/gateways", Map.of("id", gateway, "sensors", List.of(own.get("sensorId"))));
        auth.put(Caller.GATEWAY, basic(created("POST", "/gateways/" + gateway + "/credentials", null)));
        // the key of a client deleted just now
        String gone = created("POST", "/clients", Map.of("name", "gone", "url", receiver.url("/gone"))).get("id").asText();
        String goneKey = keys.create(UUID.fromString(gone), "gone", ClientKeys.ADMIN, null, "test").token();
        assertThat(send("GET", "/me", "Bearer " + goneKey, null).statusCode()).isEqualTo(200);
        created("DELETE", "/clients/" + gone, null);
        auth.put(Caller.DELETED, "Bearer " + goneKey);
        return new World(own, others, auth, actors);
    }

    private static String basic(JsonNode credential) {
        return "Basic " + Base64.getEncoder().encodeToString((credential.get("login").asText() + ":"
                + credential.get("secret").asText()).getBytes(StandardCharsets.UTF_8));
    }

    /**
     * A client with a linked sensor with a schedule, a dead notification of it, an alarm of it, and a spare key that
     * the operator has expired; and a person signed in to the console (not one of the callers), whom an operator may
     * sign out.
     */
    private Map<String, String> party(String name) throws Exception {
        String client = created("POST", "/clients", Map.of("name", name, "url", receiver.url("/" + name))).get("id").asText();
        String sensor = "M" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        jdbc.update("INSERT INTO sensors (id, address) VALUES (?, ?)", sensor, name + " door");
        jdbc.update("INSERT INTO client_sensors (client_id, sensor_id) VALUES (?::uuid, ?)", client, sensor);
        created("PUT", "/sensors/" + sensor + "/open-schedule", Map.of("time_zone", "UTC",
                "ranges", List.of(Map.of("days", List.of("mon"), "from", "08:00", "to", "09:00"))));
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
        String key = keys.create(UUID.fromString(client), "spare", ClientKeys.READ, Instant.now().plusSeconds(3600), "test")
                .key().id().toString();
        created("PATCH", "/clients/" + client + "/keys/" + key, Map.of("expires_at", Instant.now().toString()));
        Map<String, String> ids = new HashMap<>();
        ids.put("clientId", client);
        ids.put("sensorId", sensor);
        ids.put("notificationId", notification);
        ids.put("alarmId", alarm);
        ids.put("keyId", key);
        String signIn = UUID.randomUUID().toString();
        jdbc.update("""
                INSERT INTO sign_ins (id, subject, name, signed_in_at, expires_at)
                VALUES (?::uuid, ?, ?, now(), now() + interval '1 hour')""", signIn, "person-of-" + name, "person of " + name);
        ids.put("sessionId", signIn);
        return ids;
    }

    private static String excerpt(String body) {
        return body.length() > 200 ? body.substring(0, 200) + "…" : body;
    }
}
