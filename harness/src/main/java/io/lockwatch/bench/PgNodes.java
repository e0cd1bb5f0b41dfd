package io.lockwatch.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The HA topology's PostgreSQL pair ({@code scripts/lib/ha.sh}: node1 on 5441, node2 on 5442, each a server run by
 * its pg_auto_failover keeper) as the postgres-failover drill sees it: the loss of a node, and the promotion of the
 * other.
 */
final class PgNodes {

    private static final Path DATA = Path.of("/var/lib/postgresql/ha");

    private PgNodes() {
    }

    /** kill -9 of the node's keeper and of its server with every backend, as a machine that stops. */
    static void lose(String node) throws IOException {
        List<ProcessHandle> victims = new ArrayList<>();
        for (String args : List.of("pg_autoctl run --pgdata " + DATA.resolve(node))) {
            ProcessHandle.allProcesses().filter(p -> p.info().commandLine().orElse("").contains(args)).forEach(victims::add);
        }
        long postmaster = Long.parseLong(Files.readAllLines(DATA.resolve(node).resolve("postmaster.pid")).get(0).trim());
        ProcessHandle.of(postmaster).ifPresent(victims::add);
        if (victims.size() < 2) {
            throw new IOException(node + ": its keeper or server is not running");
        }
        List<ProcessHandle> all = new ArrayList<>();
        for (ProcessHandle v : victims) {
            v.descendants().forEach(all::add);
            all.add(v);
        }
        // the keepers first, so that none starts the server again
        all.forEach(ProcessHandle::destroyForcibly);
        for (ProcessHandle p : all) {
            p.onExit().join();
        }
    }

    /** Waits until the pair's URL reaches a primary on another port than {@code lostPort}; milliseconds waited. */
    static long awaitPrimary(String jdbcUrl, String user, String password, int lostPort) throws InterruptedException {
        long start = System.nanoTime();
        long deadline = start + Duration.ofMinutes(2).toNanos();
        while (System.nanoTime() < deadline) {
            try (Connection c = DriverManager.getConnection(jdbcUrl, user, password); Statement st = c.createStatement();
                 ResultSet rs = st.executeQuery("SELECT inet_server_port(), pg_is_in_recovery()")) {
                rs.next();
                if (rs.getInt(1) != lostPort && !rs.getBoolean(2)) {
                    return (System.nanoTime() - start) / 1_000_000;
                }
            } catch (SQLException e) {
                // no primary yet
            }
            Thread.sleep(200); // asking the servers; nothing to wait on
        }
        throw new IllegalStateException("no primary but the lost one within 2 minutes");
    }
}
