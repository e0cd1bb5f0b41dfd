package io.lockwatch.console;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.camel.test.spring.junit5.CamelSpringBootTest;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * The API reference at /api/docs: a page anyone may load (it holds nothing), naming the contract it renders and
 * Redoc's bundle, both served by the service itself (it may run offline); the contract still takes a token.
 */
@CamelSpringBootTest
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ApiDocsTest {

    static final HttpClient HTTP = HttpClient.newHttpClient();
    /** The tests' read-only operator token (application.yaml of the tests, as ApiTest.READER). */
    static final String READER = "test-read-token";

    @LocalServerPort int port;

    @Test
    void thePageAndItsScriptsAreServedWithoutAToken() throws Exception {
        HttpResponse<String> page = get("/api/docs", null);
        assertThat(page.statusCode()).isEqualTo(200);
        assertThat(page.headers().firstValue("Content-Type")).hasValueSatisfying(t -> assertThat(t).startsWith("text/html"));
        assertThat(page.body()).contains("/api/v1/openapi.json").contains("<title>lockwatch API reference</title>");

        Matcher scripts = Pattern.compile("<script src=\"([^\"]+)\"").matcher(page.body());
        int found = 0;
        while (scripts.find()) {
            found++;
            HttpResponse<String> script = get(scripts.group(1), null);
            assertThat(script.statusCode()).as(scripts.group(1)).isEqualTo(200);
            assertThat(script.headers().firstValue("Content-Type")).as(scripts.group(1))
                    .hasValueSatisfying(t -> assertThat(t).contains("javascript"));
        }
        assertThat(found).as("Redoc's bundle and the page's own script").isEqualTo(2);
        assertThat(page.body()).contains("/webjars/redoc/");
        HttpResponse<String> bundle = get(page.body().replaceAll("(?s).*<script src=\"(/webjars/redoc/[^\"]+)\".*", "$1"), null);
        assertThat(bundle.body()).as("Redoc's standalone bundle").contains("Redoc").hasSizeGreaterThan(100_000);
    }

    @Test
    void theContractThePageRendersTakesAToken() throws Exception {
        assertThat(get("/api/v1/openapi.json", null).statusCode()).isEqualTo(401);
        HttpResponse<String> spec = get("/api/v1/openapi.json", READER);
        assertThat(spec.statusCode()).isEqualTo(200);
        assertThat(spec.body()).contains("\"openapi\"").contains("\"title\"");
    }

    @Test
    void nothingElseBesideThePageIsOpened() throws Exception {
        assertThat(get("/api/docs/other.html", null).statusCode()).isEqualTo(401);
        assertThat(get("/webjars/redoc/2.1.4/bundles/redoc.standalone.js.map", null).statusCode()).isEqualTo(401);
    }

    private HttpResponse<String> get(String path, String token) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).GET();
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }
}
