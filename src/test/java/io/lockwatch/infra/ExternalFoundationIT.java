package io.lockwatch.infra;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Map;
import java.util.UUID;

import io.lockwatch.infra.clickhouse.ClickHouse;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.ResponseEntity;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.ActiveProfiles;

/**
 * The foundation against the real services started by {@code scripts/services.sh up}: RabbitMQ, PostgreSQL
 * and ClickHouse on 127.0.0.1. If one is missing the context does not start and every test here fails.
 */
@ActiveProfiles("external")
// closed after the class: a cached context would go on consuming and delivering beside the next test
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
class ExternalFoundationIT extends FoundationContract {

    @Autowired
    ClickHouse clickHouse;

    @Autowired
    org.springframework.context.ApplicationContext context;

    @Test
    void brokerIsRabbitMq() {
        // Qpid reports its own version (10.x) in the AMQP handshake; RabbitMQ reports 3.x or later
        String product = rabbitProduct();
        assertThat(product).isEqualTo("RabbitMQ");
    }

    /** On RabbitMQ every queue the service declares is a quorum queue (the external profile's default). */
    @Test
    void everyQueueTheServiceDeclaresIsAQuorumQueue() throws Exception {
        java.util.Set<String> names = new java.util.TreeSet<>();
        context.getBeansOfType(org.springframework.amqp.core.Queue.class).values().forEach(q -> names.add(q.getName()));
        context.getBeansOfType(org.springframework.amqp.core.Declarables.class).values().forEach(d ->
                d.getDeclarablesByType(org.springframework.amqp.core.Queue.class).forEach(q -> names.add(q.getName())));
        assertThat(names).contains("lockwatch.readings", "lockwatch.readings.invalid", "lockwatch.history.readings");
        io.lockwatch.testing.RabbitManagement management = new io.lockwatch.testing.RabbitManagement(15672);
        for (String name : names) {
            com.fasterxml.jackson.databind.JsonNode queue = management.queue("/", name);
            assertThat(queue).as(name).isNotNull();
            assertThat(queue.get("type").asText()).as(name).isEqualTo("quorum");
            assertThat(queue.get("durable").asBoolean()).as(name).isTrue();
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void healthIncludesClickHouse() {
        org.springframework.http.HttpHeaders headers = new org.springframework.http.HttpHeaders();
        headers.setBearerAuth("test-read-token");
        ResponseEntity<Map> response = http.exchange("/actuator/health", org.springframework.http.HttpMethod.GET,
                new org.springframework.http.HttpEntity<>(headers), Map.class);

        Map<String, Map<String, Object>> components = (Map<String, Map<String, Object>>) response.getBody().get("components");
        assertThat(components.get("clickHouse")).containsEntry("status", "UP");
    }

    @Test
    void clickHouseRoundTrip() throws Exception {
        String table = "selftest_" + UUID.randomUUID().toString().replace("-", "");
        String marker = UUID.randomUUID().toString();
        try (Connection c = clickHouse.connection(); Statement st = c.createStatement()) {
            st.execute("CREATE TABLE " + table + " (id String, n Int64) ENGINE = Memory");
            try {
                try (PreparedStatement insert = c.prepareStatement("INSERT INTO " + table + " (id, n) VALUES (?, ?)")) {
                    for (int i = 1; i <= 3; i++) {
                        insert.setString(1, marker);
                        insert.setLong(2, i);
                        insert.addBatch();
                    }
                    insert.executeBatch();
                }
                try (PreparedStatement select = c.prepareStatement("SELECT count(), sum(n) FROM " + table + " WHERE id = ?")) {
                    select.setString(1, marker);
                    try (ResultSet rs = select.executeQuery()) {
                        assertThat(rs.next()).isTrue();
                        assertThat(rs.getLong(1)).isEqualTo(3);
                        assertThat(rs.getLong(2)).isEqualTo(6);
                    }
                }
            } finally {
                st.execute("DROP TABLE IF EXISTS " + table);
            }
        }
    }

    private String rabbitProduct() {
        return amqpAdminConnectionProperty("product");
    }

    private String amqpAdminConnectionProperty(String key) {
        var factory = ((org.springframework.amqp.rabbit.core.RabbitAdmin) amqpAdmin).getRabbitTemplate().getConnectionFactory();
        try (var connection = factory.createConnection()) {
            Object value = connection.getDelegate().getServerProperties().get(key);
            return String.valueOf(value);
        }
    }
}
