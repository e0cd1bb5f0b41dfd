-- Current state of every registered sensor, and the events derived from its readings.

CREATE TABLE sensor_state (
    sensor_id           varchar(16)  PRIMARY KEY REFERENCES sensors (id) ON DELETE CASCADE,
    -- null until the first reading
    state               smallint     CONSTRAINT sensor_state_binary CHECK (state IN (0, 1)),
    state_changed_at    timestamptz,
    -- measured time of the newest applied reading: an older reading never overwrites newer state
    last_reading_at     timestamptz,
    -- newest measured time heard from the sensor: what the heartbeat compares against
    last_seen_at        timestamptz,
    -- per-sensor event sequence: the last sequence number given to an event of this sensor
    sequence            bigint       NOT NULL DEFAULT 0,
    -- 64-bit hashes of the message ids of the last readings applied, newest first: a message delivered
    -- twice is recognised even when it carries no measured time of its own
    recent_message_ids  bigint[]     NOT NULL DEFAULT '{}'
);

-- Every registered sensor has a state row, so ingest only ever updates rows it has locked.
CREATE FUNCTION sensor_state_for_new_sensor() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO sensor_state (sensor_id) VALUES (NEW.id) ON CONFLICT DO NOTHING;
    RETURN NEW;
END;
$$;

CREATE TRIGGER sensors_have_state AFTER INSERT ON sensors
    FOR EACH ROW EXECUTE FUNCTION sensor_state_for_new_sensor();

INSERT INTO sensor_state (sensor_id) SELECT id FROM sensors ON CONFLICT DO NOTHING;

CREATE TABLE sensor_events (
    -- insertion order, for relays that follow this table (history export)
    id              bigserial    PRIMARY KEY,
    -- no foreign key: the events of a deleted sensor remain history
    sensor_id       varchar(16)  NOT NULL,
    sequence        bigint       NOT NULL,
    type            text         NOT NULL CONSTRAINT sensor_event_type CHECK (type IN
                                     ('sensor.state_changed', 'sensor.connection_lost', 'sensor.connection_restored')),
    state           smallint,
    previous_state  smallint,
    occurred_at     timestamptz  NOT NULL,
    recorded_at     timestamptz  NOT NULL DEFAULT now(),
    CONSTRAINT sensor_event_once UNIQUE (sensor_id, sequence)
);
