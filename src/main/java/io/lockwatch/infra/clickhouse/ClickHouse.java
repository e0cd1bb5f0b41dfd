package io.lockwatch.infra.clickhouse;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Properties;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import org.springframework.jdbc.datasource.DelegatingDataSource;
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
        config.setDataSource(withoutAliveCheck(new ClickHouseDataSource(settings.url(), props)));
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

    /**
     * The pool checks a connection idle for more than half a second before lending it, and this driver's check is
     * a query over HTTP: before nearly every history insert and export (once a second each), 2.6% of the service's
     * CPU at 7,000 readings/s and a query on ClickHouse's side. Over HTTP there is no socket to go stale; a
     * statement on a server that is away fails by itself and is retried by its flow.
     */
    static DataSource withoutAliveCheck(DataSource driver) {
        return new DelegatingDataSource(driver) {
            @Override
            public Connection getConnection() throws SQLException {
                return aliveWhileOpen(super.getConnection());
            }

            @Override
            public Connection getConnection(String username, String password) throws SQLException {
                return aliveWhileOpen(super.getConnection(username, password));
            }
        };
    }

    private static Connection aliveWhileOpen(Connection connection) {
        return (Connection) Proxy.newProxyInstance(ClickHouse.class.getClassLoader(), new Class<?>[] {Connection.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("isValid") && method.getParameterCount() == 1) {
                        return !connection.isClosed();
                    }
                    try {
                        return method.invoke(connection, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
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
