package io.lockwatch.infra.clickhouse;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Properties;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import ru.yandex.clickhouse.ClickHouseDataSource;

/**
 * Connections to ClickHouse through the legacy JDBC driver ({@code ru.yandex.clickhouse}), the one that
 * speaks to every server from 18.16 to current ones over HTTP, kept in a small pool. A connection of that driver
 * is not free to open: it builds an HTTP client of its own and asks the server for its time zone and version, a
 * request to ClickHouse before every insert when each insert opened one.
 */
public class ClickHouse implements AutoCloseable {

    private final HikariDataSource pool;
    private final String address;

    public ClickHouse(ClickHouseSettings settings) {
        Properties props = new Properties();
        props.setProperty("user", settings.username());
        props.setProperty("password", settings.password());
        props.setProperty("compress", "false");
        props.setProperty("socket_timeout", String.valueOf(settings.socketTimeout().toMillis()));
        HikariConfig config = new HikariConfig();
        config.setPoolName("clickhouse");
        config.setDataSource(new ClickHouseDataSource(settings.url(), props));
        config.setMaximumPoolSize(settings.poolSize());
        config.setMinimumIdle(1);
        // ClickHouse may be away when the service starts (history waits for it): the pool starts empty then
        config.setInitializationFailTimeout(-1);
        // a caller waiting for a connection while ClickHouse is away hears so soon (health, the history route's retry)
        config.setConnectionTimeout(2_000);
        config.setValidationTimeout(1_000);
        this.pool = new HikariDataSource(config);
        this.address = settings.url().replaceFirst("\\?.*$", "");
    }

    public Connection connection() throws SQLException {
        return pool.getConnection();
    }

    /** The URL without its query string, safe to show in logs and health details. */
    public String address() {
        return address;
    }

    @Override
    public void close() {
        pool.close();
    }
}
