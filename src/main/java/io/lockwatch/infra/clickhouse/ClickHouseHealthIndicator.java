package io.lockwatch.infra.clickhouse;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;

import org.springframework.boot.actuate.health.AbstractHealthIndicator;
import org.springframework.boot.actuate.health.Health;

/** {@code clickHouse} in {@code /actuator/health}: UP when the server answers a query. */
class ClickHouseHealthIndicator extends AbstractHealthIndicator {

    private final ClickHouse clickHouse;

    public ClickHouseHealthIndicator(ClickHouse clickHouse) {
        super("ClickHouse health check failed");
        this.clickHouse = clickHouse;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) throws Exception {
        try (Connection c = clickHouse.connection(); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT version()")) {
            rs.next();
            builder.up().withDetail("address", clickHouse.address()).withDetail("version", rs.getString(1));
        }
    }
}
