-- History of readings when history is kept in PostgreSQL (the embedded default). Events and delivery attempts
-- are already in sensor_events and delivery_attempts; with ClickHouse they are exported there too.

CREATE TABLE reading_history (
    -- stable across redeliveries: the message id, else derived from sensor, time and value
    reading_id   text         PRIMARY KEY,
    sensor_id    varchar(16)  NOT NULL,
    data         smallint     NOT NULL,
    measured_at  timestamptz  NOT NULL,
    received_at  timestamptz  NOT NULL,
    time_source  text         NOT NULL,
    registered   boolean      NOT NULL,
    message_id   text
);

CREATE INDEX reading_history_by_sensor ON reading_history (sensor_id, measured_at DESC, reading_id DESC);

-- Export to ClickHouse: rows not yet written there (an outbox of history).
ALTER TABLE sensor_events ADD COLUMN exported boolean NOT NULL DEFAULT false;
ALTER TABLE delivery_attempts ADD COLUMN exported boolean NOT NULL DEFAULT false;
CREATE INDEX sensor_events_to_export ON sensor_events (id) WHERE NOT exported;
CREATE INDEX delivery_attempts_to_export ON delivery_attempts (id) WHERE NOT exported;
CREATE INDEX sensor_events_by_sensor_time ON sensor_events (sensor_id, occurred_at);
CREATE INDEX delivery_attempts_by_client ON delivery_attempts (client_id, attempted_at);
CREATE INDEX delivery_attempts_by_sensor ON delivery_attempts (sensor_id, attempted_at);
