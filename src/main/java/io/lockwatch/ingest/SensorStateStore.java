package io.lockwatch.ingest;

import java.nio.charset.StandardCharsets;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;

import io.lockwatch.notify.Outbox;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Applies a batch of readings to {@code sensor_state} in one transaction with three statements whatever the
 * batch size: read the batch's sensors, decide in memory, write back every touched sensor with one
 * {@code UPDATE ... FROM unnest(...)} and every state change with one {@code INSERT ... SELECT FROM unnest(...)};
 * the notifications of those changes are written in the same transaction ({@link Outbox}).
 *
 * <p>Readings of one sensor are taken in delivery order. A reading changes a sensor only if it is not older (by
 * measured time) than the newest one applied, and its message id was not among the last ones applied; so a
 * late or repeated delivery never overwrites newer state, and one with an id never produces a second change.
 * Readings measured at the same moment are taken in arrival order.
 *
 * <p>The sensors are read without a lock, and each is written back only if its row is still the version that was
 * read (its {@code xmin}). Locking every row first ({@code FOR UPDATE}) cost PostgreSQL as much again as the
 * update itself, for a conflict that is rare: another instance's batch with the same sensor, or the heartbeat
 * declaring it lost in between. A sensor whose row changed meanwhile is decided again, from its row read anew under
 * a lock, before anything is committed; so two instances touching one sensor still serialise, and each sees the
 * other's committed result. Rows are written in id order, so concurrent batches take their row locks in one order.
 * No column the update changes is indexed (migration V9), so the updates are HOT: no index is touched.
 */
public class SensorStateStore {

    static final int RECENT_IDS = 8;
    static final String ONLINE = "online";
    static final String LOST = "lost";

    private final JdbcTemplate jdbc;
    private final TransactionTemplate tx;
    private final long defaultTimeoutMillis;

    public SensorStateStore(JdbcTemplate jdbc, TransactionTemplate tx, java.time.Duration defaultTimeout) {
        this.jdbc = jdbc;
        this.tx = tx;
        this.defaultTimeoutMillis = defaultTimeout.toMillis();
    }

    public ApplyOutcome apply(List<Reading> readings) {
        if (readings.isEmpty()) {
            return ApplyOutcome.NOTHING;
        }
        return tx.execute(status -> jdbc.execute((Connection c) -> applyIn(c, readings)));
    }

    private ApplyOutcome applyIn(Connection c, List<Reading> readings) throws SQLException {
        TreeSet<String> ids = sensorIds(readings);
        Map<String, Row> rows = read(c, ids, false);
        Verdict[] verdicts = new Verdict[readings.size()];
        List<SensorEvent> events = new ArrayList<>();
        decide(readings, ids, rows, verdicts, events);
        Set<String> changedMeanwhile = update(c, rows);
        if (!changedMeanwhile.isEmpty()) {
            // decided on a version another transaction has replaced since: decide these sensors again, on their
            // rows as they are now, locked until commit
            events.removeIf(e -> changedMeanwhile.contains(e.sensorId()));
            Map<String, Row> current = read(c, new TreeSet<>(changedMeanwhile), true);
            rows.keySet().removeAll(changedMeanwhile);
            rows.putAll(current);
            decide(readings, changedMeanwhile, current, verdicts, events);
            if (!update(c, current).isEmpty()) {
                throw new IllegalStateException("a locked sensor_state row changed");
            }
        }
        List<Long> eventIds = insertEvents(c, events);
        int notifications = Outbox.notificationsFor(c, eventIds);
        int[] counts = new int[Verdict.values().length];
        for (Verdict v : verdicts) {
            counts[v.ordinal()]++;
        }
        return new ApplyOutcome(events, counts[Verdict.APPLIED.ordinal()], counts[Verdict.UNKNOWN.ordinal()],
                counts[Verdict.DUPLICATE.ordinal()], counts[Verdict.STALE.ordinal()], notifications, rows.keySet());
    }

    private enum Verdict { APPLIED, UNKNOWN, DUPLICATE, STALE }

    private static TreeSet<String> sensorIds(List<Reading> readings) {
        TreeSet<String> ids = new TreeSet<>();
        readings.forEach(r -> ids.add(r.sensorId()));
        return ids;
    }

    /**
     * Decides the readings of the sensors {@code of} (the others' are left as they are), in delivery order,
     * against their {@code rows} (none: not registered), changing the rows in memory and adding the events they
     * bring.
     */
    private void decide(List<Reading> readings, Set<String> of, Map<String, Row> rows, Verdict[] verdicts,
                        List<SensorEvent> events) {
        for (int i = 0; i < readings.size(); i++) {
            Reading r = readings.get(i);
            if (!of.contains(r.sensorId())) {
                continue;
            }
            Row row = rows.get(r.sensorId());
            verdicts[i] = row == null ? Verdict.UNKNOWN : decide(r, row, events);
        }
    }

    private Verdict decide(Reading r, Row row, List<SensorEvent> events) {
        long idHash = r.messageId() == null ? 0 : hash(r.messageId());
        if (r.messageId() != null && row.seen(idHash)) {
            return Verdict.DUPLICATE;
        }
        if (row.lastReadingAt != null && r.measuredAt() < row.lastReadingAt) {
            // older than what is applied. Measured at the same moment (the AMQP timestamp has whole seconds): taken
            // in arrival order, as two changes in one second are real; a redelivery is told apart by a message id
            return Verdict.STALE;
        }
        row.dirty = true;
        row.lastReadingAt = r.measuredAt();
        row.lastSeenAt = row.lastSeenAt == null ? r.measuredAt() : Math.max(row.lastSeenAt, r.measuredAt());
        if (r.messageId() != null) {
            row.remember(idHash);
        }
        if (LOST.equals(row.connectivity)) {
            // back from a silence: restored first, then the change this reading may bring
            row.sequence++;
            events.add(new SensorEvent(r.sensorId(), row.sequence, SensorEvent.CONNECTION_RESTORED, row.state,
                    null, r.measuredAt()));
        }
        row.connectivity = ONLINE;
        if (row.state == null || row.state != r.data()) {
            row.sequence++;
            events.add(new SensorEvent(r.sensorId(), row.sequence, SensorEvent.STATE_CHANGED, r.data(), row.state,
                    r.measuredAt()));
            row.state = r.data();
            row.changedAt = r.measuredAt();
        }
        return Verdict.APPLIED;
    }

    /**
     * The registered sensors among {@code ids}, by id; {@code lock}: locked until commit. The sensor's own timeout is
     * the copy in {@code sensor_state} (V11), so the read stays on one table.
     */
    private Map<String, Row> read(Connection c, TreeSet<String> ids, boolean lock) throws SQLException {
        Map<String, Row> rows = new TreeMap<>();
        try (PreparedStatement ps = c.prepareStatement("""
                SELECT st.sensor_id, st.state, st.state_changed_at, st.last_reading_at, st.last_seen_at, st.sequence,
                       st.recent_message_ids, st.connectivity, st.heartbeat_timeout_seconds, st.xmin::text
                  FROM sensor_state st
                 WHERE st.sensor_id = ANY (?)
                 ORDER BY st.sensor_id""" + (lock ? " FOR UPDATE" : ""))) {
            ps.setArray(1, c.createArrayOf("varchar", ids.toArray()));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    Row row = new Row();
                    short state = rs.getShort(2);
                    row.state = rs.wasNull() ? null : (int) state;
                    row.changedAt = millis(rs.getTimestamp(3));
                    row.lastReadingAt = millis(rs.getTimestamp(4));
                    row.lastSeenAt = millis(rs.getTimestamp(5));
                    row.sequence = rs.getLong(6);
                    Array recent = rs.getArray(7);
                    for (Long h : (Long[]) recent.getArray()) {
                        row.recent.add(h);
                    }
                    row.connectivity = rs.getString(8);
                    int timeout = rs.getInt(9);
                    row.timeoutMillis = rs.wasNull() ? null : timeout * 1000L;
                    row.version = rs.getString(10);
                    rows.put(rs.getString(1), row);
                }
            }
        }
        return rows;
    }

    /**
     * Writes back the changed rows, each only if it is still the version that was read.
     * @return the ids of those that were not: another transaction changed (or deleted) them since
     */
    private Set<String> update(Connection c, Map<String, Row> rows) throws SQLException {
        List<String> ids = new ArrayList<>();
        List<Short> states = new ArrayList<>();
        List<Long> changedAt = new ArrayList<>(), readingAt = new ArrayList<>(), seenAt = new ArrayList<>(),
                sequences = new ArrayList<>(), deadlines = new ArrayList<>();
        List<String> recent = new ArrayList<>(), versions = new ArrayList<>();
        rows.forEach((id, row) -> {
            if (!row.dirty) {
                return;
            }
            ids.add(id);
            states.add(row.state.shortValue());
            changedAt.add(row.changedAt);
            readingAt.add(row.lastReadingAt);
            seenAt.add(row.lastSeenAt);
            sequences.add(row.sequence);
            recent.add(row.recentLiteral());
            deadlines.add(row.lastSeenAt + (row.timeoutMillis != null ? row.timeoutMillis : defaultTimeoutMillis));
            versions.add(row.version);
        });
        if (ids.isEmpty()) {
            return Set.of();
        }
        try (PreparedStatement ps = c.prepareStatement("""
                UPDATE sensor_state s
                   SET state = u.state,
                       state_changed_at = to_timestamp(u.changed_at / 1000.0),
                       last_reading_at = to_timestamp(u.reading_at / 1000.0),
                       last_seen_at = to_timestamp(u.seen_at / 1000.0),
                       sequence = u.seq,
                       recent_message_ids = u.recent::bigint[],
                       connectivity = 'online',
                       lost_deadline = to_timestamp(u.deadline / 1000.0),
                       lost_at = NULL
                  FROM unnest(?::varchar[], ?::smallint[], ?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[], ?::text[],
                              ?::bigint[], ?::text[])
                       AS u(id, state, changed_at, reading_at, seen_at, seq, recent, deadline, version)
                 WHERE s.sensor_id = u.id AND s.xmin = u.version::xid
                RETURNING s.sensor_id""")) {
            ps.setArray(1, c.createArrayOf("varchar", ids.toArray()));
            ps.setArray(2, c.createArrayOf("int2", states.toArray()));
            ps.setArray(3, c.createArrayOf("int8", changedAt.toArray()));
            ps.setArray(4, c.createArrayOf("int8", readingAt.toArray()));
            ps.setArray(5, c.createArrayOf("int8", seenAt.toArray()));
            ps.setArray(6, c.createArrayOf("int8", sequences.toArray()));
            ps.setArray(7, c.createArrayOf("text", recent.toArray()));
            ps.setArray(8, c.createArrayOf("int8", deadlines.toArray()));
            ps.setArray(9, c.createArrayOf("text", versions.toArray()));
            Set<String> notWritten = new HashSet<>(ids);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    notWritten.remove(rs.getString(1));
                }
            }
            return notWritten;
        }
    }

    /** Records events with one statement. @return their ids, in order */
    public static List<Long> insertEvents(Connection c, List<SensorEvent> events) throws SQLException {
        if (events.isEmpty()) {
            return List.of();
        }
        int n = events.size();
        Object[] ids = new Object[n], seqs = new Object[n], types = new Object[n], states = new Object[n],
                previous = new Object[n], at = new Object[n];
        for (int i = 0; i < n; i++) {
            SensorEvent e = events.get(i);
            ids[i] = e.sensorId();
            seqs[i] = e.sequence();
            types[i] = e.type();
            states[i] = e.state() == null ? null : (short) e.state().intValue();
            previous[i] = e.previousState() == null ? null : (short) e.previousState().intValue();
            at[i] = e.occurredAt();
        }
        try (PreparedStatement ps = c.prepareStatement("""
                INSERT INTO sensor_events (sensor_id, sequence, type, state, previous_state, occurred_at)
                SELECT u.id, u.seq, u.type, u.state, u.previous, to_timestamp(u.at / 1000.0)
                  FROM unnest(?::varchar[], ?::bigint[], ?::text[], ?::smallint[], ?::smallint[], ?::bigint[])
                       WITH ORDINALITY AS u(id, seq, type, state, previous, at, n)
                 ORDER BY u.n
                RETURNING id""")) {
            ps.setArray(1, c.createArrayOf("varchar", ids));
            ps.setArray(2, c.createArrayOf("int8", seqs));
            ps.setArray(3, c.createArrayOf("text", types));
            ps.setArray(4, c.createArrayOf("int2", states));
            ps.setArray(5, c.createArrayOf("int2", previous));
            ps.setArray(6, c.createArrayOf("int8", at));
            List<Long> eventIds = new ArrayList<>(n);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    eventIds.add(rs.getLong(1));
                }
            }
            return eventIds;
        }
    }

    static long hash(String messageId) {
        UUID u = UUID.nameUUIDFromBytes(messageId.getBytes(StandardCharsets.UTF_8));
        long h = u.getMostSignificantBits() ^ u.getLeastSignificantBits();
        return h == 0 ? 1 : h;
    }

    private static Long millis(Timestamp t) {
        return t == null ? null : t.getTime();
    }

    private static final class Row {
        Integer state;
        Long changedAt;
        Long lastReadingAt;
        Long lastSeenAt;
        long sequence;
        String connectivity;
        Long timeoutMillis;
        /** the row version read ({@code xmin}) */
        String version;
        final List<Long> recent = new ArrayList<>(RECENT_IDS + 1);
        boolean dirty;

        boolean seen(long idHash) {
            return recent.contains(idHash);
        }

        void remember(long idHash) {
            recent.add(0, idHash);
            if (recent.size() > RECENT_IDS) {
                recent.remove(recent.size() - 1);
            }
        }

        String recentLiteral() {
            StringBuilder sb = new StringBuilder("{");
            for (int i = 0; i < recent.size(); i++) {
                sb.append(i == 0 ? "" : ",").append(recent.get(i));
            }
            return sb.append('}').toString();
        }
    }
}
