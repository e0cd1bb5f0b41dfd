-- Connectivity: a sensor heard from is online until it has been silent longer than its timeout, then lost
-- until its next reading. The deadline is kept with the state so the heartbeat scan is one index range.

ALTER TABLE sensor_state
    ADD COLUMN connectivity  text NOT NULL DEFAULT 'unknown'
        CONSTRAINT sensor_connectivity CHECK (connectivity IN ('unknown', 'online', 'lost')),
    -- last_seen_at + the sensor's timeout (its own, or the global default): lost after this
    ADD COLUMN lost_deadline timestamptz,
    -- when the current silent period was declared lost
    ADD COLUMN lost_at       timestamptz;

UPDATE sensor_state SET connectivity = 'online' WHERE last_seen_at IS NOT NULL;

CREATE INDEX sensor_state_online_deadline ON sensor_state (lost_deadline) WHERE connectivity = 'online';
CREATE INDEX sensor_state_by_connectivity ON sensor_state (connectivity);

-- Values the service keeps between runs, e.g. the default timeout the stored deadlines were computed with.
CREATE TABLE service_settings (
    name   text PRIMARY KEY,
    value  text NOT NULL
);
