-- A window's sensors by id as rows, not only an array: every event recorded while a window is open asks whether its
-- sensor is inside, and an array of 100,000 ids was searched element by element for each event (ingest of 900,000
-- first readings stalled). The array stays as the window's own record, as given; membership is looked up here.
CREATE TABLE maintenance_window_sensors (
    window_id  uuid         NOT NULL REFERENCES maintenance_windows (id) ON DELETE CASCADE,
    sensor_id  varchar(16)  NOT NULL,
    PRIMARY KEY (sensor_id, window_id)
);
INSERT INTO maintenance_window_sensors (window_id, sensor_id)
SELECT w.id, unnest(w.sensor_ids) FROM maintenance_windows w WHERE w.sensor_ids IS NOT NULL
ON CONFLICT DO NOTHING;

CREATE OR REPLACE FUNCTION maintenance_window_of(p_sensor varchar, p_address text) RETURNS uuid
    LANGUAGE sql STABLE AS $$
    SELECT w.id FROM maintenance_windows w
     WHERE w.released_at IS NULL AND w.cancelled_at IS NULL
       AND w.starts_at <= now() AND coalesce(w.ended_at, w.ends_at) > now()
       AND (EXISTS (SELECT 1 FROM maintenance_window_sensors ws WHERE ws.sensor_id = p_sensor AND ws.window_id = w.id)
            OR left(lower(p_address), char_length(w.address_prefix)) = lower(w.address_prefix))
     ORDER BY coalesce(w.ended_at, w.ends_at) DESC
     LIMIT 1
$$;
