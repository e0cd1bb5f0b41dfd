package io.lockwatch.infra.embedded;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * PostgreSQL run from the zonky binaries as a child process of this JVM, on a loopback port, with its data
 * kept under {@code <data-dir>/postgres} between runs. As root, zonky runs it inside {@code unshare -U}.
 */
final class EmbeddedPostgresServer implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(EmbeddedPostgresServer.class);

    private final EmbeddedPostgres postgres;

    private EmbeddedPostgresServer(EmbeddedPostgres postgres) {
        this.postgres = postgres;
    }

    /** {@code ephemeral}: {@code dataDir} is a fresh one, under the base directory that holds this JVM's template. */
    public static EmbeddedPostgresServer start(Path dataDir, int port, String database, boolean ephemeral)
            throws IOException, SQLException {
        Path pgData = EmbeddedEnvironmentPostProcessor.ensureDirectory(dataDir.resolve("postgres"));
        stopOrphanedPostmaster(pgData);
        long started = System.nanoTime();
        if (ephemeral) {
            PostgresTemplate.copyInto(pgData, dataDir.getParent());
        }
        EmbeddedPostgres pg = EmbeddedPostgres.builder()
                .setDataDirectory(pgData)
                .setCleanDataDirectory(false)
                // stopped by the Spring context, after everything that uses it, not by a JVM hook racing it
                .setRegisterShutdownHook(false)
                .setPort(port)
                .setServerConfig("listen_addresses", "127.0.0.1")
                .setPGStartupWait(Duration.ofSeconds(30))
                .setOutputRedirector(ProcessBuilder.Redirect.appendTo(dataDir.resolve("postgres.log").toFile()))
                .setErrorRedirector(ProcessBuilder.Redirect.appendTo(dataDir.resolve("postgres.log").toFile()))
                .start();
        createDatabaseIfMissing(pg, database);
        log.info("Embedded PostgreSQL listening on 127.0.0.1:{} (data in {}, started in {} ms)",
                port, pgData, (System.nanoTime() - started) / 1_000_000);
        return new EmbeddedPostgresServer(pg);
    }

    private static void createDatabaseIfMissing(EmbeddedPostgres pg, String database) throws SQLException {
        try (Connection c = pg.getPostgresDatabase().getConnection()) {
            boolean exists;
            try (PreparedStatement ps = c.prepareStatement("SELECT 1 FROM pg_database WHERE datname = ?")) {
                ps.setString(1, database);
                try (ResultSet rs = ps.executeQuery()) {
                    exists = rs.next();
                }
            }
            if (!exists) {
                // identifiers cannot be bound as parameters; the name is a constant of this class's caller
                try (Statement st = c.createStatement()) {
                    st.execute("CREATE DATABASE " + database);
                }
            }
        }
    }

    /**
     * A JVM killed with {@code kill -9} leaves its postmaster running on the data directory; stop it so
     * that this start can use the directory.
     */
    private static void stopOrphanedPostmaster(Path pgData) throws IOException {
        Path pidFile = pgData.resolve("postmaster.pid");
        if (!Files.exists(pidFile)) {
            return;
        }
        List<String> lines = Files.readAllLines(pidFile);
        if (lines.isEmpty()) {
            return;
        }
        long pid;
        try {
            pid = Long.parseLong(lines.get(0).trim());
        } catch (NumberFormatException e) {
            return;
        }
        ProcessHandle.of(pid).filter(ProcessHandle::isAlive).ifPresent(orphan -> {
            log.warn("Stopping the embedded PostgreSQL left running by an earlier run (pid {})", pid);
            orphan.destroy(); // SIGTERM: a clean, smart shutdown
            try {
                orphan.onExit().get(30, java.util.concurrent.TimeUnit.SECONDS);
            } catch (Exception e) {
                orphan.destroyForcibly();
            }
        });
    }

    @Override
    public void close() throws IOException {
        postgres.close();
        log.info("Embedded PostgreSQL stopped");
    }
}
