package io.lockwatch.infra;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Value;

/** The foundation on the embedded default: Qpid Broker-J and zonky PostgreSQL, started in process. */
class EmbeddedFoundationTest extends FoundationContract {

    @Value("${spring.datasource.url}")
    String datasourceUrl;
    @Value("${spring.rabbitmq.port}")
    int brokerPort;

    @Test
    void embeddedServicesListenOnLoopback() {
        assertThat(datasourceUrl).startsWith("jdbc:postgresql://127.0.0.1:");
        assertThat(jdbc.queryForObject("SELECT inet_server_addr()::text", String.class)).isEqualTo("127.0.0.1/32");
        assertThat(brokerPort).isPositive();
    }
}
