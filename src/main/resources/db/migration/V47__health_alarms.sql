-- Health alarms (issue 57): a battery running low and a tamper switch raise alarms of their own types, each with
-- its own events (sensor.battery_low / sensor.battery_restored, sensor.tampered / sensor.tamper_cleared), beside the
-- door's; a sensor may have one active alarm of each type at once.
ALTER TABLE alarms
    DROP CONSTRAINT alarm_type,
    ADD CONSTRAINT alarm_type CHECK (type IN ('door_open_too_long', 'battery_low', 'tampered')),
    -- a door's alarm only
    ALTER COLUMN threshold_seconds DROP NOT NULL,
    -- battery_low: the battery (percent) that raised it, and the threshold it was at or below
    ADD COLUMN battery real,
    ADD COLUMN threshold_percent smallint;

-- a door's alarm once per opening, as before; a health alarm is once while active (below)
DROP INDEX alarms_once_per_opening;
CREATE UNIQUE INDEX alarms_once_per_opening ON alarms (sensor_id, opened_at) WHERE type = 'door_open_too_long';
DROP INDEX alarms_one_active;
CREATE UNIQUE INDEX alarms_one_active ON alarms (sensor_id, type) WHERE cleared_at IS NULL;

ALTER TABLE sensor_events
    DROP CONSTRAINT sensor_event_type,
    ADD CONSTRAINT sensor_event_type CHECK (type IN ('sensor.state_changed', 'sensor.connection_lost',
        'sensor.connection_restored', 'sensor.alarm_raised', 'sensor.alarm_cleared', 'sensor.alarm_escalated',
        'sensor.battery_low', 'sensor.battery_restored', 'sensor.tampered', 'sensor.tamper_cleared'));

-- a maintenance window holds a raised health alarm as it holds a door's: one of each kind per sensor
ALTER TABLE maintenance_held
    DROP CONSTRAINT maintenance_held_kind,
    ADD CONSTRAINT maintenance_held_kind CHECK (kind IN ('connectivity', 'alarm', 'battery_low', 'tampered'));

-- Ingest marks a sensor whose battery or tamper switch said something new; the alarm scan takes the marked ones
-- through the partial index, raises or clears their alarms, and unmarks them. tamper_opened_at keeps the earliest
-- reading that opened the switch since then, so that one opened and closed again before the scan still alarms.
ALTER TABLE sensor_health
    ADD COLUMN alarm_check boolean NOT NULL DEFAULT false,
    ADD COLUMN tamper_opened_at timestamptz;
CREATE INDEX sensor_health_alarm_check ON sensor_health (sensor_id) WHERE alarm_check;
-- what devices said before this version is judged once
UPDATE sensor_health SET alarm_check = true WHERE battery IS NOT NULL OR tamper;

-- The deletion of a sensor closes each of its active alarms with its clearing (V42 closed the one a sensor could
-- have), numbered one after another past the registration's last sequence.
CREATE OR REPLACE FUNCTION sensor_registration_ends() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    ended bigint := greatest(OLD.sequence,
                             coalesce((SELECT max(sequence) FROM sensor_events WHERE sensor_id = OLD.sensor_id), 0));
    last bigint;
BEGIN
    WITH closed AS (
        UPDATE alarms SET cleared_at = now() WHERE sensor_id = OLD.sensor_id AND cleared_at IS NULL
        RETURNING id, type),
    stopped AS (
        UPDATE alarm_escalations e SET stopped_at = now()
          FROM closed WHERE e.alarm_id = closed.id AND e.sent_at IS NULL AND e.stopped_at IS NULL),
    cleared AS (
        INSERT INTO sensor_events (sensor_id, sequence, type, state, occurred_at, alarm_id)
        SELECT OLD.sensor_id, ended + row_number() OVER (ORDER BY closed.type),
               CASE closed.type WHEN 'battery_low' THEN 'sensor.battery_restored'
                                WHEN 'tampered' THEN 'sensor.tamper_cleared'
                                ELSE 'sensor.alarm_cleared' END,
               OLD.state, now(), closed.id
          FROM closed
        RETURNING sequence)
    SELECT coalesce(max(sequence), ended) INTO last FROM cleared;
    INSERT INTO sensor_registrations_ended (sensor_id, last_sequence, ended_at)
        VALUES (OLD.sensor_id, last, now())
        ON CONFLICT (sensor_id) DO UPDATE
           SET last_sequence = greatest(sensor_registrations_ended.last_sequence, excluded.last_sequence),
               ended_at = excluded.ended_at;
    UPDATE sensor_registrations_generation SET generation = generation + 1;
    DELETE FROM maintenance_held WHERE sensor_id = OLD.sensor_id;
    RETURN NULL;
END;
$$;
