package io.lockwatch.infra.errors;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.time.Instant;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.HikariPoolMXBean;
import org.slf4j.LoggerFactory;
import org.springframework.jdbc.datasource.DelegatingDataSource;

/**
 * The database as the pool last found it: away from the moment a connection could not be opened, until one is
 * opened again. Meanwhile a request for a connection, with none idle in the pool, fails at once, which every flow
 * takes for a database away ({@link ServicesAway}): the API answers 503 and health DOWN at once, not after the pool's
 * {@code connection-timeout} (5 s, for each request: issue 54), and flows wait it out as before.
 *
 * <p>The pool's own threads keep trying to open connections; while the database is away a probe also asks the pool
 * for one, so that it tries however its minimum idle is set. The first opened says the database is back.
 */
public final class DatabaseAway {

    private static final org.slf4j.Logger log = LoggerFactory.getLogger(DatabaseAway.class);

    private final HikariDataSource pool;
    private volatile Away away;
    private Thread probe; // under this object's lock

    private record Away(Instant since, String why) {
    }

    private DatabaseAway(HikariDataSource pool) {
        this.pool = pool;
    }

    /**
     * The pool, answering at once while the database is away: Hikari opens its connections through an observer of
     * what it could and could not open. To be called before the pool starts.
     */
    public static DataSource watched(HikariDataSource pool) {
        if (pool.getDataSource() != null || pool.getJdbcUrl() == null) {
            return pool; // a data source of the operator's own: opened as it says, not observed
        }
        DatabaseAway away = new DatabaseAway(pool);
        pool.setDataSource(away.new Opening(new com.zaxxer.hikari.util.DriverDataSource(pool.getJdbcUrl(),
                pool.getDriverClassName(), pool.getDataSourceProperties(), pool.getUsername(), pool.getPassword())));
        return away.new AtOnce(pool);
    }

    /** Whether the database is known to be away now: the pool's last attempt to open a connection failed. */
    public boolean known() {
        return away != null;
    }

    private void failedToOpen(SQLException e) {
        if (away == null) {
            away = new Away(Instant.now(), e.toString());
            log.warn("The database is away: a connection could not be opened ({}); requests for one fail at once "
                    + "until one is opened again", e.toString());
        }
        probeWhileAway();
    }

    private void opened() {
        Away was = away;
        if (was != null) {
            away = null;
            log.info("The database is back (away since {})", was.since());
        }
    }

    /** One probe at a time: a request for a connection from the pool, again and again while the database is away. */
    private synchronized void probeWhileAway() {
        if (probe != null && probe.isAlive()) {
            return;
        }
        probe = new Thread(() -> {
            while (away != null && !pool.isClosed()) {
                // each request waits up to the pool's connection-timeout, while the pool tries to open one
                try (Connection c = pool.getConnection()) {
                    opened();
                } catch (SQLException | RuntimeException e) {
                    if (pool.isClosed()) {
                        return;
                    }
                }
            }
        }, "database-away-probe");
        probe.setDaemon(true);
        probe.start();
    }

    /** The pool, failing at once while the database is known to be away and no connection is idle in it. */
    private final class AtOnce extends DelegatingDataSource {
        private final HikariDataSource hikari;

        AtOnce(HikariDataSource hikari) {
            super(hikari);
            this.hikari = hikari;
        }

        @Override
        public Connection getConnection() throws SQLException {
            refuseWhileAway();
            return super.getConnection();
        }

        @Override
        public Connection getConnection(String username, String password) throws SQLException {
            refuseWhileAway();
            return super.getConnection(username, password);
        }

        private void refuseWhileAway() throws SQLException {
            Away now = away;
            if (now == null) {
                return;
            }
            HikariPoolMXBean state = hikari.getHikariPoolMXBean();
            if (state == null || state.getIdleConnections() == 0) {
                throw new SQLTransientConnectionException("the database is away (no connection could be opened since "
                        + now.since() + ": " + now.why() + "); not waited for", "08001");
            }
        }

        @Override
        public <T> T unwrap(Class<T> iface) throws SQLException {
            return iface.isInstance(DatabaseAway.this) ? iface.cast(DatabaseAway.this) : super.unwrap(iface);
        }

        @Override
        public boolean isWrapperFor(Class<?> iface) throws SQLException {
            return iface.isInstance(DatabaseAway.this) || super.isWrapperFor(iface);
        }

        @Override
        public String toString() {
            return "DatabaseAway(" + hikari + ")";
        }
    }

    /** What the pool opens its connections with: the driver, observed. */
    private final class Opening extends DelegatingDataSource {

        Opening(DataSource driver) {
            super(driver);
        }

        @Override
        public Connection getConnection() throws SQLException {
            return observed(obtainTargetDataSource()::getConnection);
        }

        @Override
        public Connection getConnection(String username, String password) throws SQLException {
            return observed(() -> obtainTargetDataSource().getConnection(username, password));
        }

        private Connection observed(Open open) throws SQLException {
            try {
                Connection c = open.connection();
                opened();
                return c;
            } catch (SQLException e) {
                failedToOpen(e);
                throw e;
            }
        }
    }

    private interface Open {
        Connection connection() throws SQLException;
    }
}
