package io.lockwatch.bench;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.List;

/**
 * What the device benchmarks share: the service on the benchmark's own database and virtual host, and N sensors
 * {@code <prefix>0…N-1} each with a credential of its own. One credential is made through the API; the others are
 * copied from its row in SQL (the same hash, each its own login), so that a registry of N devices takes seconds, not N
 * slow creations; a login is checked against its hash all the same. Every device's secret is the one returned.
 */
final class BenchDevices {

    static final String JDBC_URL = "jdbc:postgresql://127.0.0.1:5432/" + BenchOptions.ISOLATED_DATABASE;

    private BenchDevices() {
    }

    static List<String> serviceArguments() {
        return List.of("--spring.rabbitmq.virtual-host=" + BenchOptions.ISOLATED_VHOST, "--spring.datasource.url=" + JDBC_URL,
                "--lockwatch.clickhouse.url=jdbc:clickhouse://127.0.0.1:8123/" + BenchOptions.ISOLATED_DATABASE);
    }

    /** A prefix no earlier run used: sensor ids are letters and digits. */
    static String prefix(String letters) {
        return letters + Long.toString(System.currentTimeMillis() % 1_000_000_000L, 36);
    }

    /** N sensors with a credential each; returns their secret. */
    static String register(HttpClient http, URI service, String prefix, int n) throws Exception {
        try (Connection db = DriverManager.getConnection(JDBC_URL, "lockwatch", "lockwatch"); Statement s = db.createStatement()) {
            s.execute("INSERT INTO sensors (id, address) SELECT '" + prefix + "' || i, 'bench' FROM generate_series(0, " + (n - 1) + ") i");
            HttpResponse<String> made = http.send(HttpRequest.newBuilder(service.resolve("/api/v1/sensors/" + prefix + "0/credentials"))
                    .header("Authorization", "Bearer " + ServiceProcess.API_TOKEN).POST(HttpRequest.BodyPublishers.noBody()).build(),
                    HttpResponse.BodyHandlers.ofString());
            if (made.statusCode() != 201) {
                throw new IllegalStateException("credential not made: " + made.statusCode() + " " + made.body());
            }
            s.execute("INSERT INTO device_credentials (login, sensor_id, secret_hash) SELECT 'sensor.' || s.id, s.id, c.secret_hash "
                    + "FROM sensors s, device_credentials c WHERE s.id LIKE '" + prefix + "%' AND s.id <> '" + prefix
                    + "0' AND c.login = 'sensor." + prefix + "0'");
            s.execute("ANALYZE device_credentials");
            return new com.fasterxml.jackson.databind.ObjectMapper().readTree(made.body()).get("secret").asText();
        }
    }

    /** The run's sensors, and with them their credentials. */
    static void remove(String prefix) throws Exception {
        try (Connection db = DriverManager.getConnection(JDBC_URL, "lockwatch", "lockwatch"); Statement s = db.createStatement()) {
            s.execute("DELETE FROM sensors WHERE id LIKE '" + prefix + "%'");
        }
    }
}
