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
                    ps.setString(1, "lockwatch.adapters." + name);
                    try (ResultSet rs = ps.executeQuery()) {
                        taken = rs.next() && rs.getBoolean(1);
                    }
                }
            } finally {
                if (taken) {
                    held = c;
                } else {
                    c.close();
                }
            }
            return taken;
        } catch (SQLException e) {
            close();
            return false;
        }
    }

    /** Gives the lock up, with its connection. */
    @Override
    public synchronized void close() {
        if (held != null) {
            try {
                held.close();
            } catch (SQLException ignored) {
                // a connection already broken has given its lock up already
            }
            held = null;
        }
    }
}
