-- A sensor's identity is its registration (issue 54). A sensor deleted and registered again under its id is a new
-- sensor: its state starts empty (no state, connectivity unknown, no alarm, no links, no credentials), and its events
-- go on with the id's numbering, so that (sensor id, sequence) names one event for ever: in sensor_events
-- (sensor_event_once), in the webhooks and the feed, and for a client that skips what it has seen by sequence (the
-- snapshot's re-sync). Before, the new registration started again at 0, and its first event collided with the old
-- one's forever (every reading accepted and then lost to sensor_event_once).

-- The last sequence of each id whose registration ended, kept when its events are long gone to retention.
CREATE TABLE sensor_registrations_ended (
    sensor_id      varchar(16)  PRIMARY KEY,
    last_sequence  bigint       NOT NULL,
    ended_at       timestamptz  NOT NULL
);

-- Counted up by every registration's end, in the deleting transaction: ingest asks it once per batch and drops what it
-- holds in memory of its sensors when it moved, so a row of an ended registration is never taken for the new one's.
CREATE TABLE sensor_registrations_generation (
    one         boolean  PRIMARY KEY DEFAULT true CONSTRAINT sensor_registrations_generation_one CHECK (one),
    generation  bigint   NOT NULL
);
INSERT INTO sensor_registrations_generation (generation) VALUES (0);

-- What a registration leaves in the tables kept by sensor id, rather than removed with it by a foreign key, goes
-- with it, or it would reach into the new registration: an active alarm is closed (as the alarm scan closes the
-- alarm of a deleted sensor it comes upon; nobody is linked to hear its clearing), its steps not yet sent are
-- stopped, and what a maintenance window held of it is dropped (else the window's end would send the new one a
-- lost connection of the old, and the held alarm would keep the new one's alarms from escalating). Its events,
-- notifications and alarms stay as history.
CREATE FUNCTION sensor_registration_ends() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO sensor_registrations_ended (sensor_id, last_sequence, ended_at)
        VALUES (OLD.sensor_id, OLD.sequence, now())
        ON CONFLICT (sensor_id) DO UPDATE
           SET last_sequence = greatest(sensor_registrations_ended.last_sequence, excluded.last_sequence),
               ended_at = excluded.ended_at;
    UPDATE sensor_registrations_generation SET generation = generation + 1;
    WITH closed AS (
        UPDATE alarms SET cleared_at = now() WHERE sensor_id = OLD.sensor_id AND cleared_at IS NULL RETURNING id)
    UPDATE alarm_escalations e SET stopped_at = now()
      FROM closed WHERE e.alarm_id = closed.id AND e.sent_at IS NULL AND e.stopped_at IS NULL;
    DELETE FROM maintenance_held WHERE sensor_id = OLD.sensor_id;
    RETURN NULL;
END;
$$;

-- sensor_state goes with its sensor (ON DELETE CASCADE), and only then
CREATE TRIGGER sensor_state_ends_with_its_registration AFTER DELETE ON sensor_state
    FOR EACH ROW EXECUTE FUNCTION sensor_registration_ends();

-- A new registration's state row starts at the last sequence its id gave (V24's trigger, once per statement).
CREATE OR REPLACE FUNCTION sensor_state_for_new_sensors() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO sensor_state (sensor_id, heartbeat_timeout_seconds, open_alarm_seconds, sequence)
        SELECT n.id, n.heartbeat_timeout_seconds, n.open_alarm_seconds, coalesce(e.last_sequence, 0)
          FROM new_sensors n LEFT JOIN sensor_registrations_ended e ON e.sensor_id = n.id
        ON CONFLICT DO NOTHING;
    RETURN NULL;
END;
$$;

-- Ids deleted before this migration: their last sequence, from their events (one pass over them, once).
INSERT INTO sensor_registrations_ended (sensor_id, last_sequence, ended_at)
SELECT e.sensor_id, max(e.sequence), now()
  FROM sensor_events e
 WHERE NOT EXISTS (SELECT 1 FROM sensors s WHERE s.id = e.sensor_id)
 GROUP BY e.sensor_id;

-- And the sensors already registered again over their old events, which no reading could change since: they go on
-- after the old registration's last event.
UPDATE sensor_state st
   SET sequence = (SELECT max(e.sequence) FROM sensor_events e WHERE e.sensor_id = st.sensor_id)
 WHERE st.sequence < (SELECT max(e.sequence) FROM sensor_events e WHERE e.sensor_id = st.sensor_id);
