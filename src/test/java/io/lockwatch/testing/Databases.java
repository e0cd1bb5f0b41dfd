package io.lockwatch.testing;

import static org.awaitility.Awaitility.await;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;

import org.springframework.jdbc.core.JdbcTemplate;

/** What a test does to the database under the service. */
public final class Databases {

    private Databases() {
    }

    /**
     * Makes PostgreSQL read-only for every session, or writable again: what a fail-over to a standby looks like to
     * the service (its writes fail with 25006, which it takes for a database that is away).
     * <p>
     * Returns once the setting holds for every connection the service will use. {@code pg_reload_conf()} only signals
     * the postmaster, which then signals each backend, so a pooled connection used at once may still run under the
     * old setting (CI saw it): this waits until a new session gets the setting, then has the pool replace its
     * connections.
     */
    public static void readOnly(JdbcTemplate jdbc, boolean on) {
        jdbc.execute((Connection c) -> {
            try (Statement st = c.createStatement()) {
                // this pooled connection must not keep a setting of its own: the service borrows it next
                st.execute("SET default_transaction_read_only = off");
                st.execute(on ? "ALTER SYSTEM SET default_transaction_read_only = on" : "ALTER SYSTEM RESET default_transaction_read_only");
                st.execute("SELECT pg_reload_conf()");
                st.execute("RESET default_transaction_read_only");
            }
            return null;
        });
        HikariDataSource pool = hikari(jdbc.getDataSource());
        String expected = on ? "on" : "off";
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20))
                .until(() -> expected.equals(newSessionsSetting(pool)));
        pool.getHikariPoolMXBean().softEvictConnections();
    }

    private static HikariDataSource hikari(DataSource dataSource) {
        try {
            return dataSource.unwrap(HikariDataSource.class);
        } catch (SQLException e) {
            throw new IllegalStateException("the tests expect the service's pool to be Hikari's", e);
        }
    }

    /** The setting a session started now gets: the postmaster's, after it has taken the reload. */
    private static String newSessionsSetting(HikariDataSource pool) throws SQLException {
        try (Connection fresh = DriverManager.getConnection(pool.getJdbcUrl(), pool.getUsername(), pool.getPassword());
             Statement st = fresh.createStatement();
             ResultSet rs = st.executeQuery("SHOW default_transaction_read_only")) {
            rs.next();
            return rs.getString(1);
        }
    }
}
