-- Maintenance windows (issue 40): while one is open over a sensor, its connection_lost and its alarms are held, not
-- sent; its state changes are sent, marked maintenance. When the window ends, what is still true is sent once.
CREATE TABLE maintenance_windows (
    id             uuid         PRIMARY KEY DEFAULT gen_random_uuid(),
    starts_at      timestamptz  NOT NULL,
    ends_at        timestamptz  NOT NULL,
    reason         text         NOT NULL CONSTRAINT maintenance_reason CHECK (char_length(reason) BETWEEN 1 AND 500),
    -- the sensors: by their ids, or by the start of their address (in any case)
    sensor_ids     varchar(16)[],
    address_prefix text         CONSTRAINT maintenance_address_prefix CHECK (char_length(address_prefix) BETWEEN 1 AND 500),
    -- ended early (before ends_at), or cancelled before it started
    ended_at       timestamptz,
    cancelled_at   timestamptz,
    -- what it held was sent (what was still true) by one release, once
    released_at    timestamptz,
    created_at     timestamptz  NOT NULL DEFAULT now(),
    CONSTRAINT maintenance_span CHECK (ends_at > starts_at),
    CONSTRAINT maintenance_sensors CHECK ((sensor_ids IS NULL) <> (address_prefix IS NULL))
);
CREATE INDEX maintenance_windows_unreleased ON maintenance_windows (ends_at) WHERE released_at IS NULL;

-- The open window over a sensor now, if any (the one that ends last): what holds its events.
CREATE FUNCTION maintenance_window_of(p_sensor varchar, p_address text) RETURNS uuid
    LANGUAGE sql STABLE AS $$
    SELECT w.id FROM maintenance_windows w
     WHERE w.released_at IS NULL AND w.cancelled_at IS NULL
       AND w.starts_at <= now() AND coalesce(w.ended_at, w.ends_at) > now()
       AND (p_sensor = ANY (w.sensor_ids)
            OR left(lower(p_address), char_length(w.address_prefix)) = lower(w.address_prefix))
     ORDER BY coalesce(w.ended_at, w.ends_at) DESC
     LIMIT 1
$$;

-- A sensor's lost connection or raised alarm that a window held: sent when the window ends if still true, dropped
-- if its restoring or clearing came first (held too: nobody heard of what it ends).
CREATE TABLE maintenance_held (
    sensor_id   varchar(16)  NOT NULL,
    kind        text         NOT NULL CONSTRAINT maintenance_held_kind CHECK (kind IN ('connectivity', 'alarm')),
    window_id   uuid         NOT NULL REFERENCES maintenance_windows (id),
    event_id    bigint       NOT NULL,
    alarm_id    uuid,
    PRIMARY KEY (sensor_id, kind)
);
CREATE INDEX maintenance_held_by_window ON maintenance_held (window_id);

-- an event recorded while a window was open over its sensor says so in its webhook
ALTER TABLE sensor_events ADD COLUMN maintenance boolean NOT NULL DEFAULT false;
