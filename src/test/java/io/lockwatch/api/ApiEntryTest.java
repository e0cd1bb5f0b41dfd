package io.lockwatch.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;
import java.util.UUID;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import org.apache.camel.test.spring.junit5.CamelSpringBootTest;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * What reaches an operation from a request, checked from the contract (issue 54): only its declared parameters
 * (a request header named like one changes nothing), HEAD on every GET, and a 400 that names the field or
 * parameter at fault.
 */
@CamelSpringBootTest
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ApiEntryTest {

    static final ObjectMapper JSON = new ObjectMapper();
    static final HttpClient HTTP = HttpClient.newHttpClient();
    static JsonNode contract;

    @LocalServerPort int port;

    record Answer(int status, String contentType, String body) {
        JsonNode json() throws Exception {
            return JSON.readTree(body);
        }
    }

    /** An operation of the contract: its method, its path and the operation. */
    record Operation(String method, String path, JsonNode op) {
        @Override
        public String toString() {
            return method + " " + path;
        }
    }

    @BeforeAll
    static void contract() throws Exception {
        contract = new ObjectMapper(new YAMLFactory()).readTree(Files.readString(Path.of("openapi.yaml")));
    }

    // --- only declared parameters are read

    /**
     * Every GET of the contract, by an operator and by a client's key, answers the same with or without a request
     * header named like each query and path parameter of the contract (with a value that would be refused or would
     * name another client's things, were it read).
     */
    @Test
    void aHeaderNamedLikeAParameterChangesNoAnswer() throws Exception {
        Fixture f = fixture();
        Map<String, String> headers = new LinkedHashMap<>();
        for (String name : parameterNames()) {
            headers.put(name, name.endsWith("Id") || name.endsWith("_id") ? f.otherClient : "!not-a-value");
        }
        for (Operation op : operations()) {
            if (!op.method().equals("GET") || op.path().contains("{importId}")) {
                continue;
            }
            String uri = f.fill(op.path());
            for (String token : List.of(ApiTest.ADMIN, f.key)) {
                Answer plain = send("GET", uri, token, Map.of(), null);
                Answer steered = send("GET", uri, token, headers, null);
                assertThat(steered.status()).as("%s as %s: %s", op, token == f.key ? "a client key" : "the operator",
                        steered.body()).isEqualTo(plain.status());
            }
        }
    }

    /** The two cases of the issue: a client_id header on the notifications, a gatewayId header on the credentials. */
    @Test
    void theHeadersOfTheIssueAreNotParameters() throws Exception {
        Fixture f = fixture();
        Answer own = send("GET", "/notifications", f.key, Map.of("client_id", f.otherClient), null);
        assertThat(own.status()).as(own.body()).isEqualTo(200);
        assertThat(own.body()).doesNotContain(f.otherClient);

        Answer credentials = send("GET", "/sensors/" + f.sensor + "/credentials", ApiTest.ADMIN,
                Map.of("gatewayId", "no-such-gateway"), null);
        assertThat(credentials.status()).as(credentials.body()).isEqualTo(200);
        Answer made = send("POST", "/sensors/" + f.sensor + "/credentials", ApiTest.ADMIN,
                Map.of("gatewayId", "no-such-gateway"), null);
        assertThat(made.status()).as(made.body()).isEqualTo(201);
        assertThat(made.json().toString()).contains(f.sensor).doesNotContain("no-such-gateway");
    }

    // --- HEAD

    /** Every GET of the contract answers HEAD with the GET's status and media type and no body; a client's key too. */
    @Test
    void everyGetAnswersHeadWithoutABody() throws Exception {
        Fixture f = fixture();
        for (Operation op : operations()) {
            if (!op.method().equals("GET")) {
                continue;
            }
            String uri = f.fill(op.path());
            for (String token : List.of(ApiTest.ADMIN, f.key)) {
                Answer get = send("GET", uri, token, Map.of(), null);
                Answer head = send("HEAD", uri, token, Map.of(), null);
                assertThat(head.status()).as("HEAD %s (GET: %s)", uri, get.body()).isEqualTo(get.status());
                assertThat(head.contentType()).as("HEAD %s", uri).isEqualTo(get.contentType());
                assertThat(head.body()).as("HEAD %s", uri).isEmpty();
            }
        }
        // a long poll is not held for a HEAD: answered at once (its wait is beyond the request's timeout)
        Answer feed = send("HEAD", "/clients/" + f.client + "/feed?wait=60", f.key, Map.of(), null);
        assertThat(feed.status()).isEqualTo(200);
        assertThat(send("HEAD", "/clients/" + f.otherClient, f.key, Map.of(), null).status()).isEqualTo(404);
        assertThat(send("HEAD", "/sensors", null, Map.of(), null).status()).isEqualTo(401);
    }

    // --- problems that name the field

    /**
     * Every body of the contract with required properties, sent without them, is a 400 naming one of them; with a
     * property its schema does not have, a 400 naming that one.
     */
    @Test
    void aMissingOrUnknownPropertyIsNamed() throws Exception {
        Fixture f = fixture();
        int checked = 0;
        for (Operation op : operations()) {
            JsonNode schema = resolved(op.op().at("/requestBody/content/application~1json/schema"));
            if (schema.isMissingNode() || !"object".equals(schema.path("type").asText())) {
                continue;
            }
            String uri = f.fill(op.path());
            List<String> required = new ArrayList<>();
            schema.path("required").forEach(r -> required.add(r.asText()));
            if (!required.isEmpty()) {
                Answer a = send(op.method(), uri, ApiTest.ADMIN, Map.of("Content-Type", "application/json"), "{}");
                assertThat(a.status()).as("%s {}: %s", op, a.body()).isEqualTo(400);
                assertThat(a.json().path("field").asText()).as("%s {}: %s", op, a.body()).isIn(required);
                checked++;
            }
            if (schema.path("additionalProperties").isBoolean() && !schema.path("additionalProperties").asBoolean()) {
                Map<String, Object> body = new LinkedHashMap<>();
                required.forEach(r -> body.put(r, "x"));
                body.put("not_in_the_contract", 1);
                Answer a = send(op.method(), uri, ApiTest.ADMIN, Map.of("Content-Type", "application/json"),
                        JSON.writeValueAsString(body));
                assertThat(a.status()).as("%s %s: %s", op, body, a.body()).isEqualTo(400);
                assertThat(a.json().at("/errors").toString() + a.json().path("field").asText())
                        .as("%s: %s", op, a.body()).contains("not_in_the_contract");
                checked++;
            }
        }
        assertThat(checked).isGreaterThan(10);
    }

    /** The cases of the issue, each with the field it concerns, in the service's own a.b[0].c style. */
    @Test
    void theProblemsOfTheIssueNameTheirField() throws Exception {
        Fixture f = fixture();
        Map<String, String> json = Map.of("Content-Type", "application/json");
        assertField(send("POST", "/sensors", ApiTest.ADMIN, json, "{\"id\":\"NoAddress1\"}"), "address");
        assertField(send("POST", "/sensors", ApiTest.ADMIN, json, "{\"id\":\"Ab1\",\"address\":\"x\",\"colour\":\"red\"}"), "colour");
        assertField(send("POST", "/clients", ApiTest.ADMIN, json, "{\"url\":\"https://hooks.example.com/a\"}"), "name");
        assertField(send("PUT", "/sensors/" + f.sensor + "/escalation", ApiTest.ADMIN, json,
                "{\"steps\":[{\"client_id\":\"" + f.client + "\"}]}"), "steps[0].after_seconds");
        assertField(send("PUT", "/sensors/" + f.sensor + "/escalation", ApiTest.ADMIN, json,
                "{\"steps\":[{\"client_id\":\"" + f.client + "\",\"after_seconds\":-1}]}"), "steps[0].after_seconds");
        // the body as a whole: an update with nothing in it
        assertField(send("PUT", "/sensors/" + f.sensor, ApiTest.ADMIN, json, "{}"), "");
        // readings: the first that is missing, or the first past the limit
        assertField(send("POST", "/readings", ApiTest.ADMIN, json, "[]"), "[0]");
        StringBuilder many = new StringBuilder("[");
        for (int i = 0; i < 1001; i++) {
            many.append(i == 0 ? "" : ",").append("{\"sensor_id\":\"").append(f.sensor).append("\",\"data\":1}");
        }
        assertField(send("POST", "/readings", ApiTest.ADMIN, json, many.append(']').toString()), "[1000]");
        // a query's value: the parameter, and no word of a body
        Answer maybe = send("GET", "/alarms?active=maybe", ApiTest.ADMIN, Map.of(), null);
        assertField(maybe, "active");
        assertThat(maybe.json().get("detail").asText()).doesNotContain("body").contains("true or false");
        Answer limit = send("GET", "/sensors?limit=many", ApiTest.ADMIN, Map.of(), null);
        assertField(limit, "limit");
    }

    private static void assertField(Answer a, String field) throws Exception {
        assertThat(a.status()).as(a.body()).isEqualTo(400);
        assertThat(a.contentType()).startsWith("application/problem+json");
        assertThat(a.json().has("field")).as(a.body()).isTrue();
        assertThat(a.json().get("field").asText()).as(a.body()).isEqualTo(field);
    }

    // --- the contract and the things its paths name

    /** A sensor, a client linked to it with a client-admin key, and another client. */
    private record Fixture(String sensor, String client, String key, String otherClient) {
        String fill(String path) {
            return path.replace("{sensorId}", sensor).replace("{clientId}", client)
                    .replaceAll("\\{[A-Za-z]+Id}", UUID.randomUUID().toString());
        }
    }

    private Fixture fixture() throws Exception {
        String sensor = "E" + UUID.randomUUID().toString().replace("-", "").substring(0, 15);
        Map<String, String> json = Map.of("Content-Type", "application/json");
        assertThat(send("POST", "/sensors", ApiTest.ADMIN, json, "{\"id\":\"" + sensor + "\",\"address\":\"entry\"}").status())
                .isEqualTo(201);
        String client = send("POST", "/clients", ApiTest.ADMIN, json, "{\"name\":\"entry\",\"delivery_mode\":\"pull\"}")
                .json().get("id").asText();
        String other = send("POST", "/clients", ApiTest.ADMIN, json, "{\"name\":\"other\",\"delivery_mode\":\"pull\"}")
                .json().get("id").asText();
        assertThat(send("PUT", "/clients/" + client + "/sensors/" + sensor, ApiTest.ADMIN, Map.of(), null).status()).isLessThan(300);
        Answer key = send("POST", "/clients/" + client + "/keys", ApiTest.ADMIN, json,
                "{\"name\":\"entry\",\"role\":\"client-admin\"}");
        assertThat(key.status()).as(key.body()).isEqualTo(201);
        return new Fixture(sensor, client, key.json().get("token").asText(), other);
    }

    private static List<Operation> operations() {
        List<Operation> all = new ArrayList<>();
        contract.get("paths").fields().forEachRemaining(path -> path.getValue().fields().forEachRemaining(op -> {
            if (op.getValue().has("operationId")) {
                all.add(new Operation(op.getKey().toUpperCase(Locale.ROOT), path.getKey(), op.getValue()));
            }
        }));
        return all;
    }

    /** The name of every query and path parameter of the contract. */
    private static TreeSet<String> parameterNames() {
        TreeSet<String> names = new TreeSet<>();
        contract.get("paths").forEach(path -> {
            List<JsonNode> lists = new ArrayList<>(List.of(path.path("parameters")));
            path.forEach(op -> lists.add(op.path("parameters")));
            lists.forEach(list -> list.forEach(p -> {
                JsonNode parameter = resolved(p);
                if (List.of("query", "path").contains(parameter.path("in").asText())) {
                    names.add(parameter.path("name").asText());
                }
            }));
        });
        assertThat(names).contains("client_id", "gatewayId", "clientId", "limit", "cursor");
        return names;
    }

    private static JsonNode resolved(JsonNode node) {
        String ref = node.path("$ref").asText("");
        return ref.startsWith("#/") ? contract.at(ref.substring(1)) : node;
    }

    private Answer send(String method, String path, String token, Map<String, String> headers, String body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/api/v1" + path))
                .timeout(Duration.ofSeconds(20))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        headers.forEach(b::header);
        HttpResponse<String> r = HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
        return new Answer(r.statusCode(), r.headers().firstValue("Content-Type").orElse(""), r.body());
    }
}
