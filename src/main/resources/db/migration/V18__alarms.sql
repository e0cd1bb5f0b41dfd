-- Alarms (issue 19): a door left open longer than its threshold raises one alarm per opening, which clears when
-- the door closes. The threshold is the sensor's own or lockwatch.alarms.open-after; none: no alarm.
ALTER TABLE sensors ADD COLUMN open_alarm_seconds integer
    CONSTRAINT sensor_open_alarm_seconds CHECK (open_alarm_seconds BETWEEN 1 AND 2592000);

-- As with the heartbeat timeout (V11), sensor_state keeps a copy for ingest, which computes the deadline of each
-- opening: its measured time plus the threshold. The alarm scan takes the due ones through the partial index and
-- sets the deadline back to null once the alarm is raised; ingest keeps it so for the rest of that opening.
ALTER TABLE sensor_state
    ADD COLUMN open_alarm_seconds integer,
    ADD COLUMN alarm_due_at timestamptz;

CREATE INDEX sensor_state_alarm_due ON sensor_state (alarm_due_at) WHERE alarm_due_at IS NOT NULL;

CREATE OR REPLACE FUNCTION sensor_state_for_new_sensor() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO sensor_state (sensor_id, heartbeat_timeout_seconds, open_alarm_seconds)
        VALUES (NEW.id, NEW.heartbeat_timeout_seconds, NEW.open_alarm_seconds)
        ON CONFLICT DO NOTHING;
    RETURN NEW;
END;
$$;

CREATE TABLE alarms (
    id                uuid         PRIMARY KEY DEFAULT gen_random_uuid(),
    -- no foreign key: the alarms of a deleted sensor remain history
    sensor_id         varchar(16)  NOT NULL,
    type              text         NOT NULL CONSTRAINT alarm_type CHECK (type IN ('door_open_too_long')),
    -- measured time of the reading that opened the door
    opened_at         timestamptz  NOT NULL,
    threshold_seconds integer      NOT NULL,
    -- opened_at + threshold: when the alarm was due, which is when it is said to be raised
    raised_at         timestamptz  NOT NULL,
    -- the sensor's event sequence of the alarm_raised event: the door's closing comes after it
    raised_sequence   bigint       NOT NULL,
    -- measured time of the reading that closed the door; null while the alarm is active
    cleared_at        timestamptz,
    acknowledged_at   timestamptz,
    acknowledged_by   text         CONSTRAINT alarm_acknowledged_by CHECK (char_length(acknowledged_by) BETWEEN 1 AND 200),
    ack_comment       text         CONSTRAINT alarm_ack_comment CHECK (char_length(ack_comment) <= 2000),
    recorded_at       timestamptz  NOT NULL DEFAULT now()
);

-- once per opening, and one active alarm per sensor, whoever scans
CREATE UNIQUE INDEX alarms_once_per_opening ON alarms (sensor_id, opened_at);
CREATE UNIQUE INDEX alarms_one_active ON alarms (sensor_id) WHERE cleared_at IS NULL;
CREATE INDEX alarms_by_raised_at ON alarms (raised_at DESC, id);

-- an alarm's events name it, for the webhook's body
ALTER TABLE sensor_events
    ADD COLUMN alarm_id uuid,
    DROP CONSTRAINT sensor_event_type,
    ADD CONSTRAINT sensor_event_type CHECK (type IN ('sensor.state_changed', 'sensor.connection_lost',
        'sensor.connection_restored', 'sensor.alarm_raised', 'sensor.alarm_cleared'));
