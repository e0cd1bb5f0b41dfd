package io.lockwatch.infra;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.camel.test.spring.junit5.CamelSpringBootTest;
import org.apache.camel.test.spring.junit5.DisableJmx;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.autoconfigure.actuate.observability.AutoConfigureObservability;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.yaml.snakeyaml.Yaml;

/**
 * The Grafana dashboard and the Prometheus alert rules under docker/ ask only for series the running service
 * exports: every metric name in their expressions, and every label value they select with {@code =}, is in
 * {@code /actuator/prometheus}. A renamed meter fails here instead of leaving an empty panel or a silent alert.
 */
@CamelSpringBootTest
// the scrape is off in tests unless asked for; exactly AccessMatrixTest's context (JMX on), so it is booted once
// and is the same whichever of the two runs first
@AutoConfigureObservability(tracing = false)
@DisableJmx(false)
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = "spring.jmx.enabled=true")
// closed after the class: its MBeans are JVM-wide, and a later class's own application in this JVM (EmbeddedRestartTest)
// registers the same names
@org.springframework.test.annotation.DirtiesContext(classMode = org.springframework.test.annotation.DirtiesContext.ClassMode.AFTER_CLASS)
class ObservabilityFilesTest {

    private static final Pattern METRIC = Pattern.compile(
            "\\b((?:lockwatch|jvm|process|system|hikaricp|logback|http_server)_[a-z0-9_]+)(\\{([^}]*)})?");
    private static final Pattern EQUALS = Pattern.compile("([a-z_]+)\\s*=\\s*\"([^\"]*)\"");

    @LocalServerPort int port;

    @Test
    void theDashboardParsesAndAsksOnlyForSeriesTheServiceExports() throws Exception {
        JsonNode dashboard = new ObjectMapper().readTree(Path.of("docker/grafana/dashboards/lockwatch.json").toFile());
        List<String> expressions = new ArrayList<>();
        List<String> titles = new ArrayList<>();
        for (JsonNode panel : dashboard.path("panels")) {
            titles.add(panel.path("title").asText());
            assertThat(panel.path("targets")).as(panel.path("title").asText()).isNotEmpty();
            panel.path("targets").forEach(t -> expressions.add(t.path("expr").asText()));
        }

        assertThat(titles).contains("Readings ingested", "Parked readings by reason", "State changes",
                "Notification latency (event to 2xx)", "Deliveries by outcome", "Notifications retrying and dead",
                "Sensors lost now", "History lag", "Backlog per queue", "JVM heap used", "Database pool");
        assertExported(expressions);
    }

    @Test
    void theAlertRulesAskOnlyForSeriesTheServiceExports() throws Exception {
        Map<String, Object> rules = new Yaml().load(Files.readString(Path.of("docker/prometheus/alerts.yml")));
        Map<String, String> alerts = new LinkedHashMap<>();
        for (Object group : (List<?>) rules.get("groups")) {
            for (Object rule : (List<?>) ((Map<?, ?>) group).get("rules")) {
                Map<?, ?> r = (Map<?, ?>) rule;
                alerts.put((String) r.get("alert"), (String) r.get("expr"));
            }
        }
        Map<String, Object> prometheus = new Yaml().load(Files.readString(Path.of("docker/prometheus/prometheus.yml")));

        assertThat(alerts).containsOnlyKeys("LockwatchNotificationsDead", "LockwatchLostSensorsSurge",
                "LockwatchReadingsBacklogGrowing", "LockwatchHistoryLagging", "LockwatchClientCircuitOpen",
                "LockwatchIngestFailing");
        assertThat(prometheus.get("rule_files")).isEqualTo(List.of("/etc/prometheus/alerts.yml"));
        assertExported(new ArrayList<>(alerts.values()));
    }

    private void assertExported(List<String> expressions) throws Exception {
        String scrape = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://localhost:" + port + "/actuator/prometheus")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        List<String> series = scrape.lines().filter(l -> !l.startsWith("#") && !l.isBlank()).toList();
        TreeSet<String> asked = new TreeSet<>();
        for (String expr : expressions) {
            Matcher m = METRIC.matcher(expr);
            while (m.find()) {
                String name = m.group(1);
                asked.add(name);
                List<String> ofName = series.stream().filter(l -> l.startsWith(name + "{") || l.startsWith(name + " ")).toList();
                assertThat(ofName).as("series of %s, asked by %s", name, expr).isNotEmpty();
                if (m.group(3) != null) {
                    Matcher eq = EQUALS.matcher(m.group(3));
                    while (eq.find()) {
                        String label = eq.group(1) + "=\"" + eq.group(2) + "\"";
                        assertThat(ofName).as("a series of %s with %s, asked by %s", name, label, expr)
                                .anyMatch(l -> l.contains(label));
                    }
                }
            }
        }
        assertThat(asked).as("metric names found in the expressions").isNotEmpty();
    }
}
