-- A sensor registered, or given a profile, while another instance's start reconciles that profile's timeout
-- (HeartbeatScan.reconcileTimeouts) must not keep the old timeout: the triggers read the profiles' timeouts under a
-- ROW SHARE lock, which the reconcile's EXCLUSIVE lock waits for (and which waits for it), so either the sensor's
-- copy is written first and the reconcile's update sees it, or the copy reads the reconciled timeout.
CREATE OR REPLACE FUNCTION sensor_state_for_new_sensors() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    LOCK TABLE profile_heartbeat_timeouts IN ROW SHARE MODE;
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
    LOCK TABLE profile_heartbeat_timeouts IN ROW SHARE MODE;
    UPDATE sensor_state
       SET heartbeat_timeout_seconds = coalesce(NEW.heartbeat_timeout_seconds,
               (SELECT p.heartbeat_timeout_seconds FROM profile_heartbeat_timeouts p WHERE p.profile = NEW.profile))
     WHERE sensor_id = NEW.id;
    RETURN NEW;
END;
$$;
