package io.lockwatch.infra.clickhouse;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Properties;

import ru.yandex.clickhouse.ClickHouseDataSource;

/**
 * Connections to ClickHouse through the legacy JDBC driver ({@code ru.yandex.clickhouse}), the one that
 * speaks to every server from 18.16 to current ones over HTTP. Each connection is a thin HTTP handle: there
 * is nothing worth pooling.
 */
public class ClickHouse {

    private final ClickHouseDataSource dataSource;
    private final String address;

    public ClickHouse(ClickHouseSettings settings) {
        Properties props = new Properties();
        props.setProperty("user", settings.username());
        props.setProperty("password", settings.password());
        props.setProperty("compress", "false");
        props.setProperty("socket_timeout", String.valueOf(settings.socketTimeout().toMillis()));
        this.dataSource = new ClickHouseDataSource(settings.url(), props);
        this.address = settings.url().replaceFirst("\\?.*$", "");
    }

    public Connection connection() throws SQLException {
        return dataSource.getConnection();
    }

    /** The URL without its query string, safe to show in logs and health details. */
    public String address() {
        return address;
    }
}
