package io.lockwatch.registry;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.function.Consumer;

import javax.sql.DataSource;

import org.postgresql.PGConnection;
import org.postgresql.copy.PGCopyOutputStream;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The registry as a file: sensors, the clients they are linked to and the links, one row per link (a sensor with no
 * client is one row without one). Each sensor of the file is created, or changed to what the file says, and linked to
 * exactly the clients its rows name; a client is known by its name, created with its URL (its secret answered once)
 * or given the file's URL. A sensor's gateways and credential, where the file gives them, are made what it says: it
 * belongs to exactly those gateways (created if new), and it has a live credential (one made if it has none, its
 * secret answered once) or none (revoked). Its device profile and device id, where the file gives them, are made
 * what it says ({@link #NO_PROFILE}: none). Clients and sensors the file does not name are left as they are. So the
 * same file imported again changes nothing, and the export of what a file made is that file.
 * <p>
 * However large the file, nothing of it is held in memory: its rows are copied into a staging table as they are read
 * ({@link #stage}), checked against each other there ({@link #conflicts}), and merged set-wise, all or nothing, in one
 * transaction ({@link #apply}). Rows of {@code sensor_state} are touched only where a sensor's timeouts changed, and
 * last, so their locks are held for the shortest part of the transaction.
 */
public class RegistryFile {

    /**
     * One row: a sensor, and one client it is linked to (name and URL both null: none). {@code gateways}: ids
     * separated by spaces, or {@link #NO_GATEWAY}; {@code credential}: {@link #LIVE} or {@link #NONE};
     * {@code profile} with {@code deviceId}, or {@link #NO_PROFILE} without; null: left as they are.
     */
    public record Row(String sensorId, String address, Integer heartbeatTimeoutSeconds, Integer openAlarmSeconds,
                      String clientName, String clientUrl, String gateways, String credential, String profile,
                      String deviceId) {
    }

    /**
     * A row's {@code gateways} for a sensor of none; its {@code credential} for a live one, and for none; its
     * {@code profile} for a sensor of none.
     */
    public static final String NO_GATEWAY = "-", LIVE = "live", NONE = "none", NO_PROFILE = "-";

    /**
     * What an import did. {@code newClients}: each created client with its secret; {@code newCredentials}: each
     * credential made, with its secret; both shown this once.
     */
    public record Outcome(int sensorsCreated, int sensorsUpdated, int sensorsUnchanged, int clientsCreated,
                          int clientsUpdated, int linksAdded, int linksRemoved, DeviceCounts devices,
                          List<NewClient> newClients, List<NewCredential> newCredentials) {

        /** The sensors' and links' outcome with what was done to the file's clients. */
        public Outcome withClients(int created, int updated, List<NewClient> newClients) {
            return new Outcome(sensorsCreated, sensorsUpdated, sensorsUnchanged, created, updated, linksAdded,
                    linksRemoved, devices, newClients, newCredentials);
        }

        public Outcome withNewCredentials(List<NewCredential> made) {
            return new Outcome(sensorsCreated, sensorsUpdated, sensorsUnchanged, clientsCreated, clientsUpdated,
                    linksAdded, linksRemoved, devices, newClients, made);
        }
    }

    /** What an import did to gateways, their sensors and the sensors' credentials. */
    public record DeviceCounts(int gatewaysCreated, int gatewaySensorsAdded, int gatewaySensorsRemoved, int credentialsCreated,
                          int credentialsRevoked) {
    }

    /** A sensor's credential the file made, with its secret in clear: shown this once. */
    public record NewCredential(String sensorId, String login, UUID credentialId, String secret) {
    }

    /** The file asks for more new credentials than one import makes. */
    public static class TooManyCredentials extends RuntimeException {
        TooManyCredentials(int asked, int max) {
            super("the file asks for " + asked + " new credentials, more than the " + max + " one import makes "
                    + "(lockwatch.api.max-import-credentials); import it in parts");
        }
    }

    /** A client the file made, with its secret in clear: shown this once. */
    public record NewClient(UUID id, String name, String webhookSecret) {
    }

    /** The file's clients, by name: found or created; those created with their secrets. */
    public record Clients(Map<String, UUID> ids, List<NewClient> created, int updated) {
    }

    /** A row refused, by its number in the file (1: the first after a CSV's header). */
    public record RowProblem(int row, String field, String detail) {
    }

    /** The file was refused; nothing was changed. */
    public static class Refused extends RuntimeException {
        private final transient List<RowProblem> problems;
        private final int count;

        Refused(List<RowProblem> problems, int count) {
            super(count + " rows refused");
            this.problems = problems;
            this.count = count;
        }

        /** The first of them, by row. */
        public List<RowProblem> problems() {
            return problems;
        }

        public int count() {
            return count;
        }
    }

    /**
     * A device the file names was given to another sensor, or a sensor it creates registered, through the API after
     * the file was checked: nothing was changed, and the file imported again is checked against that.
     */
    public static class ChangedMeanwhile extends RuntimeException {
        ChangedMeanwhile(Throwable cause) {
            super("a device the file names was given to another sensor, or a sensor it creates was registered, "
                    + "through the API while the file was applied; nothing was changed: import it again", cause);
        }
    }

    /** Another import is being applied: imports are applied one at a time. */
    public static class Busy extends RuntimeException {
        Busy() {
            super("another registry import is being applied; try again when it has finished (GET /imports)");
        }
    }

    /**
     * A file's rows on their way into the staging table, by one COPY on a connection of its own. {@link #close}
     * without {@link #commit} discards them.
     */
    public final class Staging implements AutoCloseable {
        private final UUID importId;
        private final Connection connection;
        private final Writer out;
        private int rows;
        private boolean done;

        private Staging(UUID importId, Connection connection, Writer out) {
            this.importId = importId;
            this.connection = connection;
            this.out = out;
        }

        public UUID importId() {
            return importId;
        }

        public void add(int rowNumber, Row row) throws IOException {
            out.write(importId.toString());
            out.write(',');
            out.write(Integer.toString(rowNumber));
            out.write(',');
            text(row.sensorId());
            out.write(',');
            text(row.address());
            out.write(',');
            number(row.heartbeatTimeoutSeconds());
            out.write(',');
            number(row.openAlarmSeconds());
            out.write(',');
            text(row.clientName());
            out.write(',');
            text(row.clientUrl());
            out.write(',');
            text(row.gateways());
            out.write(',');
            text(row.credential());
            out.write(',');
            text(row.profile());
            out.write(',');
            text(row.deviceId());
            out.write('\n');
            rows++;
        }

        public int rows() {
            return rows;
        }

        /** The rows are in the staging table, for {@link #conflicts} and {@link #apply}. */
        public void commit() throws IOException, SQLException {
            out.close(); // ends the COPY
            connection.commit();
            done = true;
            // statistics of what the table holds now: the checks and the merge join it with itself and the registry,
            // and planned on a table taken for empty they would be nested loops over a million rows
            try (var analyze = connection.createStatement()) {
                analyze.execute("ANALYZE registry_import_rows");
            }
            connection.commit();
        }

        @Override
        public void close() throws SQLException {
            try {
                if (!done) {
                    try {
                        out.close();
                    } catch (IOException | RuntimeException ignored) {
                        // the COPY failed already; the rollback below undoes what it wrote
                    }
                    connection.rollback();
                }
            } finally {
                connection.setAutoCommit(true);
                connection.close();
            }
        }

        // CSV as COPY reads it: a quoted value is text (quotes doubled), an unquoted empty one is null
        private void text(String value) throws IOException {
            if (value == null) {
                return;
            }
            out.write('"');
            for (int i = 0; i < value.length(); i++) {
                char c = value.charAt(i);
                if (c == '"') {
                    out.write('"');
                }
                out.write(c);
            }
            out.write('"');
        }

        private void number(Integer value) throws IOException {
            if (value != null) {
                out.write(Integer.toString(value));
            }
        }
    }

    /** One import applied at a time: a request's import asks for the lock, a job waits for it (its "turn"). */
    private static final String TRY_LOCK = "SELECT pg_try_advisory_xact_lock(hashtext('lockwatch.registry.import'))",
            WAIT_LOCK = "SELECT pg_advisory_xact_lock(hashtext('lockwatch.registry.import'))::text";

    private final JdbcTemplate jdbc;
    private final DataSource dataSource;
    private final TransactionTemplate tx;
    private final Registry registry;
    private final Duration importTimeout;

    /** @param importTimeout how long a statement of an import may run (staging, merging), past the API's own limit */
    public RegistryFile(JdbcTemplate jdbc, TransactionTemplate tx, Registry registry, Duration importTimeout) {
        this.jdbc = jdbc;
        this.dataSource = Objects.requireNonNull(jdbc.getDataSource());
        this.tx = tx;
        this.registry = registry;
        this.importTimeout = importTimeout;
    }

    /** Opens the COPY for a new import's rows. */
    public Staging stage(UUID importId) throws SQLException {
        Connection connection = dataSource.getConnection();
        try {
            connection.setAutoCommit(false);
            networkTimeout(connection);
            try (var ps = connection.prepareStatement("SELECT set_config('statement_timeout', ?, true)")) {
                ps.setString(1, importTimeout.toMillis() + "ms");
                ps.execute();
            }
            PGCopyOutputStream copy = new PGCopyOutputStream(connection.unwrap(PGConnection.class), """
                    COPY registry_import_rows (import_id, row_no, sensor_id, address, heartbeat_timeout_seconds,
                                               open_alarm_seconds, client_name, client_url, gateways, credential,
                                               profile, device_id)
                    FROM STDIN (FORMAT csv)""",
                    1 << 16);
            return new Staging(importId, connection, new BufferedWriter(new OutputStreamWriter(copy, StandardCharsets.UTF_8),
                    1 << 16));
        } catch (SQLException | RuntimeException e) {
            connection.rollback();
            connection.setAutoCommit(true);
            connection.close();
            throw e;
        }
    }

    /**
     * Rows that disagree with an earlier row of the file: another address, timeout, gateways, credential or device for
     * the same sensor, another URL for the same client name; and a device the file gives two sensors, or one that is
     * another sensor's which the file leaves it. The first {@code limit} of them by row, and how many there are in
     * all.
     */
    public Refused conflicts(UUID importId, int limit) {
        List<RowProblem> problems = new ArrayList<>();
        int[] count = {0};
        tx.execute(status -> {
            timeout();
            jdbc.query("""
                    WITH firsts AS (
                        SELECT DISTINCT ON (sensor_id) sensor_id, row_no, address, heartbeat_timeout_seconds,
                               open_alarm_seconds, gateways, credential, profile, device_id
                          FROM registry_import_rows WHERE import_id = ? ORDER BY sensor_id, row_no),
                    device_firsts AS (
                        SELECT DISTINCT ON (device_id) device_id, sensor_id, row_no
                          FROM firsts WHERE device_id IS NOT NULL ORDER BY device_id, row_no),
                    client_firsts AS (
                        SELECT DISTINCT ON (client_name) client_name, row_no, client_url
                          FROM registry_import_rows WHERE import_id = ? AND client_name IS NOT NULL
                         ORDER BY client_name, row_no),
                    refused AS (
                        SELECT r.row_no, 'sensor ' || r.sensor_id || ' has another ' || concat_ws(', ',
                                   CASE WHEN r.address IS DISTINCT FROM f.address THEN 'address' END,
                                   CASE WHEN r.heartbeat_timeout_seconds IS DISTINCT FROM f.heartbeat_timeout_seconds
                                        THEN 'heartbeat_timeout_seconds' END,
                                   CASE WHEN r.open_alarm_seconds IS DISTINCT FROM f.open_alarm_seconds
                                        THEN 'open_alarm_seconds' END,
                                   CASE WHEN r.gateways IS DISTINCT FROM f.gateways THEN 'gateways' END,
                                   CASE WHEN r.credential IS DISTINCT FROM f.credential THEN 'credential' END,
                                   CASE WHEN (r.profile, r.device_id) IS DISTINCT FROM (f.profile, f.device_id)
                                        THEN 'profile or device_id' END)
                                   || ' than on row ' || f.row_no AS detail
                          FROM registry_import_rows r JOIN firsts f USING (sensor_id)
                         WHERE r.import_id = ?
                           AND (r.address, r.heartbeat_timeout_seconds, r.open_alarm_seconds, r.gateways, r.credential,
                                r.profile, r.device_id)
                               IS DISTINCT FROM (f.address, f.heartbeat_timeout_seconds, f.open_alarm_seconds,
                                                 f.gateways, f.credential, f.profile, f.device_id)
                        UNION ALL
                        SELECT f.row_no, 'device ' || f.device_id || ' is sensor ' || d.sensor_id || '''s on row '
                                   || d.row_no
                          FROM firsts f JOIN device_firsts d USING (device_id)
                         WHERE f.sensor_id <> d.sensor_id
                        UNION ALL
                        -- one sensor per device: another's, unless the file gives that one another (or none)
                        SELECT f.row_no, 'device ' || f.device_id || ' is sensor ' || s.id || '''s already'
                          FROM firsts f JOIN sensors s ON s.device_id = f.device_id AND s.id <> f.sensor_id
                         WHERE NOT EXISTS (SELECT 1 FROM firsts o WHERE o.sensor_id = s.id AND o.profile IS NOT NULL)
                        UNION ALL
                        SELECT r.row_no, 'client ' || r.client_name || ' has another client_url than on row ' || f.row_no
                          FROM registry_import_rows r JOIN client_firsts f USING (client_name)
                         WHERE r.import_id = ? AND r.client_url IS DISTINCT FROM f.client_url)
                    SELECT row_no, detail, count(*) OVER () FROM refused ORDER BY row_no LIMIT ?""", rs -> {
                problems.add(new RowProblem(rs.getInt(1), null, rs.getString(2)));
                count[0] = rs.getInt(3);
            }, importId, importId, importId, importId, limit);
            return null;
        });
        return count[0] == 0 ? null : new Refused(problems, count[0]);
    }

    /**
     * Finds the file's clients by name and creates the missing ones, each with its URL; gives the others the file's
     * URL. Refused if a name is held by several clients.
     */
    public Clients clients(UUID importId) {
        Map<String, String> urls = new HashMap<>();
        Map<String, Integer> firstRow = new HashMap<>();
        jdbc.query("""
                SELECT DISTINCT ON (client_name) client_name, client_url, row_no FROM registry_import_rows
                 WHERE import_id = ? AND client_name IS NOT NULL ORDER BY client_name, row_no""", rs -> {
            urls.put(rs.getString(1), rs.getString(2));
            firstRow.put(rs.getString(1), rs.getInt(3));
        }, importId);
        Map<String, List<UUID>> byName = new HashMap<>();
        Map<UUID, String> currentUrl = new HashMap<>();
        jdbc.query(con -> {
            var ps = con.prepareStatement("SELECT id, name, url FROM clients WHERE name = ANY (?)");
            ps.setArray(1, con.createArrayOf("text", urls.keySet().toArray()));
            return ps;
        }, rs -> {
            UUID id = rs.getObject(1, UUID.class);
            byName.computeIfAbsent(rs.getString(2), n -> new ArrayList<>()).add(id);
            currentUrl.put(id, rs.getString(3));
        });
        List<RowProblem> ambiguous = new ArrayList<>();
        byName.forEach((name, found) -> {
            if (found.size() > 1) {
                ambiguous.add(new RowProblem(firstRow.get(name), "client_name", found.size() + " clients are named "
                        + name + ": rename all but one (PUT /clients/{id}) to link by this name"));
            }
        });
        if (!ambiguous.isEmpty()) {
            ambiguous.sort(java.util.Comparator.comparingInt(RowProblem::row));
            throw new Refused(ambiguous, ambiguous.size());
        }
        Map<String, UUID> ids = new HashMap<>();
        int updated = 0;
        for (Map.Entry<String, List<UUID>> e : byName.entrySet()) {
            UUID id = e.getValue().get(0);
            ids.put(e.getKey(), id);
            String url = urls.get(e.getKey());
            if (!Objects.equals(currentUrl.get(id), url)) {
                registry.updateClient(id, null, url, new Registry.DeliverySettings(null, false, null, null));
                updated++;
            }
        }
        List<NewClient> created = new ArrayList<>();
        for (String name : urls.keySet().stream().sorted().toList()) {
            if (!ids.containsKey(name)) {
                RegistryViews.ClientWithSecret client = registry.createClient(name, urls.get(name),
                        new Registry.DeliverySettings(null, false, null, null));
                ids.put(name, client.client().id());
                created.add(new NewClient(client.client().id(), name, client.webhookSecret()));
            }
        }
        return new Clients(ids, created, updated);
    }

    /**
     * Makes a credential for each of the file's sensors that is to have a live one and has none, at most {@code max}:
     * the secrets are answered, their hashes staged for the merge, which stores them. A credential another request
     * makes meanwhile is no reason to drop one already answered: the sensor then has two, both live.
     */
    public List<NewCredential> issueCredentials(UUID importId, int max) {
        List<String> sensors = jdbc.queryForList(WANTING_CREDENTIALS + " ORDER BY sensor_id LIMIT ?", String.class,
                importId, max + 1);
        if (sensors.size() > max) {
            Integer asked = jdbc.queryForObject("SELECT count(*) FROM (" + WANTING_CREDENTIALS + ") w", Integer.class,
                    importId);
            throw new TooManyCredentials(asked == null ? sensors.size() : asked, max);
        }
        // a hash takes a fifth of a millisecond of CPU, on purpose: the cores share a large file's
        List<io.lockwatch.devices.Devices.Secret> secrets = sensors.parallelStream()
                .map(id -> io.lockwatch.devices.Devices.newSecret()).toList();
        List<NewCredential> made = new ArrayList<>(sensors.size());
        for (int i = 0; i < sensors.size(); i++) {
            made.add(new NewCredential(sensors.get(i), "sensor." + sensors.get(i), UUID.randomUUID(), secrets.get(i).secret()));
        }
        for (int from = 0; from < made.size(); from += 10_000) {
            int to = Math.min(made.size(), from + 10_000);
            List<NewCredential> part = made.subList(from, to);
            List<io.lockwatch.devices.Devices.Secret> hashes = secrets.subList(from, to);
            jdbc.update(con -> {
                var ps = con.prepareStatement("""
                        INSERT INTO registry_import_credentials (import_id, credential_id, sensor_id, secret_hash)
                        SELECT ?, * FROM unnest(?::uuid[], ?::text[], ?::text[])""");
                ps.setObject(1, importId);
                ps.setArray(2, con.createArrayOf("uuid", part.stream().map(NewCredential::credentialId).toArray()));
                ps.setArray(3, con.createArrayOf("text", part.stream().map(NewCredential::sensorId).toArray()));
                ps.setArray(4, con.createArrayOf("text", hashes.stream().map(io.lockwatch.devices.Devices.Secret::hash).toArray()));
                return ps;
            });
        }
        return made;
    }

    /** The file's sensors that are to have a live credential of their own and have none now. */
    private static final String WANTING_CREDENTIALS = """
            SELECT f.sensor_id FROM (
                SELECT DISTINCT ON (sensor_id) sensor_id, credential FROM registry_import_rows
                 WHERE import_id = ? ORDER BY sensor_id, row_no) f
             WHERE f.credential = 'live'
               AND NOT EXISTS (SELECT 1 FROM device_credentials c
                                WHERE c.sensor_id = f.sensor_id AND c.revoked_at IS NULL
                                  AND (c.expires_at IS NULL OR c.expires_at > now()))""";

    /** A small file: its clients, sensors and links in one transaction, before the answer. */
    public Outcome applyAll(UUID importId, Consumer<String> step) {
        Outcome outcome = tx.execute(status -> {
            timeout();
            if (!Boolean.TRUE.equals(jdbc.queryForObject(TRY_LOCK, Boolean.class))) {
                throw new Busy();
            }
            Clients clients = clients(importId);
            return apply(importId, clients, step).withClients(clients.created().size(), clients.updated(),
                    clients.created());
        });
        discard(importId);
        return outcome;
    }

    /**
     * Sensors and links of the staged file, set-wise, in one transaction of its own whose statements may take the
     * import's timeout, once any other import being applied has finished; {@code step} is told what it is doing.
     */
    public Outcome applyStaged(UUID importId, Map<String, UUID> clientIds, Consumer<String> step) {
        Outcome outcome = tx.execute(status -> {
            timeout(); // bounds the wait for the lock too
            jdbc.queryForObject(WAIT_LOCK, String.class);
            return apply(importId, new Clients(clientIds, List.of(), 0), step);
        });
        discard(importId);
        return outcome;
    }

    /**
     * Forgets a file's staged rows. When no other import has rows staged, the table is emptied at once (a
     * truncation, if it can have its lock within a moment), not left with a million dead rows for the next import
     * to read past until autovacuum comes.
     */
    public void discard(UUID importId) {
        tx.executeWithoutResult(status -> {
            jdbc.queryForObject("SELECT set_config('lock_timeout', '200ms', true)", String.class);
            try {
                // the lock before the look: no other import can commit rows between them, to be truncated with ours
                jdbc.execute("LOCK TABLE registry_import_rows IN ACCESS EXCLUSIVE MODE");
                if (!Boolean.TRUE.equals(jdbc.queryForObject(
                        "SELECT EXISTS (SELECT 1 FROM registry_import_rows WHERE import_id <> ?)", Boolean.class, importId))) {
                    jdbc.execute("TRUNCATE registry_import_rows");
                }
            } catch (org.springframework.dao.DataAccessException busy) {
                status.setRollbackOnly(); // another import is staging: its COPY keeps the table; delete ours instead
            }
        });
        jdbc.update("DELETE FROM registry_import_rows WHERE import_id = ?", importId);
        jdbc.update("DELETE FROM registry_import_credentials WHERE import_id = ?", importId);
    }

    private void timeout() {
        jdbc.queryForObject("SELECT set_config('statement_timeout', ?, true)", String.class, importTimeout.toMillis() + "ms");
        // the pool's socket timeout (60 s) would give up on a statement the import may run for longer: the client
        // would leave, the server go on (holding the import's lock), and the import fail. The pool resets it.
        jdbc.execute((org.springframework.jdbc.core.ConnectionCallback<Void>) con -> {
            networkTimeout(con);
            return null;
        });
    }

    private void networkTimeout(Connection con) throws SQLException {
        con.setNetworkTimeout(Runnable::run, (int) Math.min(Integer.MAX_VALUE, importTimeout.plusMinutes(1).toMillis()));
    }

    private Outcome apply(UUID importId, Clients clients, Consumer<String> step) {
        step.accept("reading the file's sensors");
        int total = jdbc.update("""
                CREATE TEMP TABLE import_sensors ON COMMIT DROP AS
                SELECT DISTINCT ON (sensor_id) sensor_id, address, heartbeat_timeout_seconds, open_alarm_seconds,
                       gateways, credential, profile, device_id
                  FROM registry_import_rows WHERE import_id = ? ORDER BY sensor_id, row_no""", importId);
        jdbc.execute("ALTER TABLE import_sensors ADD PRIMARY KEY (sensor_id)");
        jdbc.execute("ANALYZE import_sensors");
        jdbc.execute("""
                CREATE TEMP TABLE import_changed ON COMMIT DROP AS
                SELECT f.sensor_id, f.address, f.heartbeat_timeout_seconds, f.open_alarm_seconds,
                       -- the file's profile null: the device as it is (then, not now: see the UPDATE)
                       f.profile IS NOT NULL AS device_given, nullif(f.profile, '-') AS profile, f.device_id,
                       -- a profile may bring its heartbeat timeout (V49)
                       s.heartbeat_timeout_seconds IS DISTINCT FROM f.heartbeat_timeout_seconds
                           OR (f.profile IS NOT NULL AND s.profile IS DISTINCT FROM nullif(f.profile, '-'))
                           AS timeout_changed,
                       s.open_alarm_seconds IS DISTINCT FROM f.open_alarm_seconds AS alarm_changed
                  FROM import_sensors f JOIN sensors s ON s.id = f.sensor_id
                 WHERE (s.address, s.heartbeat_timeout_seconds, s.open_alarm_seconds)
                       IS DISTINCT FROM (f.address, f.heartbeat_timeout_seconds, f.open_alarm_seconds)
                    OR (f.profile IS NOT NULL
                        AND (s.profile, s.device_id) IS DISTINCT FROM (nullif(f.profile, '-'), f.device_id))""");

        step.accept("changing the sensors that differ");
        // a device that moves from one of the file's sensors to another is given up first: one sensor per device
        // holds at each row, not only at the end
        int updated, created;
        try {
            jdbc.update("""
                    UPDATE sensors s SET profile = NULL, device_id = NULL
                      FROM import_changed c
                     WHERE s.id = c.sensor_id AND c.device_given AND s.device_id IS NOT NULL
                       AND s.device_id IS DISTINCT FROM c.device_id""");
            // a device the file leaves is the sensor's as it is now: one the API gave it meanwhile stays
            updated = jdbc.update("""
                    UPDATE sensors s SET address = c.address, heartbeat_timeout_seconds = c.heartbeat_timeout_seconds,
                           open_alarm_seconds = c.open_alarm_seconds,
                           profile = CASE WHEN c.device_given THEN c.profile ELSE s.profile END,
                           device_id = CASE WHEN c.device_given THEN c.device_id ELSE s.device_id END,
                           updated_at = now()
                      FROM import_changed c WHERE s.id = c.sensor_id""");
            step.accept("creating the new sensors");
            created = jdbc.update("""
                    INSERT INTO sensors (id, address, heartbeat_timeout_seconds, open_alarm_seconds, profile, device_id)
                    SELECT f.sensor_id, f.address, f.heartbeat_timeout_seconds, f.open_alarm_seconds,
                           nullif(f.profile, '-'), f.device_id
                      FROM import_sensors f
                     WHERE NOT EXISTS (SELECT 1 FROM sensors s WHERE s.id = f.sensor_id)""");
        } catch (org.springframework.dao.DuplicateKeyException e) {
            // checked before, against the registry as it was then (conflicts)
            throw new ChangedMeanwhile(e);
        }

        step.accept("linking the sensors to their clients");
        jdbc.execute("CREATE TEMP TABLE import_clients (name text PRIMARY KEY, client_id uuid NOT NULL) ON COMMIT DROP");
        if (!clients.ids().isEmpty()) {
            jdbc.update(con -> {
                var ps = con.prepareStatement("INSERT INTO import_clients SELECT * FROM unnest(?::text[], ?::uuid[])");
                ps.setArray(1, con.createArrayOf("text", clients.ids().keySet().toArray()));
                ps.setArray(2, con.createArrayOf("uuid", clients.ids().keySet().stream().map(clients.ids()::get).toArray()));
                return ps;
            });
        }
        jdbc.update("""
                CREATE TEMP TABLE import_links ON COMMIT DROP AS
                SELECT DISTINCT c.client_id, r.sensor_id FROM registry_import_rows r JOIN import_clients c ON c.name = r.client_name
                 WHERE r.import_id = ?""", importId);
        jdbc.execute("ALTER TABLE import_links ADD PRIMARY KEY (client_id, sensor_id)");
        jdbc.execute("ANALYZE import_links");
        // a link the file no longer names is removed, and its pending notifications cancelled, as an unlink does
        Integer removed = jdbc.queryForObject("""
                WITH removed AS (
                    DELETE FROM client_sensors cs USING import_sensors f
                     WHERE cs.sensor_id = f.sensor_id
                       AND NOT EXISTS (SELECT 1 FROM import_links l WHERE l.client_id = cs.client_id AND l.sensor_id = cs.sensor_id)
                    RETURNING cs.client_id, cs.sensor_id),
                cancelled AS (
                    UPDATE notifications n SET status = 'cancelled', finished_at = now() FROM removed r
                     WHERE n.status = 'pending' AND n.client_id = r.client_id AND n.sensor_id = r.sensor_id RETURNING 1)
                SELECT count(*) FROM removed""", Integer.class);
        int added = jdbc.update("""
                INSERT INTO client_sensors (client_id, sensor_id) SELECT client_id, sensor_id FROM import_links
                 ORDER BY client_id, sensor_id -- in the primary key's order: a third less time for a million (PG 15)
                ON CONFLICT DO NOTHING""");

        DeviceCounts devices = applyDevices(importId, step);

        step.accept("applying changed timeouts to the sensors' state");
        // an open door without an alarm for this opening gets the deadline of its new threshold at once
        jdbc.update("""
                UPDATE sensor_state st
                   SET open_alarm_seconds = c.open_alarm_seconds,
                       alarm_due_at = CASE
                           WHEN st.state = 0 AND NOT EXISTS (SELECT 1 FROM alarms a
                                   WHERE a.sensor_id = st.sensor_id AND a.type = 'door_open_too_long' AND a.opened_at = st.state_changed_at)
                           THEN st.state_changed_at + make_interval(secs => coalesce(c.open_alarm_seconds, ?::integer))
                           ELSE st.alarm_due_at END
                  FROM import_changed c WHERE c.alarm_changed AND st.sensor_id = c.sensor_id""",
                registry.defaultOpenAlarmSeconds());
        // an online sensor's deadline follows its new timeout at once (as Registry.updateSensor: its own, else its
        // profile's, as V49's trigger copied it)
        jdbc.update("""
                UPDATE sensor_state st
                   SET lost_deadline = st.last_seen_at + make_interval(secs => coalesce(st.heartbeat_timeout_seconds, ?) + ?)
                  FROM import_changed c
                 WHERE c.timeout_changed AND st.sensor_id = c.sensor_id AND st.last_seen_at IS NOT NULL""",
                (double) registry.defaultTimeoutSeconds(), io.lockwatch.ingest.LastSeenTolerance.MAX_MILLIS / 1000.0);
        return new Outcome(created, updated, total - created - updated, 0, 0, added, removed == null ? 0 : removed,
                devices, List.of(), List.of());
    }

    /** The file's gateways and credentials, once its sensors exist: a sensor whose row leaves them blank keeps its own. */
    private DeviceCounts applyDevices(UUID importId, Consumer<String> step) {
        step.accept("putting the sensors in their gateways");
        jdbc.execute("""
                CREATE TEMP TABLE import_gateways ON COMMIT DROP AS
                SELECT f.sensor_id, g.gateway_id FROM import_sensors f,
                       unnest(string_to_array(f.gateways, ' ')) AS g (gateway_id)
                 WHERE f.gateways IS NOT NULL AND f.gateways <> '-'""");
        int gateways = jdbc.update("""
                INSERT INTO gateways (id) SELECT DISTINCT gateway_id FROM import_gateways ORDER BY gateway_id
                    ON CONFLICT DO NOTHING""");
        int left = jdbc.update("""
                DELETE FROM gateway_sensors gs USING import_sensors f
                 WHERE gs.sensor_id = f.sensor_id AND f.gateways IS NOT NULL
                   AND NOT EXISTS (SELECT 1 FROM import_gateways g
                                    WHERE g.sensor_id = gs.sensor_id AND g.gateway_id = gs.gateway_id)""");
        int joined = jdbc.update("""
                INSERT INTO gateway_sensors (gateway_id, sensor_id) SELECT gateway_id, sensor_id FROM import_gateways
                 ORDER BY gateway_id, sensor_id ON CONFLICT DO NOTHING""");

        step.accept("making and revoking the sensors' credentials");
        int revoked = jdbc.update("""
                UPDATE device_credentials c SET revoked_at = now() FROM import_sensors f
                 WHERE f.credential = 'none' AND c.sensor_id = f.sensor_id AND c.revoked_at IS NULL
                   AND (c.expires_at IS NULL OR c.expires_at > now())""");
        int made = jdbc.update("""
                INSERT INTO device_credentials (id, login, sensor_id, secret_hash)
                SELECT credential_id, 'sensor.' || sensor_id, sensor_id, secret_hash FROM registry_import_credentials
                 WHERE import_id = ?""", importId);
        return new DeviceCounts(gateways, joined, left, made, revoked);
    }

    /**
     * A page of the file an import takes: the sensors after {@code after} (null: from the first), at most
     * {@code sensors} of them, by id, each with every client it is linked to, by client name.
     */
    public List<Row> exportPage(String after, int sensors) {
        return jdbc.query("""
                WITH page AS (SELECT * FROM sensors WHERE id > ? ORDER BY id LIMIT ?),
                -- the page's links by a range of the sensor index: joined on the sensor alone, the planner reads
                -- every link for every page
                links AS (SELECT cs.sensor_id, c.id, c.name, c.url FROM client_sensors cs JOIN clients c ON c.id = cs.client_id
                           WHERE cs.sensor_id > ? AND cs.sensor_id <= (SELECT max(id) FROM page))
                SELECT s.id, s.address, s.heartbeat_timeout_seconds, s.open_alarm_seconds, l.name, l.url, s.profile,
                       s.device_id,
                       -- none, and no credential, are written empty: read back, empty leaves them so
                       (SELECT string_agg(gs.gateway_id, ' ' ORDER BY gs.gateway_id) FROM gateway_sensors gs
                         WHERE gs.sensor_id = s.id),
                       CASE WHEN EXISTS (SELECT 1 FROM device_credentials c
                                          WHERE c.sensor_id = s.id AND c.revoked_at IS NULL
                                            AND (c.expires_at IS NULL OR c.expires_at > now()))
                            THEN 'live' END
                  FROM page s LEFT JOIN links l ON l.sensor_id = s.id
                 ORDER BY s.id, l.name, l.id""", (rs, i) -> new Row(rs.getString(1), rs.getString(2),
                (Integer) rs.getObject(3), (Integer) rs.getObject(4), rs.getString(5), rs.getString(6),
                rs.getString(9), rs.getString(10), rs.getString(7), rs.getString(8)),
                // every id is greater than '': the primary key's range scan from the first
                after == null ? "" : after, sensors, after == null ? "" : after);
    }
}
