package io.lockwatch.security;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Stream;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.camel.CamelContext;
import org.apache.camel.ServiceStatus;
import org.apache.camel.test.spring.junit5.CamelSpringBootTest;
import org.apache.camel.test.spring.junit5.DisableJmx;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.autoconfigure.actuate.observability.AutoConfigureObservability;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * The permissions matrix of docs/security.md, cell by cell, against the running application over real HTTP: every door
 * (the API, the actuator, Hawtio, Jolokia) for no token, a read token and a full token, and a client's key where
 * it has a cell (the API's operations for each caller are ContractAccessMatrixTest's); the path variants that
 * once slipped past the token check; Jolokia's policy on operations, writes, origins and its proxy. After every
 * refused attempt the route under test must still be running.
 */
@CamelSpringBootTest
@AutoConfigureObservability(tracing = false) // the Prometheus scrape is a door too
@DisableJmx(false) // Camel's MBeans are what Jolokia's operations act on
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = "spring.jmx.enabled=true")
// closed after the class: its MBeans are JVM-wide, and a later class's own application in this JVM (EmbeddedRestartTest)
// registers the same names
@org.springframework.test.annotation.DirtiesContext(classMode = org.springframework.test.annotation.DirtiesContext.ClassMode.AFTER_CLASS)
class AccessMatrixTest {

    static final String FULL_TOKEN = "test-admin-token", READ_TOKEN = "test-read-token";
    static final String ROUTE = "due-notifications-are-claimed-on-a-timer";
    static final String ROUTE_MBEAN = "org.apache.camel:context=lockwatch,type=routes,name=\"" + ROUTE + "\"";
    static final String CONTEXT_MBEAN = "org.apache.camel:context=lockwatch,type=context,name=\"lockwatch\"";
    static final Path HEAP_DUMP = Path.of("target/access-matrix-heap.hprof").toAbsolutePath();
    static final ObjectMapper JSON = new ObjectMapper();

    enum Who { ANONYMOUS, READ, FULL, CLIENT }

    /** What must come of a knock: data, a refusal by the door (401, 403, 404), or one by Jolokia's policy. */
    enum Outcome { DATA, STATUS_ONLY, UNAUTHORIZED, FORBIDDEN, NOT_FOUND, JOLOKIA_REFUSES, JOLOKIA_FAILS }

    record Cell(String door, Who who, String method, String path, String body, Outcome outcome) {
        @Override
        public String toString() {
            return door + " / " + who + " -> " + outcome;
        }
    }

    @LocalServerPort int port;
    @Autowired CamelContext camel;
    @Autowired io.lockwatch.selfservice.ClientKeys clientKeys;
    RawHttp http;
    /** A client-admin key of a client of its own, made once. */
    static String clientKey;

    @BeforeEach
    void connect(@Autowired org.springframework.jdbc.core.JdbcTemplate jdbc) {
        http = new RawHttp(port);
        if (clientKey == null) {
            UUID client = jdbc.queryForObject("INSERT INTO clients (name, url, webhook_secret) VALUES ('matrix', 'http://127.0.0.1:9/', 'whsec_bWF0cml4') "
                    + "RETURNING id", UUID.class);
            clientKey = clientKeys.create(client, "matrix", io.lockwatch.selfservice.ClientKeys.ADMIN, null, "test").token();
        }
    }

    /**
     * Hawtio registers its registry in the JVM's one MBean server from the first web context that starts, skips it
     * in the next, and the first unregisters it when it closes. Test contexts share the JVM, one kept at a time
     * (spring.properties): the context before this class's closes just after this one has started, and takes the
     * registry with it (this class failed after ApiTest). A deployment has one context per JVM; here the registry
     * is put back if it is gone, so that the doors tested are this context's.
     */
    @BeforeEach
    void hawtiosRegistryOutlivesTheContextBefore() throws Exception {
        if (!ManagementFactory.getPlatformMBeanServer().isRegistered(
                new javax.management.ObjectName("hawtio:type=security,name=RBACRegistry"))) {
            new io.hawt.jmx.RBACRegistry().init();
        }
    }

    static Stream<Cell> matrix() {
        List<Cell> cells = new ArrayList<>();
        // door, method, path, body, then what no token, a read token and a full token get
        row(cells, "API read", "GET", "/api/v1/sensors", null, Outcome.UNAUTHORIZED, Outcome.DATA, Outcome.DATA, Outcome.NOT_FOUND);
        row(cells, "API write", "POST", "/api/v1/sensors", "{\"id\":\"%s\",\"address\":\"x\"}",
                Outcome.UNAUTHORIZED, Outcome.FORBIDDEN, Outcome.DATA, Outcome.NOT_FOUND);
        row(cells, "API contract", "GET", "/api/v1/openapi.json", null, Outcome.UNAUTHORIZED, Outcome.DATA, Outcome.DATA, Outcome.DATA);
        row(cells, "health", "GET", "/actuator/health", null, Outcome.STATUS_ONLY, Outcome.DATA, Outcome.DATA, Outcome.FORBIDDEN);
        row(cells, "liveness probe", "GET", "/actuator/health/liveness", null, Outcome.STATUS_ONLY, Outcome.STATUS_ONLY,
                Outcome.STATUS_ONLY);
        row(cells, "a health component", "GET", "/actuator/health/db", null, Outcome.UNAUTHORIZED, Outcome.DATA, Outcome.DATA, Outcome.FORBIDDEN);
        row(cells, "Prometheus scrape", "GET", "/actuator/prometheus", null, Outcome.DATA, Outcome.DATA, Outcome.DATA);
        row(cells, "metrics", "GET", "/actuator/metrics", null, Outcome.UNAUTHORIZED, Outcome.DATA, Outcome.DATA, Outcome.FORBIDDEN);
        row(cells, "actuator index", "GET", "/actuator", null, Outcome.UNAUTHORIZED, Outcome.DATA, Outcome.DATA, Outcome.FORBIDDEN);
        row(cells, "Hawtio", "GET", "/actuator/hawtio/", null, Outcome.UNAUTHORIZED, Outcome.DATA, Outcome.DATA, Outcome.FORBIDDEN);
        row(cells, "Hawtio's proxy", "GET", "/actuator/hawtio/proxy/http/127.0.0.1/%PORT%/actuator/metrics", null,
                Outcome.UNAUTHORIZED, Outcome.NOT_FOUND, Outcome.NOT_FOUND);
        row(cells, "Jolokia version", "GET", "/actuator/jolokia/version", null, Outcome.UNAUTHORIZED, Outcome.DATA, Outcome.DATA, Outcome.FORBIDDEN);
        row(cells, "Jolokia read", "GET", "/actuator/jolokia/read/" + ROUTE_MBEAN + "/State", null,
                Outcome.UNAUTHORIZED, Outcome.DATA, Outcome.DATA);
        row(cells, "Jolokia read by POST", "POST", "/actuator/jolokia",
                "{\"type\":\"read\",\"mbean\":" + quoted(ROUTE_MBEAN) + ",\"attribute\":\"State\"}",
                Outcome.UNAUTHORIZED, Outcome.DATA, Outcome.DATA, Outcome.FORBIDDEN);
        row(cells, "Jolokia read through Hawtio", "POST", "/actuator/hawtio/jolokia",
                "{\"type\":\"read\",\"mbean\":" + quoted(ROUTE_MBEAN) + ",\"attribute\":\"State\"}",
                Outcome.UNAUTHORIZED, Outcome.DATA, Outcome.DATA);
        row(cells, "Jolokia list", "POST", "/actuator/jolokia", "{\"type\":\"list\",\"path\":\"org.apache.camel\"}",
                Outcome.UNAUTHORIZED, Outcome.DATA, Outcome.DATA);
        row(cells, "Jolokia search", "GET", "/actuator/jolokia/search/org.apache.camel:type=routes,*", null,
                Outcome.UNAUTHORIZED, Outcome.DATA, Outcome.DATA);
        row(cells, "Jolokia read of the JVM's system properties", "GET",
                "/actuator/jolokia/read/java.lang:type=Runtime/SystemProperties", null,
                Outcome.UNAUTHORIZED, Outcome.JOLOKIA_REFUSES, Outcome.JOLOKIA_REFUSES);
        row(cells, "Jolokia route stop by GET", "GET", "/actuator/jolokia/exec/" + ROUTE_MBEAN + "/stop()", null,
                Outcome.UNAUTHORIZED, Outcome.JOLOKIA_REFUSES, Outcome.JOLOKIA_REFUSES);
        row(cells, "Jolokia route stop by POST", "POST", "/actuator/jolokia",
                "{\"type\":\"exec\",\"mbean\":" + quoted(ROUTE_MBEAN) + ",\"operation\":\"stop()\"}",
                Outcome.UNAUTHORIZED, Outcome.JOLOKIA_REFUSES, null, Outcome.FORBIDDEN); // a full token's stop: its own test below
        row(cells, "Jolokia write by POST", "POST", "/actuator/jolokia",
                "{\"type\":\"write\",\"mbean\":\"java.lang:type=Memory\",\"attribute\":\"Verbose\",\"value\":true}",
                Outcome.UNAUTHORIZED, Outcome.JOLOKIA_REFUSES, Outcome.JOLOKIA_REFUSES);
        row(cells, "Jolokia write by GET", "GET", "/actuator/jolokia/write/java.lang:type=Memory/Verbose/true", null,
                Outcome.UNAUTHORIZED, Outcome.JOLOKIA_REFUSES, Outcome.JOLOKIA_REFUSES);
        row(cells, "Jolokia heap dump by GET", "GET", "/actuator/jolokia/exec/com.sun.management:type=HotSpotDiagnostic"
                + "/dumpHeap/" + HEAP_DUMP.toString().replace("/", "!/") + "/true", null, Outcome.UNAUTHORIZED, Outcome.JOLOKIA_REFUSES, Outcome.JOLOKIA_REFUSES);
        row(cells, "Jolokia heap dump by POST", "POST", "/actuator/jolokia",
                "{\"type\":\"exec\",\"mbean\":\"com.sun.management:type=HotSpotDiagnostic\",\"operation\":\"dumpHeap\","
                        + "\"arguments\":[" + quoted(HEAP_DUMP.toString()) + ",true]}",
                Outcome.UNAUTHORIZED, Outcome.JOLOKIA_REFUSES, Outcome.JOLOKIA_REFUSES);
        row(cells, "Jolokia Camel requestStringBody", "POST", "/actuator/jolokia",
                "{\"type\":\"exec\",\"mbean\":" + quoted(CONTEXT_MBEAN) + ",\"operation\":\"requestStringBody\","
                        + "\"arguments\":[\"sql:select 1\",\"\"]}",
                Outcome.UNAUTHORIZED, Outcome.JOLOKIA_REFUSES, Outcome.JOLOKIA_REFUSES);
        row(cells, "Jolokia Camel sendBody", "POST", "/actuator/jolokia",
                "{\"type\":\"exec\",\"mbean\":" + quoted(CONTEXT_MBEAN) + ",\"operation\":\"sendBody\","
                        + "\"arguments\":[\"log:x\",\"\"]}",
                Outcome.UNAUTHORIZED, Outcome.JOLOKIA_REFUSES, Outcome.JOLOKIA_REFUSES);
        row(cells, "Jolokia route update", "POST", "/actuator/jolokia",
                "{\"type\":\"exec\",\"mbean\":" + quoted(ROUTE_MBEAN) + ",\"operation\":\"updateRouteFromXml\","
                        + "\"arguments\":[\"<route/>\"]}",
                Outcome.UNAUTHORIZED, Outcome.JOLOKIA_REFUSES, Outcome.JOLOKIA_REFUSES);
        row(cells, "Jolokia stop of the whole Camel context", "POST", "/actuator/jolokia",
                "{\"type\":\"exec\",\"mbean\":" + quoted(CONTEXT_MBEAN) + ",\"operation\":\"stop()\"}",
                Outcome.UNAUTHORIZED, Outcome.JOLOKIA_REFUSES, Outcome.JOLOKIA_REFUSES);
        row(cells, "Jolokia route statistics", "POST", "/actuator/jolokia",
                "{\"type\":\"exec\",\"mbean\":" + quoted(ROUTE_MBEAN) + ",\"operation\":\"dumpRouteStatsAsXml\","
                        + "\"arguments\":[false,false]}",
                Outcome.UNAUTHORIZED, Outcome.JOLOKIA_REFUSES, Outcome.DATA);
        row(cells, "Jolokia notification listener", "POST", "/actuator/jolokia", "{\"type\":\"notification\","
                + "\"command\":\"register\"}", Outcome.UNAUTHORIZED, Outcome.JOLOKIA_FAILS, Outcome.JOLOKIA_FAILS);
        row(cells, "Jolokia notification listener through Hawtio", "POST", "/actuator/hawtio/jolokia", "[{\"type\":\"version\"},"
                + "{\"type\":\"notification\",\"command\":\"register\"}]", Outcome.UNAUTHORIZED, Outcome.JOLOKIA_FAILS,
                Outcome.JOLOKIA_FAILS);
        row(cells, "anything else", "GET", "/nothing-here", null, Outcome.UNAUTHORIZED, Outcome.NOT_FOUND, Outcome.NOT_FOUND, Outcome.FORBIDDEN);
        return cells.stream();
    }

    private static void row(List<Cell> cells, String door, String method, String path, String body,
                            Outcome anonymous, Outcome read, Outcome full) {
        row(cells, door, method, path, body, anonymous, read, full, null);
    }

    /** A row with a cell for a client's key too: docs/self-service.md: a client key "gets 403 on the actuator …, Hawtio and Jolokia". */
    private static void row(List<Cell> cells, String door, String method, String path, String body,
                            Outcome anonymous, Outcome read, Outcome full, Outcome client) {
        Outcome[] outcomes = {anonymous, read, full, client};
        for (Who who : Who.values()) {
            if (outcomes[who.ordinal()] != null) {
                cells.add(new Cell(door, who, method, path, body, outcomes[who.ordinal()]));
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("matrix")
    void eachCellOfTheMatrix(Cell cell) throws Exception {
        String body = cell.body() == null ? null : cell.body().formatted("Acc" + UUID.randomUUID().toString().substring(0, 8));
        String path = cell.path().replace("%PORT%", String.valueOf(port)).replace("\"", "%22");
        RawHttp.Response r = http.send(cell.method(), path, auth(cell.who(), path, body), body);
        switch (cell.outcome()) {
            case DATA -> {
                assertThat(r.status()).as(r.body()).isBetween(200, 299);
                if (isJolokia(cell.path())) {
                    assertThat(JSON.readTree(r.body()).path("status").asInt()).as(r.body()).isEqualTo(200);
                }
                if (cell.path().equals("/actuator/health")) {
                    assertThat(JSON.readTree(r.body()).has("components")).as("health details for a token").isTrue();
                }
            }
            case STATUS_ONLY -> {
                assertThat(r.status()).isEqualTo(200);
                JsonNode health = JSON.readTree(r.body());
                assertThat(health.path("status").asText()).isEqualTo("UP");
                assertThat(health.has("components")).as("no details without a token: " + r.body()).isFalse();
                assertThat(health.has("details")).isFalse();
            }
            case UNAUTHORIZED -> {
                assertProblem(r, 401);
                assertThat(r.header("WWW-Authenticate")).as("a challenge").isNotNull();
            }
            case FORBIDDEN -> assertProblem(r, 403);
            case NOT_FOUND -> assertThat(r.status()).as(r.body()).isEqualTo(404);
            case JOLOKIA_REFUSES -> assertJolokiaRefuses(r);
            case JOLOKIA_FAILS -> {
                JsonNode answer = JSON.readTree(r.body());
                assertThat(answer.path("status").asInt()).as(r.body()).isGreaterThanOrEqualTo(400);
                assertThat(answer.has("value")).as(r.body()).isFalse();
            }
        }
        if (cell.outcome() != Outcome.DATA && cell.outcome() != Outcome.STATUS_ONLY) {
            assertRouteStarted();
            assertThat(HEAP_DUMP).doesNotExist();
            assertThat(ManagementFactory.getMemoryMXBean().isVerbose()).as("the write did not happen").isFalse();
        }
    }

    /**
     * The doors above are Spring Security's own chain, not that chain behind Spring MVC's handler lookup of every
     * request (NoHandlerLookupBeforeSecurity): fails if a Spring Security upgrade wraps it again another way.
     */
    @Test
    void theSecurityChainIsNotBehindAHandlerLookup(@Autowired org.springframework.context.ApplicationContext context)
            throws Exception {
        jakarta.servlet.Filter chain = context.getBean(NoHandlerLookupBeforeSecurity.CHAIN, jakarta.servlet.Filter.class);
        List<String> seen = new ArrayList<>();
        var request = new org.springframework.mock.web.MockHttpServletRequest("GET", "/actuator/health");
        chain.doFilter(request, new org.springframework.mock.web.MockHttpServletResponse(),
                (req, res) -> java.util.Collections.list(req.getAttributeNames()).forEach(seen::add));
        assertThat(seen).as("the request went through the chain").isNotEmpty()
                .noneMatch(name -> name.startsWith(org.springframework.web.servlet.handler.HandlerMappingIntrospector.class.getName()));
    }

    @Test
    void aFullTokenStopsAndStartsARouteThroughJolokia() throws Exception {
        assertJolokiaOk(exec(FULL_TOKEN, "stop()"));
        assertThat(camel.getRouteController().getRouteStatus(ROUTE)).isEqualTo(ServiceStatus.Stopped);
        assertThat(read(FULL_TOKEN, "State")).isEqualTo("Stopped");
        assertJolokiaOk(exec(FULL_TOKEN, "start()"));
        assertRouteStarted();
        assertThat(read(READ_TOKEN, "State")).isEqualTo("Started");
        assertJolokiaOk(exec(FULL_TOKEN, "suspend()"));
        assertThat(camel.getRouteController().getRouteStatus(ROUTE)).isEqualTo(ServiceStatus.Suspended);
        assertJolokiaOk(exec(FULL_TOKEN, "resume()"));
        assertRouteStarted();
    }

    /** Jolokia takes its path from its p parameter when the URL's is empty: the requests it does not serve stay refused. */
    @Test
    void jolokiasPathGivenAsAParameterIsHeldToTheSameRules() throws Exception {
        for (String path : List.of("/actuator/jolokia/?p=/notification/register", "/actuator/jolokia?p=/config")) {
            RawHttp.Response r = http.send("GET", path, auth(Who.FULL, null), null);
            assertThat(r.status()).as(path + ": " + r.body()).isEqualTo(403);
            assertThat(r.body()).as(path).contains("are not served here");
        }
    }

    /**
     * Hawtio lists MBeans through an operation of its RBAC registry when it finds one: a read token, which may run
     * no operation, must not find it, so that its Hawtio falls back on a plain list and shows the routes.
     */
    @Test
    void hawtiosRegistryIsHiddenFromAReadTokenAndListedForAFullOne() throws Exception {
        String list = "{\"type\":\"list\",\"path\":\"hawtio/type=security,name=RBACRegistry\"}";
        RawHttp.Response read = http.send("POST", "/actuator/hawtio/jolokia", auth(Who.READ, list), list);
        assertJolokiaOk(read);
        assertThat(JSON.readTree(read.body()).path("value").isEmpty()).as(read.body()).isTrue();
        RawHttp.Response full = http.send("POST", "/actuator/hawtio/jolokia", auth(Who.FULL, list), list);
        assertJolokiaOk(full);
        assertThat(JSON.readTree(full.body()).path("value").path("op").has("list")).as(full.body()).isTrue();
    }

    /** The variants of a path that the container routes like the plain one: without a token, never data. */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {
            "/actuator;x=1/jolokia/version", "/actuator/%6aolokia/version", "//actuator/jolokia/version",
            "/actuator/./jolokia/version", "/actuator/jolokia/../jolokia/version", "/actuator/%2e/jolokia/version",
            "/actuator%2Fjolokia/version", "/actuator/jolokia;x=1/version", "/actuator/jolokia//version",
            "//actuator/jolokia/exec/" + ROUTE_MBEAN + "/stop()", "/actuator;x=1/jolokia/exec/" + ROUTE_MBEAN + "/stop()",
            "/actuator/hawtio;x=1/jolokia/version", "/actuator/%68awtio/", "//actuator/hawtio/",
            "/api;x=1/v1/sensors", "/api/v1/%73ensors", "//api/v1/sensors", "/api/./v1/sensors", "/api%2Fv1/sensors",
            "/api/v1;x=1/sensors", "/api/v1/x/../sensors", "/%61pi/v1/sensors", "/actuator/health/../metrics",
            "/actuator/prometheus/../jolokia/version", "/actuator/health;x=1/../jolokia/version"})
    void pathVariantsWithoutATokenGetNoData(String path) throws Exception {
        RawHttp.Response r = http.send("GET", path.replace("\"", "%22"), Map.of(), null);
        assertNoData(path, r);
        assertRouteStarted();
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"/actuator;x=1/jolokia", "//actuator/jolokia", "/actuator/%6aolokia", "/actuator/./jolokia"})
    void postsToPathVariantsWithoutATokenRunNothing(String path) throws Exception {
        RawHttp.Response r = http.send("POST", path, Map.of("Content-Type", "application/json"),
                "{\"type\":\"exec\",\"mbean\":" + quoted(ROUTE_MBEAN) + ",\"operation\":\"stop()\"}");
        assertNoData(path, r);
        assertRouteStarted();
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"/actuator;x=1/jolokia", "//actuator/jolokia", "/actuator/%6aolokia", "/actuator/./jolokia"})
    void aReadTokenRunsNothingThroughPathVariants(String path) throws Exception {
        RawHttp.Response r = http.send("POST", path, auth(Who.READ, "{}"),
                "{\"type\":\"exec\",\"mbean\":" + quoted(ROUTE_MBEAN) + ",\"operation\":\"stop()\"}");
        if (r.status() == 200) {
            assertJolokiaRefuses(r);
        } else {
            assertThat(r.status()).as(path + " " + r.body()).isIn(400, 403, 404);
        }
        assertRouteStarted();
    }

    @Test
    void jolokiaAnswersItsOwnOriginAndRefusesAnyOther() throws Exception {
        Map<String, String> same = new LinkedHashMap<>(auth(Who.READ, null));
        same.put("Origin", "http://127.0.0.1:" + port);
        RawHttp.Response own = http.send("GET", "/actuator/jolokia/version", same, null);
        assertJolokiaOk(own);
        assertThat(own.header("Access-Control-Allow-Origin")).as("no CORS header is needed, none is sent").isNull();

        Map<String, String> other = new LinkedHashMap<>(auth(Who.READ, null));
        other.put("Origin", "http://evil.example");
        RawHttp.Response foreign = http.send("GET", "/actuator/jolokia/version", other, null);
        assertJolokiaRefuses(foreign);
        assertThat(foreign.header("Access-Control-Allow-Origin")).isNull();
        assertThat(foreign.header("Access-Control-Allow-Credentials")).isNull();

        RawHttp.Response preflight = http.send("OPTIONS", "/actuator/jolokia", Map.of("Origin", "http://evil.example",
                "Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "authorization"), null);
        assertThat(preflight.header("Access-Control-Allow-Origin")).isNull();
        assertThat(preflight.header("Access-Control-Allow-Credentials")).isNull();
    }

    /** A browser holding a full token's Basic credentials, posting a form another site made. */
    @Test
    void aFullTokenFromAnotherOriginRunsNothing() throws Exception {
        Map<String, String> headers = new LinkedHashMap<>(auth(Who.FULL, "{}"));
        headers.put("Origin", "http://evil.example");
        headers.put("Content-Type", "text/plain");
        RawHttp.Response r = http.send("POST", "/actuator/jolokia", headers,
                "{\"type\":\"exec\",\"mbean\":" + quoted(ROUTE_MBEAN) + ",\"operation\":\"stop()\"}");
        // refused before Jolokia reads it (CrossSiteWrites); its own origin check stands behind
        assertThat(r.status()).as(r.body()).isEqualTo(403);
        assertThat(r.body()).contains("another site");
        assertRouteStarted();
    }

    /** Jolokia's JSR-160 proxy would make this JVM connect wherever a request says: it must not even try. */
    @Test
    void jolokiaDoesNotProxyToAnotherJmxAgent() throws Exception {
        try (ServerSocketChannel target = ServerSocketChannel.open()) {
            target.bind(new InetSocketAddress("127.0.0.1", 0));
            target.configureBlocking(false);
            int targetPort = ((InetSocketAddress) target.getLocalAddress()).getPort();
            String request = "{\"type\":\"read\",\"mbean\":\"java.lang:type=Memory\",\"attribute\":\"Verbose\","
                    + "\"target\":{\"url\":\"service:jmx:rmi:///jndi/rmi://127.0.0.1:" + targetPort + "/jmxrmi\"}}";
            RawHttp.Response r = http.send("POST", "/actuator/jolokia", auth(Who.FULL, request), request);
            assertThat(r.status()).isEqualTo(200);
            // the request was answered; a proxy would have connected while it ran, and the kernel queued that
            assertThat(target.accept()).as("a connection to the proxy target").isNull();
        }
    }

    // --- helpers

    /** As a client of that door sends its token: Basic from a browser on Hawtio's and Jolokia's paths, else Bearer. */
    private Map<String, String> auth(Who who, String path, String body) {
        Map<String, String> headers = auth(who, body);
        if (who == Who.FULL && !path.startsWith("/actuator/hawtio") && !path.startsWith("/actuator/jolokia")) {
            headers.put("Authorization", "Bearer " + FULL_TOKEN);
        }
        return headers;
    }

    /**
     * A browser keeps Basic credentials for the host and sends them to every path of it, another site's forms
     * included: only Hawtio and Jolokia take them (issue 36). And no write is taken from another site's page, a
     * bearer token or not.
     */
    @Test
    void basicCredentialsOpenOnlyTheConsolesAndNoWriteComesFromAnotherSite() throws Exception {
        String basic = "Basic " + Base64.getEncoder().encodeToString(("admin:" + FULL_TOKEN).getBytes());
        for (String path : List.of("/api/v1/sensors", "/actuator/metrics")) {
            RawHttp.Response r = http.send("GET", path, Map.of("Authorization", basic), null);
            assertThat(r.status()).as(path).isEqualTo(401);
            assertThat(r.body()).containsIgnoringCase("bearer token");
        }
        assertThat(http.send("GET", "/actuator/hawtio/", Map.of("Authorization", basic), null).status()).isEqualTo(200);
        assertThat(http.send("GET", "/actuator/jolokia/version", Map.of("Authorization", basic), null).status()).isEqualTo(200);

        String sensor = "{\"id\":\"X" + System.nanoTime() % 1_000_000_000L + "\",\"address\":\"x\"}";
        Map<String, String> crossSite = Map.of("Authorization", "Bearer " + FULL_TOKEN, "Content-Type", "application/json",
                "Origin", "http://evil.example");
        RawHttp.Response refused = http.send("POST", "/api/v1/sensors", crossSite, sensor);
        assertThat(refused.status()).isEqualTo(403);
        assertThat(refused.body()).contains("another site");
        Map<String, String> sameSite = Map.of("Authorization", "Bearer " + FULL_TOKEN, "Content-Type", "application/json",
                "Origin", "http://127.0.0.1:" + port);
        assertThat(http.send("POST", "/api/v1/sensors", sameSite, sensor).status()).isEqualTo(201);
        // reading from another site's page is the browser's to allow (no CORS here), not a write
        assertThat(http.send("GET", "/api/v1/sensors", Map.of("Authorization", "Bearer " + FULL_TOKEN,
                "Origin", "http://evil.example"), null).status()).isEqualTo(200);
    }

    private Map<String, String> auth(Who who, String body) {
        Map<String, String> headers = new LinkedHashMap<>();
        switch (who) {
            case READ -> headers.put("Authorization", "Bearer " + READ_TOKEN);
            // as a browser opening Hawtio sends it: any user, the token as password
            case FULL -> headers.put("Authorization", "Basic "
                    + Base64.getEncoder().encodeToString(("admin:" + FULL_TOKEN).getBytes()));
            case CLIENT -> headers.put("Authorization", "Bearer " + clientKey);
            case ANONYMOUS -> { }
        }
        if (body != null) {
            headers.put("Content-Type", "application/json");
        }
        return headers;
    }

    private RawHttp.Response exec(String token, String operation) throws IOException {
        String body = "{\"type\":\"exec\",\"mbean\":" + quoted(ROUTE_MBEAN) + ",\"operation\":\"" + operation + "\"}";
        return http.send("POST", "/actuator/jolokia", Map.of("Authorization", "Bearer " + token,
                "Content-Type", "application/json"), body);
    }

    private String read(String token, String attribute) throws IOException {
        RawHttp.Response r = http.send("GET", "/actuator/jolokia/read/" + ROUTE_MBEAN.replace("\"", "%22") + "/" + attribute,
                Map.of("Authorization", "Bearer " + token), null);
        assertJolokiaOk(r);
        return JSON.readTree(r.body()).path("value").asText();
    }

    private void assertRouteStarted() {
        assertThat(camel.getRouteController().getRouteStatus(ROUTE)).as("the route under test").isEqualTo(ServiceStatus.Started);
    }

    private static void assertNoData(String path, RawHttp.Response r) {
        assertThat(r.status()).as(path + " answered " + r.body()).isIn(400, 401, 404);
        assertThat(r.body()).as(path).doesNotContain("\"agent\"", "\"value\"", "\"items\"", "\"request\"");
    }

    private static void assertProblem(RawHttp.Response r, int status) throws IOException {
        assertThat(r.status()).as(r.body()).isEqualTo(status);
        assertThat(r.header("Content-Type")).startsWith("application/problem+json");
        assertThat(JSON.readTree(r.body()).path("status").asInt()).isEqualTo(status);
    }

    private static void assertJolokiaOk(RawHttp.Response r) throws IOException {
        assertThat(r.status()).as(r.body()).isEqualTo(200);
        assertThat(JSON.readTree(r.body()).path("status").asInt()).as(r.body()).isEqualTo(200);
    }

    private static void assertJolokiaRefuses(RawHttp.Response r) throws IOException {
        assertThat(r.status()).as(r.body()).isEqualTo(200);
        JsonNode answer = JSON.readTree(r.body());
        assertThat(answer.path("status").asInt()).as(r.body()).isEqualTo(403);
        assertThat(answer.has("value")).as(r.body()).isFalse();
    }

    private static boolean isJolokia(String path) {
        return path.startsWith("/actuator/jolokia") || path.startsWith("/actuator/hawtio/jolokia");
    }

    private static String quoted(String s) {
        try {
            return JSON.writeValueAsString(s);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    static {
        try {
            Files.deleteIfExists(HEAP_DUMP);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
