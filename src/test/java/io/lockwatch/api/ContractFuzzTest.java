package io.lockwatch.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.UUID;

import com.atlassian.oai.validator.OpenApiInteractionValidator;
import com.atlassian.oai.validator.model.Request;
import com.atlassian.oai.validator.model.SimpleResponse;
import com.atlassian.oai.validator.report.LevelResolverFactory;
import com.atlassian.oai.validator.report.ValidationReport;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.swagger.v3.oas.models.OpenAPI;
import io.swagger.v3.oas.models.Operation;
import io.swagger.v3.oas.models.PathItem;
import io.swagger.v3.oas.models.parameters.Parameter;
import io.swagger.v3.parser.OpenAPIV3Parser;
import io.swagger.v3.parser.core.models.ParseOptions;
import org.apache.camel.test.spring.junit5.CamelSpringBootTest;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * Contract-driven fuzzing: requests made from openapi.yaml for every operation, valid ones and broken ones (wrong
 * types, values out of range, hostile and huge strings, bad bytes, broken JSON, odd path and query values, wrong
 * headers and tokens), sent to the running embedded service. Every answer must be one the contract declares for the
 * operation (status, media type, body schema), and none may be a 5xx.
 *
 * <p>The seed is new on every run and printed, with how many requests were made; {@code -Dlockwatch.fuzz.seed=N}
 * makes a run again, {@code -Dlockwatch.fuzz.per-operation=N} makes it longer. A failure lists each offending
 * request with what was wrong with its answer.
 *
 * <p>Beside the random requests, the seams every operation has, each tried on every operation: a Host the service
 * does not answer for (421), a client's keys (404 for whatever is not theirs), a pull client's test and replay
 * (409), HEAD on every GET, and a request header named like each of the operation's parameters, which must not
 * change the answer.
 */
@CamelSpringBootTest
// the service answers 127.0.0.1 only: a request to localhost names a host it does not answer for
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = "lockwatch.http.allowed-hosts=127.0.0.1")
class ContractFuzzTest {

    static final ObjectMapper JSON = new ObjectMapper();
    static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @LocalServerPort int port;

    /** A mutation whose request is sent to localhost, a name the service does not answer for. */
    static final String OTHER_HOST = "host localhost";

    static final String SPEC = read("openapi.yaml");
    static final OpenAPI API = parsed(SPEC);
    // additional properties as OpenAPI reads a schema that does not forbid them: allowed (the validator's
    // default refuses them, which no schema combined with allOf can then pass)
    static final OpenApiInteractionValidator CONTRACT = OpenApiInteractionValidator.createForInlineApiSpecification(SPEC)
            .withLevelResolver(LevelResolverFactory.withAdditionalPropertiesIgnored()).build();

    private static String read(String file) {
        try {
            return Files.readString(Path.of(file));
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static OpenAPI parsed(String spec) {
        ParseOptions options = new ParseOptions();
        options.setResolve(true);
        options.setResolveFully(true);
        return new OpenAPIV3Parser().readContents(spec, null, options).getOpenAPI();
    }

    @Test
    void everyAnswerToAnyRequestIsOneTheContractDeclaresAndNoneIsA5xx() throws Exception {
        long seed = Long.getLong("lockwatch.fuzz.seed", new Random().nextLong());
        int perOperation = Integer.getInteger("lockwatch.fuzz.per-operation", 100);
        OpenAPI api = API;
        OpenApiInteractionValidator contract = CONTRACT;

        Fixtures fixtures = Fixtures.create(this::send);
        RequestMaker maker = new RequestMaker(new Random(seed), fixtures);
        List<String> failures = new ArrayList<>();
        List<String> report = new ArrayList<>();
        Map<Integer, Integer> statuses = new TreeMap<>();
        int requests = 0;
        int operations = 0;
        for (Map.Entry<String, PathItem> path : api.getPaths().entrySet()) {
            for (Map.Entry<PathItem.HttpMethod, Operation> op : path.getValue().readOperationsMap().entrySet()) {
                operations++;
                List<Parameter> parameters = new ArrayList<>();
                if (path.getValue().getParameters() != null) {
                    parameters.addAll(path.getValue().getParameters());
                }
                if (op.getValue().getParameters() != null) {
                    parameters.addAll(op.getValue().getParameters());
                }
                for (int i = 0; i < perOperation; i++) {
                    FuzzRequest request = maker.make(op.getKey().name(), path.getKey(), parameters, op.getValue());
                    HttpResponse<byte[]> answer = send(request);
                    requests++;
                    statuses.merge(answer.statusCode(), 1, Integer::sum);
                    String problem = judge(contract, request, answer);
                    if (problem != null) {
                        failures.add(request.describe() + "\n    -> " + answer.statusCode() + " "
                                + excerpt(answer.body()) + "\n    " + problem);
                        report.add(String.join(" | ", request.method(), request.templatePath(), printable(request.mutation()),
                                String.valueOf(answer.statusCode()), problem, excerpt(answer.body())));
                    }
                }
            }
        }
        String summary = String.format(java.util.Locale.US, "contract fuzzing: %,d requests over %d operations (seed %d),"
                + " answers by status %s, %d not as the contract says", requests, operations, seed, statuses, failures.size());
        System.out.println(summary);
        // the summary, then one line per answer outside the contract, to sort and count (CI prints this file)
        report.add(0, summary);
        Files.write(Path.of("target", "contract-fuzz.txt"), report);
        assertThat(failures).as("answers outside the contract (seed %d, -Dlockwatch.fuzz.seed=%d runs it again)", seed, seed)
                .isEmpty();
    }

    /**
     * Every operation at each of its seams, with valid requests: each answer must be one the contract declares for it,
     * and each seam's answer the one the contract says.
     */
    @Test
    void atEverySeamEachOperationAnswersAsTheContractSays() throws Exception {
        Fixtures fixtures = Fixtures.create(this::send);
        Map<String, String> full = Map.of("Authorization", "Bearer " + ApiTest.ADMIN, "Content-Type", "application/json");
        HttpResponse<byte[]> pull = send(new FuzzRequest("POST", "/clients", "/clients", full,
                JSON.writeValueAsBytes(Map.of("name", "fuzz pull", "delivery_mode", "pull")), "fixture"));
        assertThat(pull.statusCode()).isEqualTo(201);
        String pullClient = JSON.readTree(pull.body()).get("id").asText();
        RequestMaker maker = new RequestMaker(new Random(1), fixtures);
        List<String> failures = new ArrayList<>();
        int requests = 0;
        for (Map.Entry<String, PathItem> path : API.getPaths().entrySet()) {
            for (Map.Entry<PathItem.HttpMethod, Operation> op : path.getValue().readOperationsMap().entrySet()) {
                String method = op.getKey().name(), template = path.getKey(), id = op.getValue().getOperationId();
                List<Parameter> parameters = new ArrayList<>();
                if (path.getValue().getParameters() != null) {
                    parameters.addAll(path.getValue().getParameters());
                }
                if (op.getValue().getParameters() != null) {
                    parameters.addAll(op.getValue().getParameters());
                }
                List<Seam> seams = new ArrayList<>();
                seams.add(new Seam(OTHER_HOST, "Bearer " + ApiTest.ADMIN, Map.of(), 421));
                boolean forClients = op.getValue().getSecurity().stream().anyMatch(r -> r.containsKey("clientRead")
                        || r.containsKey("clientAdmin"));
                boolean readings = id.equals("postReadings") || id.equals("postTheThingsStackUplink");
                boolean open = op.getValue().getSecurity().isEmpty();
                // a client's key: only what the contract gives its role; anything else is 404 (readings: the devices')
                Integer keyAnswer = open ? null : readings ? Integer.valueOf(403) : forClients ? null : Integer.valueOf(404);
                seams.add(new Seam("client-read key", "Bearer " + fixtures.clientReadKey(), Map.of(), keyAnswer));
                seams.add(new Seam("client-admin key", "Bearer " + fixtures.clientAdminKey(), Map.of(), keyAnswer));
                if (id.equals("pingClient") || id.equals("replayClientNotifications")) {
                    seams.add(new Seam("a pull client", "Bearer " + ApiTest.ADMIN, Map.of("clientId", pullClient), 409));
                }
                if (method.equals("GET")) {
                    seams.add(new Seam("HEAD", "Bearer " + ApiTest.READER, Map.of(), null));
                }
                for (Seam seam : seams) {
                    FuzzRequest request = seamRequest(maker, method, template, parameters, op.getValue(), seam);
                    HttpResponse<byte[]> answer = send(request);
                    requests++;
                    String problem = judge(CONTRACT, request, answer);
                    if (problem == null && seam.status() != null && answer.statusCode() != seam.status()) {
                        problem = "expected " + seam.status();
                    }
                    if (problem != null) {
                        failures.add(id + " / " + seam.name() + ": " + request.describe() + "\n    -> " + answer.statusCode()
                                + " " + excerpt(answer.body()) + "\n    " + problem);
                    }
                }
                // a header named like each of its parameters, and like every path parameter of the contract (a
                // sensor's credentials once went a gateway's way on a gatewayId header), with a value it would
                // refuse: the answer is the one without it
                boolean repeatable = method.equals("GET") || id.equals("createSensorCredential")
                        || id.equals("createGatewayCredential");
                Map<String, Parameter> named = new java.util.TreeMap<>(PATH_PARAMETERS);
                parameters.forEach(p -> named.put(p.getName(), p));
                for (Parameter p : repeatable ? named.values() : List.<Parameter>of()) {
                    Seam plain = new Seam("plain", "Bearer " + ApiTest.ADMIN, Map.of(), null);
                    FuzzRequest without = seamRequest(maker, method, template, parameters, op.getValue(), plain);
                    Map<String, String> headers = new LinkedHashMap<>(without.headers());
                    headers.put(p.getName(), headerValue(p));
                    FuzzRequest with = new FuzzRequest(without.method(), without.templatePath(), without.rawPath(), headers,
                            without.body(), "header " + p.getName());
                    HttpResponse<byte[]> a = send(without), b = send(with);
                    requests += 2;
                    String problem = judge(CONTRACT, with, b);
                    if (problem == null && (a.statusCode() != b.statusCode()
                            || a.statusCode() < 300 && method.equals("GET") && !sameBody(a.body(), b.body())
                            || a.statusCode() >= 400 && !sameBody(a.body(), b.body()))) {
                        problem = "the header changed the answer from " + a.statusCode() + " " + excerpt(a.body());
                    }
                    if (problem != null) {
                        failures.add(id + " / header " + p.getName() + ": " + with.describe() + "\n    -> " + b.statusCode()
                                + " " + excerpt(b.body()) + "\n    " + problem);
                    }
                }
            }
        }
        System.out.printf("contract seams: %d requests, %d answers not as the contract says%n", requests, failures.size());
        assertThat(failures).as("answers at the seams outside the contract").isEmpty();
    }

    /** Every path parameter of the contract, by its name. */
    static final Map<String, Parameter> PATH_PARAMETERS = pathParameters();

    private static Map<String, Parameter> pathParameters() {
        Map<String, Parameter> all = new java.util.TreeMap<>();
        API.getPaths().values().forEach(item -> {
            List<Parameter> ps = new ArrayList<>(item.getParameters() == null ? List.of() : item.getParameters());
            item.readOperations().forEach(o -> ps.addAll(o.getParameters() == null ? List.of() : o.getParameters()));
            ps.stream().filter(p -> "path".equals(p.getIn())).forEach(p -> all.putIfAbsent(p.getName(), p));
        });
        return all;
    }

    /** A seam of an operation: who calls, the path parameters it sets, and the status it must be answered, if one. */
    record Seam(String name, String authorization, Map<String, String> path, Integer status) {
    }

    /** A valid request of the operation at the seam: its path parameters the fixtures', no query, a valid body. */
    private static FuzzRequest seamRequest(RequestMaker maker, String method, String template, List<Parameter> parameters,
                                           Operation op, Seam seam) throws Exception {
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("Authorization", seam.authorization());
        Map<String, String> path = new LinkedHashMap<>();
        for (Parameter p : parameters) {
            if ("path".equals(p.getIn())) {
                path.put(p.getName(), seam.path().getOrDefault(p.getName(), maker.fixtureValue(p)));
            }
        }
        Object body = null;
        if (template.equals("/readings")) {
            body = maker.reading();
        } else if (template.equals("/clients/{clientId}/notifications/replay")) {
            body = Map.of("since", java.time.Instant.now().minusSeconds(600).toString());
        } else if (op.getRequestBody() != null && !template.equals("/import")) {
            body = maker.valid(op.getRequestBody().getContent().get("application/json").getSchema(), "");
        } else if (template.equals("/import")) {
            body = List.of(Map.of("sensor_id", "Fi" + Integer.toString(new Random().nextInt(1_000_000), 36), "address", "fuzz"));
        }
        String sent = seam.name().equals("HEAD") ? "HEAD" : method;
        if (body != null && !sent.equals("HEAD")) {
            headers.put("Content-Type", "application/json");
        }
        return new FuzzRequest(sent, template, RequestMaker.filled(template, path, Map.of()), headers,
                body == null || sent.equals("HEAD") ? null : JSON.writeValueAsBytes(body),
                seam.name().equals(OTHER_HOST) ? OTHER_HOST : seam.name());
    }

    /**
     * What a header named like the parameter carries: a value the parameter refuses (no id, number, time, cursor or
     * list value has a space), so that a route reading it answers 400 or 404 where the plain request has its answer.
     */
    private static String headerValue(Parameter p) {
        return p.getName().equals("q") ? "no sensor has an address that starts like this" : "not a value of " + p.getName();
    }

    /** The same JSON, the answer's own clock aside: times, and the feed's place now (it moves with any write). */
    private static boolean sameBody(byte[] a, byte[] b) {
        return normal(a).equals(normal(b));
    }

    private static String normal(byte[] body) {
        return new String(body, StandardCharsets.UTF_8)
                .replaceAll("\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?Z", "T")
                .replaceAll("\"(feed_cursor|next_cursor)\":\"[^\"]*\"", "cursor");
    }

    /** Null if the answer is one the contract declares for the request's operation and not a 5xx, else what is wrong. */
    static String judge(OpenApiInteractionValidator contract, FuzzRequest request, HttpResponse<byte[]> answer) {
        if (answer.statusCode() >= 500) {
            return "a 5xx";
        }
        String contentType = answer.headers().firstValue("Content-Type").orElse(null);
        if (request.method().equals("HEAD")) {
            return judgeHead(request, answer);
        }
        if (answer.statusCode() >= 400 && (contentType == null || !contentType.startsWith("application/problem+json"))) {
            return "an error that is not problem+json";
        }
        if (!request.ofAnOperation()) {
            return null; // an empty path segment: another path than the operation's, which the contract does not cover
        }
        SimpleResponse.Builder response = SimpleResponse.Builder.status(answer.statusCode());
        if (contentType != null) {
            response.withContentType(contentType);
        }
        if (answer.body().length > 0) {
            response.withBody(new String(answer.body(), StandardCharsets.UTF_8));
        }
        ValidationReport report = contract.validateResponse(request.templatePath(),
                Request.Method.valueOf(request.method()), response.build());
        if (report.hasErrors()) {
            StringBuilder why = new StringBuilder();
            report.getMessages().stream().filter(m -> m.getLevel() == ValidationReport.Level.ERROR)
                    .forEach(m -> why.append(m.getKey()).append(": ").append(m.getMessage()).append("; "));
            return why.toString();
        }
        return null;
    }

    /**
     * HEAD is GET without the body (RFC 9110): its status must be one the contract declares for the GET, with no body,
     * and an error's media type still problem+json.
     */
    private static String judgeHead(FuzzRequest request, HttpResponse<byte[]> answer) {
        if (answer.body().length > 0) {
            return "a HEAD answered with a body";
        }
        if (!request.ofAnOperation()) {
            return null;
        }
        Operation get = API.getPaths().get(request.templatePath()).getGet();
        if (get == null) {
            return "HEAD of a path without a GET";
        }
        if (!get.getResponses().containsKey(String.valueOf(answer.statusCode()))) {
            return "a HEAD answered " + answer.statusCode() + ", which the contract does not declare for its GET "
                    + get.getResponses().keySet();
        }
        return null;
    }

    private HttpResponse<byte[]> send(FuzzRequest r) {
        try {
            String host = r.mutation().equals(OTHER_HOST) ? "localhost" : "127.0.0.1";
            HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://" + host + ":" + port + "/api/v1" + r.rawPath()))
                    .timeout(Duration.ofSeconds(30))
                    .method(r.method(), r.body() == null ? HttpRequest.BodyPublishers.noBody()
                            : r.mutation().endsWith(CHUNKED)
                            ? HttpRequest.BodyPublishers.ofInputStream(() -> new java.io.ByteArrayInputStream(r.body()))
                            : HttpRequest.BodyPublishers.ofByteArray(r.body()));
            r.headers().forEach(b::header);
            return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
        } catch (Exception e) {
            throw new IllegalStateException("could not send " + r.describe(), e);
        }
    }

    private static String excerpt(byte[] body) {
        String s = new String(body, StandardCharsets.UTF_8);
        return printable(s.length() > 300 ? s.substring(0, 300) + "…" : s);
    }

    /** Control characters, surrogates and the like as escapes: a report must print and save as UTF-8. */
    static String printable(String s) {
        StringBuilder b = new StringBuilder(s.length());
        for (char c : s.toCharArray()) {
            if (c < 0x20 || (c >= 0x7f && c < 0xa0) || Character.isSurrogate(c) || c >= 0xfff0 || c == 0x202e) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }

    /**
     * One request: its method, the contract's path template (for the validator) and the path as sent, headers and
     * body, and what was done to it (for the report).
     */
    record FuzzRequest(String method, String templatePath, String rawPath, Map<String, String> headers, byte[] body,
                       String mutation) {

        /** Whether the path is the operation's: no path parameter was left empty. */
        boolean ofAnOperation() {
            return !rawPath.contains("//") && !rawPath.endsWith("/") && !rawPath.contains("/?");
        }

        String describe() {
            String b = body == null ? "" : " body " + excerpt(body);
            return method + " " + rawPath + " [" + printable(mutation) + "] headers " + headers.keySet() + b;
        }
    }

    /** A sensor, a client and a link between them, so that valid ids reach more than 404s; the client's two keys. */
    record Fixtures(String sensorId, String clientId, String clientReadKey, String clientAdminKey) {

        static Fixtures create(java.util.function.Function<FuzzRequest, HttpResponse<byte[]>> send) throws Exception {
            String sensor = "Fz" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
            Map<String, String> headers = Map.of("Authorization", "Bearer " + ApiTest.ADMIN, "Content-Type", "application/json");
            HttpResponse<byte[]> s = send.apply(new FuzzRequest("POST", "/sensors", "/sensors", headers,
                    JSON.writeValueAsBytes(Map.of("id", sensor, "address", "fuzz")), "fixture"));
            assertThat(s.statusCode()).isEqualTo(201);
            // a closed port on loopback: a test ping is answered at once by a refused connection
            HttpResponse<byte[]> c = send.apply(new FuzzRequest("POST", "/clients", "/clients", headers,
                    JSON.writeValueAsBytes(Map.of("name", "fuzz", "url", "http://127.0.0.1:9/hook")), "fixture"));
            assertThat(c.statusCode()).isEqualTo(201);
            String client = JSON.readTree(c.body()).get("id").asText();
            HttpResponse<byte[]> l = send.apply(new FuzzRequest("PUT", "/clients/{clientId}/sensors/{sensorId}",
                    "/clients/" + client + "/sensors/" + sensor, headers, null, "fixture"));
            assertThat(l.statusCode()).isLessThan(300);
            return new Fixtures(sensor, client, key(send, headers, client, "client-read"), key(send, headers, client, "client-admin"));
        }

        static String key(java.util.function.Function<FuzzRequest, HttpResponse<byte[]>> send, Map<String, String> headers,
                          String client, String role) throws Exception {
            HttpResponse<byte[]> k = send.apply(new FuzzRequest("POST", "/clients/{clientId}/keys", "/clients/" + client + "/keys",
                    headers, JSON.writeValueAsBytes(Map.of("name", "fuzz " + role, "role", role)), "fixture"));
            assertThat(k.statusCode()).isEqualTo(201);
            return JSON.readTree(k.body()).get("token").asText();
        }
    }

    /** Makes requests from the contract, valid or broken in one way, by a seeded generator. */
    /** The end of a mutation's name whose body is sent without a Content-Length (chunked). */
    static final String CHUNKED = " (chunked)";

    static final class RequestMaker {

        private final Random random;
        private final Fixtures fixtures;

        RequestMaker(Random random, Fixtures fixtures) {
            this.random = random;
            this.fixtures = fixtures;
        }

        FuzzRequest make(String method, String template, List<Parameter> parameters, Operation op) throws Exception {
            Map<String, String> headers = new LinkedHashMap<>();
            headers.put("Authorization", "Bearer " + (method.equals("GET") && random.nextBoolean() ? ApiTest.READER : ApiTest.ADMIN));
            io.swagger.v3.oas.models.media.Schema<?> bodySchema = op.getRequestBody() == null ? null
                    : op.getRequestBody().getContent().get("application/json").getSchema();
            Object body = bodySchema == null ? null : valid(bodySchema, "");
            if (template.equals("/readings")) {
                body = reading(); // one reading or an array (ReadingsIn's oneOf): one of the fixture's sensor
            }
            Map<String, String> path = new LinkedHashMap<>();
            Map<String, String> query = new LinkedHashMap<>();
            for (Parameter p : parameters) {
                String value = parameterValue(p);
                if ("path".equals(p.getIn())) {
                    path.put(p.getName(), value);
                } else if ("query".equals(p.getIn()) && random.nextInt(3) > 0) {
                    query.put(p.getName(), value);
                }
            }
            byte[] raw = null;
            String mutation;
            switch (random.nextInt(12)) {
                case 0, 1 -> mutation = "valid";
                case 2, 3 -> {
                    if (body instanceof Map<?, ?> map && !map.isEmpty()) {
                        @SuppressWarnings("unchecked")
                        Map<String, Object> m = (Map<String, Object>) map;
                        String field = pick(new ArrayList<>(m.keySet()));
                        Object bad = hostile();
                        m.put(field, bad);
                        mutation = "body field " + field + " = " + shortly(bad);
                    } else {
                        body = hostile();
                        mutation = "body = " + shortly(body);
                    }
                }
                case 4 -> {
                    raw = brokenBody();
                    // as curl -T - sends: no Content-Length, the body's end found only by reading it
                    mutation = random.nextBoolean() ? "broken body" : "broken body" + CHUNKED;
                }
                case 5 -> {
                    if (!path.isEmpty()) {
                        String name = pick(new ArrayList<>(path.keySet()));
                        String bad = hostileText();
                        path.put(name, bad);
                        mutation = "path " + name + " = " + shortly(bad);
                    } else {
                        mutation = "valid";
                    }
                }
                case 6, 7 -> {
                    List<String> names = new ArrayList<>();
                    for (Parameter p : parameters) {
                        if ("query".equals(p.getIn())) {
                            names.add(p.getName());
                        }
                    }
                    names.add("unknown_" + random.nextInt(10));
                    String name = pick(names);
                    String bad = hostileText();
                    query.put(name, bad);
                    mutation = "query " + name + " = " + shortly(bad);
                }
                case 8 -> {
                    String[][] contentTypes = {{"Content-Type", "text/plain"}, {"Content-Type", "application/xml"},
                            {"Content-Type", "application/json; charset=latin1"}, {"Content-Type", "multipart/form-data"},
                            {"Accept", "application/xml"}, {"Accept", "text/html"}, {"Accept", "*/*"},
                            {"Content-Encoding", "gzip"}, {"Content-Type", "application/json;;"}};
                    String[] h = contentTypes[random.nextInt(contentTypes.length)];
                    if (random.nextInt(4) == 0) {
                        mutation = OTHER_HOST;
                    } else if (method.equals("GET") && random.nextInt(3) == 0) {
                        method = "HEAD";
                        mutation = "HEAD";
                    } else {
                        headers.put(h[0], h[1]);
                        mutation = "header " + h[0] + ": " + h[1];
                    }
                }
                case 9 -> {
                    String[] auth = {null, "Bearer", "Bearer ", "Bearer wrong-token", "Basic !!!", "Basic "
                            + java.util.Base64.getEncoder().encodeToString(("x:" + ApiTest.READER).getBytes(StandardCharsets.UTF_8)),
                            "Bearer " + ApiTest.READER, "Bearer " + "t".repeat(10_000), "bearer " + ApiTest.ADMIN,
                            "Bearer " + fixtures.clientReadKey(), "Bearer " + fixtures.clientAdminKey()};
                    String a = auth[random.nextInt(auth.length)];
                    if (a == null) {
                        headers.remove("Authorization");
                    } else {
                        headers.put("Authorization", a);
                    }
                    mutation = "authorization " + (a == null ? "none" : shortly(a));
                }
                case 10 -> {
                    if (body instanceof Map<?, ?> map) {
                        @SuppressWarnings("unchecked")
                        Map<String, Object> m = (Map<String, Object>) map;
                        if (!m.isEmpty() && random.nextBoolean()) {
                            String field = pick(new ArrayList<>(m.keySet()));
                            m.remove(field);
                            mutation = "body without " + field;
                        } else {
                            m.put("extra_" + random.nextInt(100), hostile());
                            mutation = "body with an extra field";
                        }
                    } else {
                        body = random.nextBoolean() ? List.of() : Map.of();
                        mutation = "body empty " + shortly(body);
                    }
                }
                default -> {
                    if (body == null) {
                        body = Map.of("unexpected", "body");
                        mutation = "a body where none is expected";
                    } else {
                        body = List.of(body, body);
                        mutation = "body in an array";
                    }
                }
            }
            String rawPath = filled(template, path, query);
            if (raw == null && body != null) {
                raw = JSON.writeValueAsBytes(body);
            }
            if (raw != null) {
                headers.putIfAbsent("Content-Type", "application/json");
            }
            return new FuzzRequest(method, template, rawPath, headers, raw, mutation);
        }

        /** The template with its path parameters and the query, encoded. */
        static String filled(String template, Map<String, String> path, Map<String, String> query) {
            String rawPath = template;
            for (Map.Entry<String, String> p : path.entrySet()) {
                rawPath = rawPath.replace("{" + p.getKey() + "}", encode(p.getValue()));
            }
            if (!query.isEmpty()) {
                StringBuilder q = new StringBuilder();
                query.forEach((k, v) -> q.append(q.length() == 0 ? "?" : "&").append(encode(k)).append('=').append(encode(v)));
                rawPath += q;
            }
            return rawPath;
        }

        /** The fixtures' ids where the parameter names one, else a valid value. */
        String fixtureValue(Parameter p) {
            return switch (p.getName()) {
                case "sensorId", "sensor_id" -> fixtures.sensorId();
                case "clientId", "client_id" -> fixtures.clientId();
                default -> String.valueOf(valid(p.getSchema(), p.getName()));
            };
        }

        String parameterValue(Parameter p) {
            String name = p.getName();
            if (name.equals("sensorId") || name.equals("sensor_id")) {
                return random.nextInt(4) > 0 ? fixtures.sensorId() : "Nx" + random.nextInt(1_000_000);
            }
            if (name.equals("clientId") || name.equals("client_id")) {
                return random.nextInt(4) > 0 ? fixtures.clientId() : UUID.randomUUID().toString();
            }
            Object v = valid(p.getSchema(), name);
            return String.valueOf(v);
        }

        Map<String, Object> reading() {
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("sensor_id", fixtures.sensorId());
            r.put("data", random.nextInt(2));
            if (random.nextBoolean()) {
                r.put("ts", System.currentTimeMillis());
            }
            return r;
        }

        /** A value the schema accepts (ids of the fixtures where a name says so). */
        Object valid(io.swagger.v3.oas.models.media.Schema<?> schema, String name) {
            if (schema == null) {
                return "x";
            }
            if (schema.getEnum() != null && !schema.getEnum().isEmpty()) {
                Object e = schema.getEnum().get(random.nextInt(schema.getEnum().size()));
                return e == null ? schema.getEnum().get(0) : e;
            }
            String type = schema.getType() != null ? schema.getType()
                    : schema.getTypes() != null && !schema.getTypes().isEmpty() ? schema.getTypes().iterator().next() : "object";
            switch (type) {
                case "integer" -> {
                    long min = schema.getMinimum() == null ? 0 : schema.getMinimum().longValue();
                    long max = schema.getMaximum() == null ? 1_000_000 : schema.getMaximum().longValue();
                    return min + (long) (random.nextDouble() * (max - min));
                }
                case "number" -> {
                    return random.nextDouble() * 100;
                }
                case "boolean" -> {
                    return random.nextBoolean();
                }
                case "array" -> {
                    List<Object> items = new ArrayList<>();
                    int n = Math.max(schema.getMinItems() == null ? 0 : schema.getMinItems(), 1);
                    for (int i = 0; i < n; i++) {
                        items.add(valid(schema.getItems(), name));
                    }
                    return items;
                }
                case "object" -> {
                    Map<String, Object> o = new LinkedHashMap<>();
                    if (schema.getProperties() != null) {
                        schema.getProperties().forEach((k, v) -> {
                            boolean required = schema.getRequired() != null && schema.getRequired().contains(k);
                            if (required || random.nextBoolean()) {
                                o.put(k, valid(v, k));
                            }
                        });
                    }
                    if (o.isEmpty() && schema.getProperties() != null && !schema.getProperties().isEmpty()) {
                        String k = schema.getProperties().keySet().iterator().next();
                        o.put(k, valid(schema.getProperties().get(k), k));
                    }
                    return o;
                }
                default -> {
                    if ("date-time".equals(schema.getFormat())) {
                        return java.time.Instant.now().minusSeconds(random.nextInt(86_400 * 30)).toString();
                    }
                    if ("uuid".equals(schema.getFormat())) {
                        return UUID.randomUUID().toString();
                    }
                    if ("uri".equals(schema.getFormat()) || name.equals("url")) {
                        return "https://hooks" + random.nextInt(1000) + ".example.com/lockwatch";
                    }
                    if (schema.getPattern() != null && schema.getPattern().contains("[0-5][0-9]")) {
                        return String.format("%02d:%02d", random.nextInt(24), random.nextInt(60)); // a time of day
                    }
                    if (name.equals("time_zone")) {
                        return "Europe/Moscow";
                    }
                    if (schema.getPattern() != null && schema.getPattern().contains("0-9A-Za-z")) {
                        return "Fv" + Integer.toString(random.nextInt(1_000_000), 36);
                    }
                    return "fuzz " + random.nextInt(1000);
                }
            }
        }

        /** A JSON value of any type, often a nasty one. */
        Object hostile() {
            return switch (random.nextInt(14)) {
                case 0 -> null;
                case 1 -> random.nextBoolean();
                case 2 -> new long[] {0, -1, Integer.MAX_VALUE + 1L, Long.MAX_VALUE, Long.MIN_VALUE}[random.nextInt(5)];
                case 3 -> new double[] {1.5, -0.0, 1e308, 4.9e-324, 2592000.5}[random.nextInt(5)];
                case 4 -> new java.math.BigInteger("9".repeat(40));
                case 5 -> List.of(1, "two", List.of());
                case 6 -> Map.of("nested", Map.of("deeper", List.of(Map.of())));
                case 7 -> "";
                case 8 -> " ";
                default -> hostileText();
            };
        }

        /** Text that has broken parsers, databases, logs and validators elsewhere. */
        String hostileText() {
            String[] texts = {
                    "", " ", "x".repeat(100_000), "ü".repeat(600), "\u0000", "a\u0000b", "\ud800", "\udfff\ud800",
                    "\uffff", "\ufeffabc", "\u202eevil", "e\u0301\u0301\u0301", "😀".repeat(20), "' OR 1=1 --",
                    "\"; DROP TABLE sensors; --", "<script>alert(1)</script>", "${jndi:ldap://x/a}", "{{7*7}}",
                    "%00", "%ff", "../../etc/passwd", "..", ".", "a/b", "a\\b", "a;b", "a?b", "a#b", "a b", "\t\r\n",
                    "-1", "0", "1e3", "1.5", "99999999999999999999", "true", "null", "[]", "{}", "NaN",
                    "2026-13-45T99:99:99Z", "2026-11-25T10:00:00", "1970-01-01T00:00:00Z", "9999-12-31T23:59:59Z",
                    "0000-01-01T00:00:00Z", UUID.randomUUID().toString().toUpperCase(), "00000000-0000-0000-0000-000000000000",
                    "Zz9", "A".repeat(17), "AAAAAAAAAAAAAAAA", "+999999999-12-31T23:59:59Z", "-999999999-01-01T00:00:00Z",
                    // cursors that decode to what no store holds: a time past them all, a sequence that is no number
                    forged("+999999999-12-31T23:59:59Z|" + UUID.randomUUID()), forged("9223372036854775807:x"),
                    forged("-1:1"), forged("1700000000000:" + "9".repeat(100)), forged("2026-11-21T12:00:00Z|x|y")};
            return texts[random.nextInt(texts.length)];
        }

        private static String forged(String cursor) {
            return java.util.Base64.getUrlEncoder().withoutPadding().encodeToString(cursor.getBytes(StandardCharsets.UTF_8));
        }

        /** Bytes that are not a JSON document of the contract. */
        byte[] brokenBody() {
            return switch (random.nextInt(11)) {
                case 0 -> new byte[0];
                case 1 -> "{\"id\":\"abc\",\"address\":\"\u00ff\"".getBytes(StandardCharsets.UTF_8);
                case 2 -> new byte[] {'{', '"', 'i', 'd', '"', ':', '"', (byte) 0xff, (byte) 0xfe, '"', '}'};
                case 3 -> "[".repeat(100_000).getBytes(StandardCharsets.US_ASCII);
                case 4 -> "{\"a\":1,\"a\":2}".getBytes(StandardCharsets.US_ASCII);
                case 5 -> "\ufeff{}".getBytes(StandardCharsets.UTF_8);
                case 6 -> "not json at all".getBytes(StandardCharsets.US_ASCII);
                case 7 -> "{\"since\": 2026-11-25}".getBytes(StandardCharsets.US_ASCII);
                case 8 -> ("{\"x\":\"" + "y".repeat(2_000_000) + "\"}").getBytes(StandardCharsets.US_ASCII);
                case 9 -> new byte[] {(byte) 0xc0, (byte) 0x80, (byte) 0xed, (byte) 0xa0, (byte) 0x80};
                default -> "{\"n\": 1e99999}".getBytes(StandardCharsets.US_ASCII);
            };
        }

        private <T> T pick(List<T> from) {
            return from.get(random.nextInt(from.size()));
        }

        private static String shortly(Object o) {
            String s = String.valueOf(o);
            return s.length() > 40 ? s.substring(0, 40) + "…(" + s.length() + ")" : s;
        }

        private static String encode(String s) {
            return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
        }
    }
}
