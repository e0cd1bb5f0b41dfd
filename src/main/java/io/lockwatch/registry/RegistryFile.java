package io.lockwatch.registry;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The registry as a file: sensors, the clients they are linked to and the links, one row per link (a sensor with no
 * client is one row without one). Imported all or nothing, in one transaction: each sensor of the file is created,
 * or changed to what the file says, and linked to exactly the clients its rows name; a client is known by its name,
 * created with its URL (its secret answered once) or given the file's URL. Clients and sensors the file does not
 * name are left as they are. So the same file imported again changes nothing, and the export of what a file made is
 * that file.
 */
public class RegistryFile {

    /** One row: a sensor, and one client it is linked to (name and URL both null: none). */
    public record Row(String sensorId, String address, Integer heartbeatTimeoutSeconds, Integer openAlarmSeconds,
                      String clientName, String clientUrl) {
    }

    /** What an import did. {@code newClients}: each created client with its secret, shown this once. */
    public record Outcome(int sensorsCreated, int sensorsUpdated, int sensorsUnchanged, int clientsCreated,
                          int clientsUpdated, int linksAdded, int linksRemoved, List<NewClient> newClients) {
    }

    /** A client the file made, with its secret in clear: shown this once. */
    public record NewClient(UUID id, String name, String webhookSecret) {
    }

    /** A row the database's state refuses (a client name that several clients have), by its number in the file. */
    public record RowProblem(int row, String field, String detail) {
    }

    /** The file was refused; nothing was changed. */
    public static class Refused extends RuntimeException {
        private final transient List<RowProblem> problems;

        Refused(List<RowProblem> problems) {
            super(problems.size() + " rows refused");
            this.problems = problems;
        }

        public List<RowProblem> problems() {
            return problems;
        }
    }

    private final JdbcTemplate jdbc;
    private final TransactionTemplate tx;
    private final Registry registry;

    public RegistryFile(JdbcTemplate jdbc, TransactionTemplate tx, Registry registry) {
        this.jdbc = jdbc;
        this.tx = tx;
        this.registry = registry;
    }

    /**
     * @param rows in the file's order, each already checked on its own and against the others (one address and
     *             timeouts per sensor, one URL per client name)
     */
    public Outcome importRows(List<Row> rows) {
        return tx.execute(status -> {
            // one import at a time: two creating the same client name would make it ambiguous
            jdbc.queryForObject("SELECT pg_advisory_xact_lock(hashtext('lockwatch.registry.import'))", Object.class);
            Map<String, Row> sensors = new LinkedHashMap<>();
            Map<String, String> clientUrls = new LinkedHashMap<>();
            Map<String, Integer> firstRowOfClient = new HashMap<>();
            for (int i = 0; i < rows.size(); i++) {
                Row r = rows.get(i);
                sensors.putIfAbsent(r.sensorId(), r);
                if (r.clientName() != null) {
                    clientUrls.putIfAbsent(r.clientName(), r.clientUrl());
                    firstRowOfClient.putIfAbsent(r.clientName(), i + 1);
                }
            }
            Map<String, UUID> clientIds = new HashMap<>();
            int[] clientCounts = clients(clientUrls, firstRowOfClient, clientIds);
            List<NewClient> created = new ArrayList<>();
            for (Map.Entry<String, String> c : clientUrls.entrySet()) {
                if (!clientIds.containsKey(c.getKey())) {
                    RegistryViews.ClientWithSecret client = registry.createClient(c.getKey(), c.getValue(),
                            new Registry.DeliverySettings(null, false, null, null));
                    clientIds.put(c.getKey(), client.client().id());
                    created.add(new NewClient(client.client().id(), c.getKey(), client.webhookSecret()));
                }
            }
            int[] sensorCounts = sensors(sensors);
            int[] linkCounts = links(rows, sensors.keySet(), clientIds);
            return new Outcome(sensorCounts[0], sensorCounts[1], sensorCounts[2], created.size(), clientCounts[0],
                    linkCounts[0], linkCounts[1], created);
        });
    }

    /** Finds the file's clients by name and gives them the file's URL; @return {updated} */
    private int[] clients(Map<String, String> urls, Map<String, Integer> firstRow, Map<String, UUID> ids) {
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
            throw new Refused(ambiguous);
        }
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
        return new int[] {updated};
    }

    /** Creates the new sensors in one statement, changes those that differ; @return {created, updated, unchanged} */
    private int[] sensors(Map<String, Row> sensors) {
        Map<String, Row> existing = new HashMap<>();
        jdbc.query(con -> {
            var ps = con.prepareStatement("""
                    SELECT id, address, heartbeat_timeout_seconds, open_alarm_seconds FROM sensors WHERE id = ANY (?)""");
            ps.setArray(1, con.createArrayOf("text", sensors.keySet().toArray()));
            return ps;
        }, rs -> {
            existing.put(rs.getString(1), new Row(rs.getString(1), rs.getString(2), (Integer) rs.getObject(3),
                    (Integer) rs.getObject(4), null, null));
        });
        List<Row> fresh = new ArrayList<>();
        int updated = 0;
        for (Row r : sensors.values()) {
            Row now = existing.get(r.sensorId());
            if (now == null) {
                fresh.add(r);
            } else if (!Objects.equals(now.address(), r.address())
                    || !Objects.equals(now.heartbeatTimeoutSeconds(), r.heartbeatTimeoutSeconds())
                    || !Objects.equals(now.openAlarmSeconds(), r.openAlarmSeconds())) {
                // one at a time, as the API does: its deadlines follow the new timeouts at once
                registry.updateSensor(r.sensorId(), r.address(), true, r.heartbeatTimeoutSeconds(), true,
                        r.openAlarmSeconds());
                updated++;
            }
        }
        if (!fresh.isEmpty()) {
            jdbc.update(con -> {
                var ps = con.prepareStatement("""
                        INSERT INTO sensors (id, address, heartbeat_timeout_seconds, open_alarm_seconds)
                        SELECT * FROM unnest(?::text[], ?::text[], ?::integer[], ?::integer[])""");
                ps.setArray(1, con.createArrayOf("text", fresh.stream().map(Row::sensorId).toArray()));
                ps.setArray(2, con.createArrayOf("text", fresh.stream().map(Row::address).toArray()));
                ps.setArray(3, con.createArrayOf("integer", fresh.stream().map(Row::heartbeatTimeoutSeconds).toArray()));
                ps.setArray(4, con.createArrayOf("integer", fresh.stream().map(Row::openAlarmSeconds).toArray()));
                return ps;
            });
        }
        return new int[] {fresh.size(), updated, sensors.size() - fresh.size() - updated};
    }

    /** Each sensor of the file linked to exactly the clients its rows name; @return {added, removed} */
    private int[] links(List<Row> rows, Set<String> sensors, Map<String, UUID> clientIds) {
        Set<List<Object>> pairs = new LinkedHashSet<>();
        for (Row r : rows) {
            if (r.clientName() != null) {
                pairs.add(List.of(clientIds.get(r.clientName()), r.sensorId()));
            }
        }
        Object[] clients = pairs.stream().map(p -> p.get(0)).toArray();
        Object[] linked = pairs.stream().map(p -> p.get(1)).toArray();
        int removed = jdbc.update(con -> {
            var ps = con.prepareStatement("""
                    DELETE FROM client_sensors cs
                     WHERE cs.sensor_id = ANY (?)
                       AND NOT EXISTS (SELECT 1 FROM unnest(?::uuid[], ?::text[]) AS f (client_id, sensor_id)
                                        WHERE f.client_id = cs.client_id AND f.sensor_id = cs.sensor_id)""");
            ps.setArray(1, con.createArrayOf("text", sensors.toArray()));
            ps.setArray(2, con.createArrayOf("uuid", clients));
            ps.setArray(3, con.createArrayOf("text", linked));
            return ps;
        });
        int added = pairs.isEmpty() ? 0 : jdbc.update(con -> {
            var ps = con.prepareStatement("""
                    INSERT INTO client_sensors (client_id, sensor_id)
                    SELECT * FROM unnest(?::uuid[], ?::text[]) ON CONFLICT DO NOTHING""");
            ps.setArray(1, con.createArrayOf("uuid", clients));
            ps.setArray(2, con.createArrayOf("text", linked));
            return ps;
        });
        return new int[] {added, removed};
    }

    /** Every sensor with each client it is linked to, by sensor id then client name: the file an import takes. */
    public List<Row> export() {
        return jdbc.query("""
                SELECT s.id, s.address, s.heartbeat_timeout_seconds, s.open_alarm_seconds, c.name, c.url
                  FROM sensors s
                  LEFT JOIN client_sensors cs ON cs.sensor_id = s.id
                  LEFT JOIN clients c ON c.id = cs.client_id
                 ORDER BY s.id, c.name, c.id""", (rs, i) -> new Row(rs.getString(1), rs.getString(2),
                (Integer) rs.getObject(3), (Integer) rs.getObject(4), rs.getString(5), rs.getString(6)));
    }
}
