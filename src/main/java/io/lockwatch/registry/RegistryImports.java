package io.lockwatch.registry;

import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.RowMapper;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The record of every registry import ({@code registry_imports}): its state, its step while it runs, and what it
 * did or why it failed. A large file is applied after its 202 by {@link #apply}, one import at a time; the instance
 * running it says so every few seconds, and an import whose instance stopped saying so is reported failed (its merge
 * is one transaction, so nothing of it was applied).
 */
public class RegistryImports implements AutoCloseable {

    /** An import as the API shows it. */
    public record Job(UUID id, String state, int rows, String step, String outcome, String error, Instant createdAt,
                      Instant finishedAt) {
    }

    /** A staged file accepted for a job, with its clients already found or created (and how many of each). */
    public record Accepted(UUID id, Map<String, UUID> clientIds, int clientsCreated, int clientsUpdated) {
    }

    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(RegistryImports.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    /** How often a running import says it still is, and how long without that it is taken for stopped. */
    static final Duration BEAT = Duration.ofSeconds(5), STOPPED_AFTER = Duration.ofMinutes(1);

    private final JdbcTemplate jdbc;
    private final TransactionTemplate own;
    private final RegistryFile file;
    private final Set<UUID> runningHere = ConcurrentHashMap.newKeySet();
    private final Map<UUID, Long> stepStarted = new ConcurrentHashMap<>();
    private final ScheduledExecutorService beats;

    public RegistryImports(JdbcTemplate jdbc, PlatformTransactionManager transactions, RegistryFile file) {
        this.jdbc = jdbc;
        // what a running import records about itself commits at once, beside its own long transaction
        this.own = new TransactionTemplate(transactions);
        own.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRES_NEW);
        this.file = file;
        this.beats = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "lockwatch-registry-import-heartbeat");
            t.setDaemon(true);
            return t;
        });
        beats.scheduleWithFixedDelay(this::beat, BEAT.toMillis(), BEAT.toMillis(), TimeUnit.MILLISECONDS);
    }

    public RegistryFile file() {
        return file;
    }

    /** A new import, its rows about to be read. */
    public UUID begin() {
        UUID id = UUID.randomUUID();
        jdbc.update("INSERT INTO registry_imports (id, state, step) VALUES (?, 'staging', 'reading the file')", id);
        runningHere.add(id);
        stepStarted.put(id, System.nanoTime());
        return id;
    }

    public void staged(UUID id, int rows) {
        step(id, "waiting its turn");
        record(id, "UPDATE registry_imports SET state = 'applying', rows = ? WHERE id = ?", rows, id);
    }

    public void step(UUID id, String step) {
        long now = System.nanoTime();
        Long since = stepStarted.put(id, now);
        log.info("Registry import {}: {}{}", id, step, since == null ? "" : " (the step before took "
                + (now - since) / 1_000_000 + " ms)");
        record(id, "UPDATE registry_imports SET step = ?, heartbeat_at = now() WHERE id = ?", step, id);
    }

    /** Refused (a bad row, a bad file, another import at the same time): nothing was changed. */
    public void refused(UUID id, int rows, String why) {
        finish(id, "refused", rows, null, why);
    }

    /** @param rows null: as recorded when it was staged */
    public void done(UUID id, Integer rows, RegistryFile.Outcome outcome) {
        finish(id, "done", rows, outcome, null);
    }

    /** It could not be read or applied for a fault of the service or its database: nothing was changed. */
    public void failed(UUID id, String why) {
        finish(id, "failed", null, null, why);
    }

    /**
     * Applies an accepted file's sensors and links (the job of a large import). A database that is away is thrown
     * for the route to wait out, then applied again (the merge is one transaction); any other failure is recorded.
     */
    public void apply(Accepted accepted) {
        UUID id = accepted.id();
        try {
            RegistryFile.Outcome outcome = file.applyStaged(id, accepted.clientIds(), step -> step(id, step))
                    .withClients(accepted.clientsCreated(), accepted.clientsUpdated(), List.of());
            done(id, null, outcome);
            log.info("Registry import {} applied: {}", id, outcome);
        } catch (RegistryFile.ChangedMeanwhile e) {
            log.info("Registry import {} not applied: {}", id, e.getMessage());
            failed(id, e.getMessage());
            file.discard(id);
        } catch (RuntimeException e) {
            if (io.lockwatch.infra.errors.ServicesAway.causedBy(e)
                    && !io.lockwatch.infra.errors.ServicesAway.statementTimedOut(e)) {
                throw e;
            }
            log.warn("Registry import {} failed; nothing of its sensors and links was applied", id, e);
            failed(id, "it could not be applied (" + e.getClass().getSimpleName() + "); nothing of its sensors and links "
                    + "was applied; see the service's log, then import the file again");
            file.discard(id);
        }
    }

    public Job job(UUID id) {
        markStopped();
        List<Job> found = jdbc.query(VIEW + " WHERE id = ?", JOB, id);
        return found.isEmpty() ? null : found.get(0);
    }

    /** The latest imports, newest first. */
    public List<Job> recent(int limit) {
        markStopped();
        return jdbc.query(VIEW + " ORDER BY created_at DESC LIMIT ?", JOB, limit);
    }

    @Override
    public void close() {
        beats.shutdownNow();
    }

    private void finish(UUID id, String state, Integer rows, RegistryFile.Outcome outcome, String error) {
        String counts = null;
        if (outcome != null) {
            try {
                counts = JSON.writeValueAsString(Map.of(
                        "sensors", Map.of("created", outcome.sensorsCreated(), "updated", outcome.sensorsUpdated(),
                                "unchanged", outcome.sensorsUnchanged()),
                        "clients", Map.of("created", outcome.clientsCreated(), "updated", outcome.clientsUpdated()),
                        "links", Map.of("added", outcome.linksAdded(), "removed", outcome.linksRemoved()),
                        "gateways", Map.of("created", outcome.devices().gatewaysCreated(),
                                "sensors_added", outcome.devices().gatewaySensorsAdded(),
                                "sensors_removed", outcome.devices().gatewaySensorsRemoved()),
                        "credentials", Map.of("created", outcome.devices().credentialsCreated(),
                                "revoked", outcome.devices().credentialsRevoked())));
            } catch (JsonProcessingException e) {
                throw new IllegalStateException(e);
            }
        }
        record(id, """
                UPDATE registry_imports SET state = ?, rows = coalesce(?::integer, rows),
                       step = NULL, outcome = ?::jsonb, error = ?, finished_at = now()
                 WHERE id = ?""", state, rows, counts, error, id);
        runningHere.remove(id);
        Long since = stepStarted.remove(id);
        if (since != null) {
            log.info("Registry import {}: {} (the last step took {} ms)", id, state, (System.nanoTime() - since) / 1_000_000);
        }
    }

    private void record(UUID id, String sql, Object... args) {
        own.executeWithoutResult(status -> jdbc.update(sql, args));
    }

    private void beat() {
        try {
            if (!runningHere.isEmpty()) {
                jdbc.update(con -> {
                    var ps = con.prepareStatement("UPDATE registry_imports SET heartbeat_at = now() WHERE id = ANY (?)");
                    ps.setArray(1, con.createArrayOf("uuid", runningHere.toArray()));
                    return ps;
                });
            }
        } catch (RuntimeException e) {
            log.debug("Registry imports' heartbeat not written", e);
        }
    }

    /** Imports whose instance stopped running them (it was killed, or lost its connection) said to have failed. */
    private void markStopped() {
        List<UUID> stopped = jdbc.queryForList("""
                UPDATE registry_imports SET state = 'failed', step = NULL, finished_at = now(),
                       error = 'the instance applying it stopped before it finished; nothing of it was applied; import the file again'
                 WHERE state IN ('staging', 'applying') AND heartbeat_at < now() - make_interval(secs => ?)
                RETURNING id""", UUID.class, (double) STOPPED_AFTER.toSeconds());
        stopped.forEach(file::discard);
    }

    private static final String VIEW = """
            SELECT id, state, rows, step, outcome::text, error, created_at, finished_at FROM registry_imports""";

    private static final RowMapper<Job> JOB = (rs, i) -> {
        Timestamp finished = rs.getTimestamp(8);
        return new Job(rs.getObject(1, UUID.class), rs.getString(2), rs.getInt(3), rs.getString(4), rs.getString(5),
                rs.getString(6), rs.getTimestamp(7).toInstant(), finished == null ? null : finished.toInstant());
    };
}
