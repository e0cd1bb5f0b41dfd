package io.lockwatch.testing;

import org.springframework.jdbc.core.JdbcTemplate;

/** What a test does to the database under the service. */
public final class Databases {

    private Databases() {
    }

    /**
     * Makes PostgreSQL read-only for every session, or writable again: what a fail-over to a standby looks like to
     * the service (its writes fail with 25006, which it takes for a database that is away).
     */
    public static void readOnly(JdbcTemplate jdbc, boolean on) {
        jdbc.execute((java.sql.Connection c) -> {
            try (java.sql.Statement st = c.createStatement()) {
                // this pooled connection must not keep a setting of its own: the service borrows it next
                st.execute("SET default_transaction_read_only = off");
                st.execute(on ? "ALTER SYSTEM SET default_transaction_read_only = on" : "ALTER SYSTEM RESET default_transaction_read_only");
                st.execute("SELECT pg_reload_conf()");
                st.execute("RESET default_transaction_read_only");
            }
            return null;
        });
    }
}
