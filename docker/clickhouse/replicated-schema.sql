-- lockwatch history on a replicated, sharded ClickHouse: run once, before the first lockwatch instance starts,
-- with clickhouse-client against any node of the cluster `lockwatch` (remote_servers: every shard with two or more
-- replicas and internal_replication = true; ZooKeeper or ClickHouse Keeper; the macros {shard} and {replica} set
-- on each node). Not run here: the sandbox has one ClickHouse server (docs/scaling.md, "History").
--
-- lockwatch creates its tables itself with CREATE TABLE IF NOT EXISTS (history/ClickHouseSchema.java): created here
-- first, under the same names, they are what it writes to and reads from. Each name is a Distributed table over a
-- ReplicatedReplacingMergeTree of the same columns on every shard, sharded by sensor id: a sensor's rows stay on
-- one shard, so FINAL (which lockwatch reads with) removes a batch written twice on that shard, and a sensor's
-- queries read one shard. Keep the columns in step with ClickHouseSchema's versions.
--
-- Retention: lockwatch drops old months of, and sets a TTL on, the history tables it owns; Distributed tables it
-- leaves alone (and says so once in its log). Their local tables remove old rows by their own TTL: uncomment the
-- last line of each *_local table below and set it to lockwatch.history.retention (TTL needs ClickHouse 19.6+).

CREATE DATABASE IF NOT EXISTS lockwatch ON CLUSTER lockwatch;

CREATE TABLE IF NOT EXISTS lockwatch.readings_local ON CLUSTER lockwatch (
    reading_id      String,
    sensor_id       String,
    data            UInt8,
    measured_at_ms  Int64,
    received_at_ms  Int64,
    time_source     String,
    registered      UInt8,
    message_id      String,
    measured_at     DateTime DEFAULT toDateTime(intDiv(measured_at_ms, 1000))
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/lockwatch/readings', '{replica}')
PARTITION BY toYYYYMM(measured_at)
ORDER BY (sensor_id, measured_at_ms, reading_id)
-- TTL measured_at + INTERVAL 90 DAY
;

CREATE TABLE IF NOT EXISTS lockwatch.readings ON CLUSTER lockwatch AS lockwatch.readings_local
ENGINE = Distributed(lockwatch, lockwatch, readings_local, cityHash64(sensor_id));

CREATE TABLE IF NOT EXISTS lockwatch.events_local ON CLUSTER lockwatch (
    sensor_id       String,
    sequence        Int64,
    type            String,
    state           Nullable(UInt8),
    previous_state  Nullable(UInt8),
    occurred_at_ms  Int64,
    occurred_at     DateTime DEFAULT toDateTime(intDiv(occurred_at_ms, 1000))
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/lockwatch/events', '{replica}')
PARTITION BY toYYYYMM(occurred_at)
ORDER BY (sensor_id, sequence)
-- TTL occurred_at + INTERVAL 90 DAY
;

CREATE TABLE IF NOT EXISTS lockwatch.events ON CLUSTER lockwatch AS lockwatch.events_local
ENGINE = Distributed(lockwatch, lockwatch, events_local, cityHash64(sensor_id));

-- a notification's attempts all concern one sensor: sharded by it, they stay together too
CREATE TABLE IF NOT EXISTS lockwatch.delivery_attempts_local ON CLUSTER lockwatch (
    notification_id String,
    attempt         UInt32,
    client_id       String,
    sensor_id       String,
    event_type      String,
    status_code     Nullable(Int32),
    error           String,
    duration_ms     UInt32,
    attempted_at_ms Int64,
    attempted_at    DateTime DEFAULT toDateTime(intDiv(attempted_at_ms, 1000))
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/lockwatch/delivery_attempts', '{replica}')
PARTITION BY toYYYYMM(attempted_at)
ORDER BY (notification_id, attempt)
-- TTL attempted_at + INTERVAL 90 DAY
;

CREATE TABLE IF NOT EXISTS lockwatch.delivery_attempts ON CLUSTER lockwatch AS lockwatch.delivery_attempts_local
ENGINE = Distributed(lockwatch, lockwatch, delivery_attempts_local, cityHash64(sensor_id));

-- lockwatch's record of the schema versions applied: one table replicated on every node (no {shard} in its path),
-- so that an instance asking any node finds version 1 done
CREATE TABLE IF NOT EXISTS lockwatch.schema_migrations ON CLUSTER lockwatch (
    version     UInt32,
    description String,
    applied_at  DateTime DEFAULT now()
) ENGINE = ReplicatedMergeTree('/clickhouse/tables/all/lockwatch/schema_migrations', '{replica}')
ORDER BY version;

INSERT INTO lockwatch.schema_migrations (version, description) VALUES (1, 'readings, events, delivery attempts');
