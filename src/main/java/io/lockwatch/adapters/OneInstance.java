package io.lockwatch.adapters;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

import javax.sql.DataSource;

/**
 * Which instance runs an adapter: the one holding a PostgreSQL advisory lock, taken on a connection it keeps for as
 * long as it leads. Two instances subscribed to one network broker would each publish every device message, stamped
 * with their own clocks, as two readings apart in time (and with one client id, take each other's session over). An
 * instance that dies, or loses its database, loses the lock with its connection, and another takes it within a
 * period of the timer that asks.
 */
class OneInstance implements AutoCloseable {

    private final DataSource dataSource;
    private final String name;
    private Connection held;

    OneInstance(DataSource dataSource, String name) {
        this.dataSource = dataSource;
        this.name = name;
    }

    /** Whether this instance leads: the lock held, or taken now; false while the database cannot say. */
    synchronized boolean leads() {
        try {
            if (held != null) {
                if (held.isValid(2)) {
                    return true;
                }
                close();
            }
            Connection c = dataSource.getConnection();
            boolean taken = false;
            try {
                c.setAutoCommit(true);
                try (PreparedStatement ps = c.prepareStatement("SELECT pg_try_advisory_lock(hashtext(?))")) {
                    ps.setString(1, key());
                    try (ResultSet rs = ps.executeQuery()) {
                        taken = rs.next() && rs.getBoolean(1);
                    }
                }
            } finally {
                if (taken) {
                    held = c;
                } else {
                    c.close(); // never took it: an ordinary connection back in the pool
                }
            }
            return taken;
        } catch (SQLException e) {
            close();
            return false;
        }
    }

    /**
     * Gives the lock up, then its connection: unlocked first (a pooled connection merely handed back would keep its
     * session, and the lock, for whoever borrows it next), and evicted from the pool all the same, in case the unlock
     * could not be said (a broken connection: its session's end gives the lock up).
     */
    @Override
    public synchronized void close() {
        if (held == null) {
            return;
        }
        try (PreparedStatement ps = held.prepareStatement("SELECT pg_advisory_unlock(hashtext(?))")) {
            ps.setString(1, key());
            ps.execute();
        } catch (SQLException broken) {
            // evicted below
        }
        try {
            if (dataSource.isWrapperFor(com.zaxxer.hikari.HikariDataSource.class)) {
                dataSource.unwrap(com.zaxxer.hikari.HikariDataSource.class).evictConnection(held);
            }
            held.close();
        } catch (SQLException ignored) {
            // already closed
        }
        held = null;
    }

    private String key() {
        return "lockwatch.adapters." + name;
    }
}
