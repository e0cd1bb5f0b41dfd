-- A new sensor gets its sensor_state row in the statement that inserts it, as before (V2, V18), but once per
-- statement, from the statement's new rows, instead of once per row: a registry import inserts up to millions of
-- sensors in one statement, and the row trigger's call and INSERT per sensor were most of its time.
DROP TRIGGER sensors_have_state ON sensors;
DROP FUNCTION sensor_state_for_new_sensor();

CREATE FUNCTION sensor_state_for_new_sensors() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO sensor_state (sensor_id, heartbeat_timeout_seconds, open_alarm_seconds)
        SELECT id, heartbeat_timeout_seconds, open_alarm_seconds FROM new_sensors
        ON CONFLICT DO NOTHING;
    RETURN NULL;
END;
$$;

CREATE TRIGGER sensors_have_state AFTER INSERT ON sensors
    REFERENCING NEW TABLE AS new_sensors
    FOR EACH STATEMENT EXECUTE FUNCTION sensor_state_for_new_sensors();
