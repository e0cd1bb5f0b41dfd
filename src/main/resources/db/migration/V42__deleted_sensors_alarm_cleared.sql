-- An alarm closed because its sensor was deleted is heard to end (V41 closed it without an event, so a client sent
-- an escalation step, or told of the raising, never heard that it was over). Its end is the sensor's last event, a
-- sensor.alarm_cleared at the deletion, numbered after the registration's last sequence, which the ended registration
-- then keeps, so that one registered again under the id goes on after it. Events have no foreign key to sensors
-- (history) and notifications none but to their event: the deleting transaction (Registry.deleteSensor) gives it to
-- the clients that were told of the alarm, after it cancelled what of the sensor was still unsent.
CREATE OR REPLACE FUNCTION sensor_registration_ends() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    -- the registration's last number: its state's, or an event's past it (one written beside the state, as a test's
    -- or an operator's repair may), so that the clearing never takes a number already used
    ended bigint := greatest(OLD.sequence,
                             coalesce((SELECT max(sequence) FROM sensor_events WHERE sensor_id = OLD.sensor_id), 0));
    last bigint;
BEGIN
    WITH closed AS (
        UPDATE alarms SET cleared_at = now() WHERE sensor_id = OLD.sensor_id AND cleared_at IS NULL RETURNING id),
    stopped AS (
        UPDATE alarm_escalations e SET stopped_at = now()
          FROM closed WHERE e.alarm_id = closed.id AND e.sent_at IS NULL AND e.stopped_at IS NULL),
    cleared AS (
        INSERT INTO sensor_events (sensor_id, sequence, type, state, occurred_at, alarm_id)
        SELECT OLD.sensor_id, ended + 1, 'sensor.alarm_cleared', OLD.state, now(), closed.id FROM closed
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
