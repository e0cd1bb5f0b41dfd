package io.lockwatch.ingest;

import java.nio.charset.StandardCharsets;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import io.lockwatch.maintenance.Maintenance;
import io.lockwatch.notify.Outbox;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Applies a batch of readings to {@code sensor_state} in one transaction, whatever the batch size, a change's in
 * at most three round trips before the commit: read the batch's sensors that are not held in memory, decide in memory, write back
 * the sensors that must be written with one {@code UPDATE ... FROM unnest(...)}, and record every state change, with
 * what a maintenance window holds of them, with one {@code INSERT ... SELECT FROM unnest(...)}; the notifications of
 * those changes are written in the same transaction ({@link Outbox}). Whether a sensor was deleted since the last
 * batch is asked in the round trip of the first of them ({@link Generation}). Rarely more: a sensor changed by another
 * transaction meanwhile is read again and written again (below), and a queue that may collapse is collapsed.
 *
 * <p>Readings of one sensor are taken in delivery order. A reading changes a sensor only if it is not older (by
 * {@link Reading#appliedAt}: its measured time, never later than its arrival) than the newest one applied, and its message id was not among the last ones applied; so a
 * late or repeated delivery never overwrites newer state, and one with an id never produces a second change.
 * Readings measured at the same moment are taken in arrival order.
 *
 * <p>The batch thread that consumes a queue is the only writer of its sensors' readings, so it keeps the rows it
 * has read or written ({@link #maxSensors} of them), and a repeat reading needs no read of the table. A repeat is
 * not written either while the sensor's last-seen time has advanced by no more than its {@link LastSeenTolerance}
 * since it was last written: the stored deadline is the written last-seen time plus the timeout plus that
 * tolerance, so the heartbeat never declares a sensor lost early, and at most the tolerance late. A change, a
 * return from a silence, and the first reading after the tolerance are written (with their events and
 * notifications) before the batch is acknowledged; what a crash loses is at most the tolerance of last-seen time.
 *
 * <p>Rows are written back only if they are still the version that was read or last written (their {@code xmin}):
 * the heartbeat declaring a sensor lost, the registry changing its timeout, or another instance's batch (after a
 * partition changed hands) makes the write miss, and the sensor is then decided again from its row read anew under a
 * lock, before anything is committed; so two writers of one sensor serialise, and each sees the other's committed
 * result. A repeat is written anyway once the stored deadline is near ({@code guardMillis}), so a sensor the
 * heartbeat may have declared lost is never taken for online from memory. When this instance takes up partitions
 * another one consumed, {@link #forget} drops what it holds and writes every reading through for a while.
 * Rows are written in id order, so concurrent batches take their row locks in one order. No column the update changes
 * is indexed (migration V9), so the updates are HOT: no index is touched.
 */
class SensorStateStore {

    static final int RECENT_IDS = 8;
    static final String ONLINE = "online";
    static final String LOST = "lost";
    private static final long NONE = Long.MIN_VALUE;

    private final JdbcTemplate jdbc;
    private final TransactionTemplate tx;
    private final long defaultTimeoutMillis;
    private final Integer openAlarmDefaultSeconds;
    private final int maxSensors;
    private final long guardMillis;
    private final java.util.function.LongSupplier clock;
    /**
     * The rows this instance holds, by sensor id; changed only under this object's lock, read without it by
     * {@link #mayChangeState} (a hint).
     */
    private final Map<String, Row> held = new java.util.concurrent.ConcurrentHashMap<>();
    /** Until then (clock millis) every reading is written: another instance may have written these sensors lately. */
    private long writeThroughUntil = NONE;
    /** The count of registrations ended (sensors deleted) when the rows held were last known good; -1: none read. */
    private long registrationsGeneration = -1;
    /** How many rows are held, for the gauge, which must not wait for a batch's transaction. */
    private volatile int heldCount;

    /**
     * @param maxSensors  rows held in memory at most; the others are read with each batch
     * @param guardMillis a repeat is written once the stored deadline is nearer than this: more than the clocks of
     *                    this instance and the database may differ by
     */
    public SensorStateStore(JdbcTemplate jdbc, TransactionTemplate tx, java.time.Duration defaultTimeout,
                            int maxSensors, java.time.Duration guard, java.util.function.LongSupplier clock) {
        this(jdbc, tx, defaultTimeout, null, maxSensors, guard, clock);
    }

    /**
     * @param openAlarmDefault a door open longer than this raises an alarm, unless its sensor has a threshold of
     *                         its own; null: only those sensors (lockwatch.alarms.open-after)
     */
    public SensorStateStore(JdbcTemplate jdbc, TransactionTemplate tx, java.time.Duration defaultTimeout,
                            java.time.Duration openAlarmDefault, int maxSensors, java.time.Duration guard,
                            java.util.function.LongSupplier clock) {
        this.openAlarmDefaultSeconds = openAlarmDefault == null ? null : (int) openAlarmDefault.toSeconds();
        this.jdbc = jdbc;
        this.tx = tx;
        this.defaultTimeoutMillis = defaultTimeout.toMillis();
        this.maxSensors = maxSensors;
        this.guardMillis = guard.toMillis();
        this.clock = clock;
    }

    /** @param traceParent kept with the notifications of the events recorded (see {@code Outbox}); null: none */
    public synchronized ApplyOutcome apply(List<Reading> readings, String traceParent) {
        if (readings.isEmpty()) {
            return ApplyOutcome.NOTHING;
        }
        Set<String> ids = sensorIds(readings);
        Map<String, Row> rows = new HashMap<>(ids.size() * 2);
        ApplyOutcome outcome = null;
        while (outcome == null) {
            try {
                outcome = tx.execute(status -> jdbc.execute((Connection c) -> applyIn(c, readings, ids, rows, traceParent)));
            } catch (RegistrationsEnded e) {
                // decided on rows held from before a sensor was deleted: nothing of it was committed; decided again on
                // every row read anew (then nothing held is used, so this happens once at most)
                forgetHeld(e.generation);
                rows.clear();
            } catch (RuntimeException e) {
                // the rows were changed in memory by a transaction that did not commit
                held.keySet().removeAll(ids);
                heldCount = held.size();
                throw e;
            }
        }
        for (String id : ids) {
            Row row = rows.get(id);
            if (row == null) {
                held.remove(id); // not registered (any more)
            } else if (held.size() < maxSensors || held.containsKey(id)) {
                held.put(id, row);
            }
        }
        heldCount = held.size();
        return outcome;
    }

    /**
     * Drops every row held, and writes every reading through for {@code settle}: called when this instance takes up
     * partitions, whose sensors another instance may have written meanwhile, and may still be writing until its
     * last batch of them is committed.
     */
    public synchronized void forget(java.time.Duration settle) {
        held.clear();
        heldCount = 0;
        writeThroughUntil = clock.getAsLong() + settle.toMillis();
    }

    /**
     * Whether this reading may change its sensor's state (or end its silence), as far as the rows held tell without a
     * transaction: for the batching, which applies a change at once and lets repeats wait for company. A sensor not
     * held may; a row read while a batch changes it may be a batch behind, which costs a batch's wait, never an event.
     */
    public boolean mayChangeState(Reading r) {
        Row row = held.get(r.sensorId());
        return row == null || row.lost || row.state != r.data();
    }

    /** The number of sensors whose rows are held in memory. */
    public int heldSensors() {
        return heldCount;
    }

    private ApplyOutcome applyIn(Connection c, List<Reading> readings, Set<String> ids, Map<String, Row> rows,
                                 String traceParent) throws SQLException {
        List<String> toRead = new ArrayList<>();
        for (String id : ids) {
            Row row = held.get(id);
            if (row == null) {
                toRead.add(id);
            } else {
                rows.put(id, row);
            }
        }
        boolean heldUsed = toRead.size() < ids.size();
        Generation generation = new Generation();
        if (!toRead.isEmpty()) {
            rows.putAll(read(c, toRead, false, generation));
            checkGeneration(generation, heldUsed); // before anything is decided on held rows
        }
        long now = clock.getAsLong();
        Verdict[] verdicts = new Verdict[readings.size()];
        List<SensorEvent> events = new ArrayList<>();
        decide(readings, ids, rows, verdicts, events, now);
        Set<String> changedMeanwhile = update(c, rows, generation);
        if (!generation.asked) {
            try (PreparedStatement ps = c.prepareStatement(Generation.QUERY); ResultSet rs = ps.executeQuery()) {
                generation.note(rs);
            }
        }
        checkGeneration(generation, heldUsed);
        if (!changedMeanwhile.isEmpty()) {
            // decided on a version another transaction has replaced since: decide these sensors again, on their
            // rows as they are now, locked until commit
            events.removeIf(e -> changedMeanwhile.contains(e.sensorId()));
            Map<String, Row> current = read(c, changedMeanwhile, true, generation);
            rows.keySet().removeAll(changedMeanwhile);
            rows.putAll(current);
            decide(readings, changedMeanwhile, current, verdicts, events, now);
            if (!update(c, current, generation).isEmpty()) {
                throw new IllegalStateException("a locked sensor_state row changed");
            }
        }
        Outbox.Notified notifications = recordEvents(c, events, traceParent);
        int healthNews = recordHealth(c, readings, verdicts);
        int[] counts = new int[Verdict.values().length];
        for (Verdict v : verdicts) {
            counts[v.ordinal()]++;
        }
        return new ApplyOutcome(events, counts[Verdict.APPLIED.ordinal()], counts[Verdict.UNKNOWN.ordinal()],
                counts[Verdict.DUPLICATE.ordinal()], counts[Verdict.STALE.ordinal()], notifications,
                new HashSet<>(rows.keySet()), healthNews);
    }

    /**
     * The count of registrations ended (V41 counts sensors' deletions), asked in the round trip of a batch's first
     * statement: a repeat is decided on a held row without reading the table, so the row of a deleted sensor,
     * registered again meanwhile, would be taken for the new registration's, whose state starts empty. So once it
     * has moved on, a batch that decided on held rows is rolled back and decided again on rows read anew. Asked
     * before the batch's rows are read or written (the first of the statements sent together): a deletion committed
     * after it is ordered after the batch, whose writes of the deleted rows then miss.
     */
    private static final class Generation {
        static final String QUERY = "SELECT generation FROM sensor_registrations_generation";
        boolean asked;
        long value;

        /** {@code sql} sent after this query, in the same round trip when {@link #asked} is not yet. */
        String before(String sql) {
            return asked ? sql : QUERY + ";\n" + sql;
        }

        /** Executes {@code ps}, prepared with {@link #before}; @return the result of its own statement */
        ResultSet execute(PreparedStatement ps) throws SQLException {
            if (asked) {
                return ps.executeQuery();
            }
            ps.execute();
            note(ps.getResultSet());
            if (!ps.getMoreResults()) {
                throw new IllegalStateException("no result after the generation's");
            }
            return ps.getResultSet();
        }

        void note(ResultSet rs) throws SQLException {
            value = rs.next() ? rs.getLong(1) : 0;
            asked = true;
        }
    }

    /**
     * Once the generation is known: a batch that used held rows while a sensor was deleted is rolled back (and done
     * again); one that used none only forgets what is held.
     */
    private void checkGeneration(Generation generation, boolean heldUsed) {
        if (generation.value == registrationsGeneration) {
            return;
        }
        if (heldUsed) {
            throw new RegistrationsEnded(generation.value);
        }
        forgetHeld(generation.value);
    }

    private void forgetHeld(long generation) {
        held.clear();
        heldCount = 0;
        registrationsGeneration = generation;
    }

    /** Thrown to roll back a batch decided on rows held from before a sensor was deleted. */
    private static final class RegistrationsEnded extends RuntimeException {
        final long generation;

        RegistrationsEnded(long generation) {
            super(null, null, false, false);
            this.generation = generation;
        }
    }

    private enum Verdict { APPLIED, UNKNOWN, DUPLICATE, STALE }

    private static Set<String> sensorIds(List<Reading> readings) {
        Set<String> ids = new HashSet<>(readings.size() * 2);
        readings.forEach(r -> ids.add(r.sensorId()));
        return ids;
    }

    /**
     * Decides the readings of the sensors {@code of} (the others' are left as they are), in delivery order,
     * against their {@code rows} (none: not registered), changing the rows in memory and adding the events they
     * bring; marks the rows that must be written.
     */
    private void decide(List<Reading> readings, Set<String> of, Map<String, Row> rows, Verdict[] verdicts,
                        List<SensorEvent> events, long now) {
        for (int i = 0; i < readings.size(); i++) {
            Reading r = readings.get(i);
            if (!of.contains(r.sensorId())) {
                continue;
            }
            Row row = rows.get(r.sensorId());
            verdicts[i] = row == null ? Verdict.UNKNOWN : decide(r, row, events);
        }
        for (String id : of) {
            Row row = rows.get(id);
            if (row != null && !row.dirty && row.lastSeenAt != NONE && mustWrite(row, now)) {
                row.dirty = true;
            }
        }
    }

    private Verdict decide(Reading r, Row row, List<SensorEvent> events) {
        long idHash = r.messageId() == null ? 0 : hash(r.messageId());
        if (r.messageId() != null && row.seen(idHash)) {
            return Verdict.DUPLICATE;
        }
        if (row.lastReadingAt != NONE && r.appliedAt() < row.lastReadingAt) {
            // older than what is applied. Measured at the same moment (the AMQP timestamp has whole seconds): taken
            // in arrival order, as two changes in one second are real; a redelivery is told apart by a message id
            return Verdict.STALE;
        }
        row.lastReadingAt = r.appliedAt();
        row.lastSeenAt = row.lastSeenAt == NONE ? r.appliedAt() : Math.max(row.lastSeenAt, r.appliedAt());
        if (r.messageId() != null) {
            row.remember(idHash);
        }
        if (row.lost) {
            // back from a silence: restored first, then the change this reading may bring
            row.sequence++;
            events.add(new SensorEvent(r.sensorId(), row.sequence, SensorEvent.CONNECTION_RESTORED, row.state(),
                    null, r.appliedAt()));
            row.lost = false;
            row.dirty = true;
        }
        if (row.state != r.data()) {
            row.sequence++;
            events.add(new SensorEvent(r.sensorId(), row.sequence, SensorEvent.STATE_CHANGED, r.data(), row.state(),
                    r.appliedAt()));
            row.state = (byte) r.data();
            row.changedAt = r.appliedAt();
            row.dirty = true;
        }
        return Verdict.APPLIED;
    }

    /**
     * Whether a row that only saw repeats is written anyway: its last-seen time has moved on by more than the
     * tolerance since it was written (or it never was), another instance may have written it lately, or its stored
     * deadline is near, so that the heartbeat may be about to declare it lost.
     */
    private boolean mustWrite(Row row, long now) {
        return row.writtenSeenAt == NONE
                || LastSeenTolerance.outgrown(row.lastSeenAt, row.writtenSeenAt, timeoutOf(row))
                || now < writeThroughUntil
                || row.deadline == NONE || now + guardMillis >= row.deadline;
    }

    private long timeoutOf(Row row) {
        return row.timeoutMillis != NONE ? row.timeoutMillis : defaultTimeoutMillis;
    }

    /**
     * The registered sensors among {@code ids}, by id; {@code lock}: locked until commit. The sensor's own timeout is
     * the copy in {@code sensor_state} (V11), so the read stays on one table.
     */
    private Map<String, Row> read(Connection c, java.util.Collection<String> ids, boolean lock, Generation generation)
            throws SQLException {
        Map<String, Row> rows = new HashMap<>(ids.size() * 2);
        try (PreparedStatement ps = c.prepareStatement(generation.before("""
                SELECT st.sensor_id, st.state, st.state_changed_at, st.last_reading_at, st.last_seen_at, st.sequence,
                       st.recent_message_ids, st.connectivity, st.heartbeat_timeout_seconds, st.lost_deadline,
                       st.xmin::text
                  FROM sensor_state st
                 WHERE st.sensor_id = ANY (?)
                 ORDER BY st.sensor_id""" + (lock ? " FOR UPDATE" : "")))) {
            ps.setArray(1, c.createArrayOf("varchar", ids.toArray()));
            try (ResultSet rs = generation.execute(ps)) {
                while (rs.next()) {
                    Row row = new Row();
                    short state = rs.getShort(2);
                    row.state = rs.wasNull() ? Row.NO_STATE : (byte) state;
                    row.changedAt = millis(rs.getTimestamp(3));
                    row.lastReadingAt = millis(rs.getTimestamp(4));
                    row.lastSeenAt = millis(rs.getTimestamp(5));
                    row.writtenSeenAt = row.lastSeenAt;
                    row.sequence = rs.getLong(6);
                    Array recent = rs.getArray(7);
                    for (Long h : (Long[]) recent.getArray()) {
                        row.add(h);
                    }
                    row.lost = LOST.equals(rs.getString(8));
                    int timeout = rs.getInt(9);
                    row.timeoutMillis = rs.wasNull() ? NONE : timeout * 1000L;
                    row.deadline = millis(rs.getTimestamp(10));
                    row.version = Long.parseLong(rs.getString(11));
                    rows.put(rs.getString(1), row);
                }
            }
        }
        return rows;
    }

    /**
     * Writes back the rows marked to be written, each only if it is still the version that was read or last
     * written, and takes note of what they now are.
     * @return the ids of those that were not: another transaction changed (or deleted) them since
     */
    private Set<String> update(Connection c, Map<String, Row> rows, Generation generation) throws SQLException {
        List<String> ids = new ArrayList<>();
        List<Row> written = new ArrayList<>();
        rows.forEach((id, row) -> {
            if (row.dirty) {
                ids.add(id);
            }
        });
        if (ids.isEmpty()) {
            return Set.of();
        }
        // in the order of their ids, as every writer of sensor_state takes its rows
        java.util.Collections.sort(ids);
        for (String id : ids) {
            written.add(rows.get(id));
        }
        int n = ids.size();
        Object[] states = new Object[n], changedAt = new Object[n], readingAt = new Object[n], seenAt = new Object[n],
                sequences = new Object[n], recent = new Object[n], deadlines = new Object[n], versions = new Object[n];
        for (int i = 0; i < n; i++) {
            Row row = written.get(i);
            states[i] = (short) row.state;
            changedAt[i] = row.changedAt;
            readingAt[i] = row.lastReadingAt;
            seenAt[i] = row.lastSeenAt;
            sequences[i] = row.sequence;
            recent[i] = row.recentLiteral();
            deadlines[i] = LastSeenTolerance.lostDeadline(row.lastSeenAt, timeoutOf(row));
            versions[i] = Long.toString(row.version);
        }
        try (PreparedStatement ps = c.prepareStatement(generation.before("""
                UPDATE sensor_state s
                   SET state = u.state,
                       state_changed_at = to_timestamp(u.changed_at / 1000.0),
                       last_reading_at = to_timestamp(u.reading_at / 1000.0),
                       last_seen_at = to_timestamp(u.seen_at / 1000.0),
                       sequence = u.seq,
                       recent_message_ids = u.recent::bigint[],
                       connectivity = 'online',
                       lost_deadline = to_timestamp(u.deadline / 1000.0),
                       lost_at = NULL,
                       -- an opening's alarm deadline; kept through the same opening, where the alarm scan may have
                       -- taken it (null: raised); gone once the door closes (the scan then clears the alarm)
                       alarm_due_at = CASE
                           WHEN u.state <> 0 THEN NULL
                           WHEN s.state = 0 AND s.state_changed_at = to_timestamp(u.changed_at / 1000.0) THEN s.alarm_due_at
                           ELSE to_timestamp(u.changed_at / 1000.0)
                                + make_interval(secs => coalesce(s.open_alarm_seconds, ?::integer))
                       END
                  FROM unnest(?::varchar[], ?::smallint[], ?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[], ?::text[],
                              ?::bigint[], ?::text[])
                       AS u(id, state, changed_at, reading_at, seen_at, seq, recent, deadline, version)
                 WHERE s.sensor_id = u.id AND s.xmin = u.version::xid
                RETURNING s.sensor_id, s.xmin::text"""))) {
            if (openAlarmDefaultSeconds == null) {
                ps.setNull(1, java.sql.Types.INTEGER);
            } else {
                ps.setInt(1, openAlarmDefaultSeconds);
            }
            ps.setArray(2, c.createArrayOf("varchar", ids.toArray()));
            ps.setArray(3, c.createArrayOf("int2", states));
            ps.setArray(4, c.createArrayOf("int8", changedAt));
            ps.setArray(5, c.createArrayOf("int8", readingAt));
            ps.setArray(6, c.createArrayOf("int8", seenAt));
            ps.setArray(7, c.createArrayOf("int8", sequences));
            ps.setArray(8, c.createArrayOf("text", recent));
            ps.setArray(9, c.createArrayOf("int8", deadlines));
            ps.setArray(10, c.createArrayOf("text", versions));
            Set<String> notWritten = new HashSet<>(ids);
            try (ResultSet rs = generation.execute(ps)) {
                while (rs.next()) {
                    String id = rs.getString(1);
                    notWritten.remove(id);
                    Row row = rows.get(id);
                    row.version = Long.parseLong(rs.getString(2));
                    row.writtenSeenAt = row.lastSeenAt;
                    row.deadline = LastSeenTolerance.lostDeadline(row.lastSeenAt, timeoutOf(row));
                    row.dirty = false;
                }
            }
            return notWritten;
        }
    }

    /** The newest of what a sensor's readings in a batch said of its health, field by field (null: nothing). */
    private static final class HealthSaid {
        Float battery;
        Long batteryAt;
        Boolean tamper;
        Long tamperAt;
        /** The earliest reading of the batch that said the switch is open: an opening closed again is still one. */
        Long tamperOpenedAt;
        Short rssi;
        Float snr;
        Long signalAt;

        void add(DeviceHealth h, long at) {
            if (h.battery() != null) {
                battery = h.battery().floatValue();
                batteryAt = at;
            }
            if (h.tamper() != null) {
                tamper = h.tamper();
                tamperAt = at;
                if (h.tamper() && tamperOpenedAt == null) {
                    tamperOpenedAt = at;
                }
            }
            if (h.hasSignal()) {
                // one report of the radio: an rssi without an snr does not keep an older snr beside it
                rssi = h.rssi() == null ? null : h.rssi().shortValue();
                snr = h.snr() == null ? null : h.snr().floatValue();
                signalAt = at;
            }
        }
    }

    /**
     * Keeps what the applied readings said of their devices' health: only applied ones, so never older than what
     * is kept (an applied reading is never older than its sensor's newest); a duplicate or a stale one says nothing.
     * One statement, and none for a batch of doors alone. @return the sensors marked for the alarms to judge
     */
    private static int recordHealth(Connection c, List<Reading> readings, Verdict[] verdicts) throws SQLException {
        java.util.TreeMap<String, HealthSaid> said = null;
        for (int i = 0; i < readings.size(); i++) {
            Reading r = readings.get(i);
            if (r.health() != null && verdicts[i] == Verdict.APPLIED) {
                if (said == null) {
                    said = new java.util.TreeMap<>(); // in the order of their ids, as every writer takes its rows
                }
                said.computeIfAbsent(r.sensorId(), id -> new HealthSaid()).add(r.health(), r.appliedAt());
            }
        }
        if (said == null) {
            return 0;
        }
        int n = said.size();
        Object[] ids = new Object[n], battery = new Object[n], batteryAt = new Object[n], tamper = new Object[n],
                tamperAt = new Object[n], tamperOpenedAt = new Object[n], rssi = new Object[n], snr = new Object[n],
                signalAt = new Object[n];
        int i = 0;
        for (Map.Entry<String, HealthSaid> e : said.entrySet()) {
            HealthSaid h = e.getValue();
            ids[i] = e.getKey();
            battery[i] = h.battery;
            batteryAt[i] = h.batteryAt;
            tamper[i] = h.tamper;
            tamperAt[i] = h.tamperAt;
            tamperOpenedAt[i] = h.tamperOpenedAt;
            rssi[i] = h.rssi;
            snr[i] = h.snr;
            signalAt[i] = h.signalAt;
            i++;
        }
        try (PreparedStatement ps = c.prepareStatement("""
                INSERT INTO sensor_health AS h (sensor_id, battery, battery_at, tamper, tamper_at, tamper_opened_at, rssi, snr,
                                                signal_at, alarm_check)
                SELECT u.id, u.battery, to_timestamp(u.battery_at / 1000.0), u.tamper, to_timestamp(u.tamper_at / 1000.0),
                       to_timestamp(u.tamper_opened_at / 1000.0), u.rssi, u.snr, to_timestamp(u.signal_at / 1000.0),
                       u.battery IS NOT NULL OR u.tamper IS NOT NULL
                  FROM unnest(?::varchar[], ?::real[], ?::bigint[], ?::boolean[], ?::bigint[], ?::bigint[], ?::smallint[],
                              ?::real[], ?::bigint[])
                       AS u(id, battery, battery_at, tamper, tamper_at, tamper_opened_at, rssi, snr, signal_at)
                ON CONFLICT (sensor_id) DO UPDATE
                   SET battery = coalesce(excluded.battery, h.battery),
                       battery_at = coalesce(excluded.battery_at, h.battery_at),
                       tamper = coalesce(excluded.tamper, h.tamper),
                       tamper_at = coalesce(excluded.tamper_at, h.tamper_at),
                       -- the earliest opening the alarm scan has not judged yet
                       tamper_opened_at = coalesce(h.tamper_opened_at, excluded.tamper_opened_at),
                       rssi = CASE WHEN excluded.signal_at IS NULL THEN h.rssi ELSE excluded.rssi END,
                       snr = CASE WHEN excluded.signal_at IS NULL THEN h.snr ELSE excluded.snr END,
                       signal_at = coalesce(excluded.signal_at, h.signal_at),
                       -- the alarm scan judges a battery or a tamper switch that said something new
                       alarm_check = h.alarm_check OR excluded.battery IS DISTINCT FROM h.battery AND excluded.battery IS NOT NULL
                                     OR excluded.tamper IS DISTINCT FROM h.tamper AND excluded.tamper IS NOT NULL
                                     OR excluded.tamper_opened_at IS NOT NULL
                RETURNING h.alarm_check""")) {
            ps.setArray(1, c.createArrayOf("varchar", ids));
            ps.setArray(2, c.createArrayOf("float4", battery));
            ps.setArray(3, c.createArrayOf("int8", batteryAt));
            ps.setArray(4, c.createArrayOf("bool", tamper));
            ps.setArray(5, c.createArrayOf("int8", tamperAt));
            ps.setArray(6, c.createArrayOf("int8", tamperOpenedAt));
            ps.setArray(7, c.createArrayOf("int2", rssi));
            ps.setArray(8, c.createArrayOf("float4", snr));
            ps.setArray(9, c.createArrayOf("int8", signalAt));
            int marked = 0;
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    marked += rs.getBoolean(1) ? 1 : 0;
                }
            }
            return marked;
        }
    }

    /** {@link #recordEvents}' statement, composed once. */
    private static final String RECORD_EVENTS = """
            WITH recorded AS (
                INSERT INTO sensor_events (sensor_id, sequence, type, state, previous_state, occurred_at, maintenance)
                SELECT u.id, u.seq, u.type, u.state, u.previous, to_timestamp(u.at / 1000.0), %s
                  FROM unnest(?::varchar[], ?::bigint[], ?::text[], ?::smallint[], ?::smallint[], ?::bigint[])
                       WITH ORDINALITY AS u(id, seq, type, state, previous, at, n)
                 ORDER BY u.n
                RETURNING id, sensor_id, type, sequence, alarm_id, maintenance, feed_tx),
            %s,
            %s""".formatted(Maintenance.coveredNow("u.id"), Maintenance.holding("recorded"),
                    Outbox.notifying("(SELECT * FROM recorded WHERE id NOT IN (SELECT event_id FROM held)) e"));

    /**
     * Records events, holds what an open maintenance window holds of them, and writes the notifications of the
     * others, with one statement.
     */
    static Outbox.Notified recordEvents(Connection c, List<SensorEvent> events, String traceParent) throws SQLException {
        if (events.isEmpty()) {
            return Outbox.Notified.NONE;
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
        try (PreparedStatement ps = c.prepareStatement(RECORD_EVENTS)) {
            ps.setArray(1, c.createArrayOf("varchar", ids));
            ps.setArray(2, c.createArrayOf("int8", seqs));
            ps.setArray(3, c.createArrayOf("text", types));
            ps.setArray(4, c.createArrayOf("int2", states));
            ps.setArray(5, c.createArrayOf("int2", previous));
            ps.setArray(6, c.createArrayOf("int8", at));
            ps.setString(7, traceParent);
            try (ResultSet rs = ps.executeQuery()) {
                return Outbox.notified(c, rs);
            }
        }
    }

    static long hash(String messageId) {
        UUID u = UUID.nameUUIDFromBytes(messageId.getBytes(StandardCharsets.UTF_8));
        long h = u.getMostSignificantBits() ^ u.getLeastSignificantBits();
        return h == 0 ? 1 : h;
    }

    private static long millis(Timestamp t) {
        return t == null ? NONE : t.getTime();
    }

    /** A sensor's row as this instance knows it: what is stored, and the repeats applied since it was written. */
    private static final class Row {
        static final byte NO_STATE = -1;
        byte state = NO_STATE;
        boolean lost;
        boolean dirty;
        byte recentCount;
        long changedAt = NONE;
        long lastReadingAt = NONE;
        long lastSeenAt = NONE;
        /** the last-seen time as stored */
        long writtenSeenAt = NONE;
        /** the stored lost deadline */
        long deadline = NONE;
        long sequence;
        long timeoutMillis = NONE;
        /** the stored row's version ({@code xmin}) */
        long version;
        /** hashes of the last message ids applied, newest first */
        long[] recent;

        Integer state() {
            return state == NO_STATE ? null : (int) state;
        }

        boolean seen(long idHash) {
            for (int i = 0; i < recentCount; i++) {
                if (recent[i] == idHash) {
                    return true;
                }
            }
            return false;
        }

        void remember(long idHash) {
            if (recent == null) {
                recent = new long[RECENT_IDS];
            }
            System.arraycopy(recent, 0, recent, 1, RECENT_IDS - 1);
            recent[0] = idHash;
            recentCount = (byte) Math.min(RECENT_IDS, recentCount + 1);
        }

        /** Read from the table, oldest last. */
        void add(long idHash) {
            if (recentCount == RECENT_IDS) {
                return;
            }
            if (recent == null) {
                recent = new long[RECENT_IDS];
            }
            recent[recentCount++] = idHash;
        }

        String recentLiteral() {
            StringBuilder sb = new StringBuilder("{");
            for (int i = 0; i < recentCount; i++) {
                sb.append(i == 0 ? "" : ",").append(recent[i]);
            }
            return sb.append('}').toString();
        }
    }
}
