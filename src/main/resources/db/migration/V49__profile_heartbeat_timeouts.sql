-- A device profile implies how often its devices report (issue 57): a LoRaWAN door sensor once a day, not once an
-- hour. Its heartbeat timeout applies to each of its sensors that sets none of its own. Profiles are configuration;
-- their timeouts are kept here (HeartbeatScan.reconcileTimeouts, at every start) so that the database's copy of a
-- sensor's timeout in sensor_state (V11), which ingest and the heartbeat read, is the one that applies: the sensor's
-- own, else its profile's, else (null) the service's default. sensors keeps the sensor's own, as the API says it.
CREATE TABLE profile_heartbeat_timeouts (
    profile                   text PRIMARY KEY,
    heartbeat_timeout_seconds integer NOT NULL CONSTRAINT profile_timeout_positive CHECK (heartbeat_timeout_seconds > 0)
);

CREATE OR REPLACE FUNCTION sensor_state_for_new_sensors() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO sensor_state (sensor_id, heartbeat_timeout_seconds, open_alarm_seconds, sequence)
        SELECT n.id, coalesce(n.heartbeat_timeout_seconds, p.heartbeat_timeout_seconds), n.open_alarm_seconds,
               coalesce(e.last_sequence, 0)
          FROM new_sensors n
          LEFT JOIN sensor_registrations_ended e ON e.sensor_id = n.id
          LEFT JOIN profile_heartbeat_timeouts p ON p.profile = n.profile
        ON CONFLICT DO NOTHING;
    RETURN NULL;
END;
$$;

CREATE OR REPLACE FUNCTION sensor_state_follows_the_timeout() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE sensor_state
       SET heartbeat_timeout_seconds = coalesce(NEW.heartbeat_timeout_seconds,
               (SELECT p.heartbeat_timeout_seconds FROM profile_heartbeat_timeouts p WHERE p.profile = NEW.profile))
     WHERE sensor_id = NEW.id;
    RETURN NEW;
END;
$$;

-- a sensor given a profile (or another one, or none) follows its timeout too
DROP TRIGGER sensors_timeout_is_copied ON sensors;
CREATE TRIGGER sensors_timeout_is_copied AFTER UPDATE OF heartbeat_timeout_seconds, profile ON sensors
    FOR EACH ROW WHEN (OLD.heartbeat_timeout_seconds IS DISTINCT FROM NEW.heartbeat_timeout_seconds
                       OR OLD.profile IS DISTINCT FROM NEW.profile)
    EXECUTE FUNCTION sensor_state_follows_the_timeout();
