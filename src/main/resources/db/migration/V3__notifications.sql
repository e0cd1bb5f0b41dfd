-- Notifications: the transactional outbox of webhook deliveries, one row per event and linked client,
-- written in the same transaction as the event.

CREATE TABLE notifications (
    id               uuid         PRIMARY KEY DEFAULT gen_random_uuid(),
    event_id         bigint       NOT NULL REFERENCES sensor_events (id),
    -- no foreign key: a deleted client's notifications remain, cancelled, as history
    client_id        uuid         NOT NULL,
    sensor_id        varchar(16)  NOT NULL,
    type             text         NOT NULL,
    sequence         bigint       NOT NULL,
    status           text         NOT NULL DEFAULT 'pending' CONSTRAINT notification_status CHECK (status IN
                                      ('pending', 'delivering', 'delivered', 'dead', 'superseded', 'cancelled')),
    -- attempts made so far (a claim counts one)
    attempts         integer      NOT NULL DEFAULT 0,
    next_attempt_at  timestamptz  NOT NULL DEFAULT now(),
    -- while 'delivering': the claim's lease; an expired lease (a crashed instance) is claimed again
    lease_until      timestamptz,
    last_status      integer,
    last_error       text,
    created_at       timestamptz  NOT NULL DEFAULT now(),
    finished_at      timestamptz,
    CONSTRAINT notification_once UNIQUE (event_id, client_id)
);

-- what is due: pending by time, and leases that ran out
CREATE INDEX notifications_due ON notifications (next_attempt_at) WHERE status = 'pending';
CREATE INDEX notifications_leased ON notifications (lease_until) WHERE status = 'delivering';
-- superseding and the per-client, per-sensor order
CREATE INDEX notifications_by_client_sensor ON notifications (client_id, sensor_id, sequence)
    WHERE status IN ('pending', 'delivering');
CREATE INDEX notifications_by_client ON notifications (client_id, created_at);
CREATE INDEX notifications_by_sensor ON notifications (sensor_id, created_at);
CREATE INDEX notifications_dead ON notifications (client_id) WHERE status = 'dead';

-- Every delivery attempt, for the API and for history.
CREATE TABLE delivery_attempts (
    id               bigserial    PRIMARY KEY,
    notification_id  uuid         NOT NULL REFERENCES notifications (id),
    client_id        uuid         NOT NULL,
    sensor_id        varchar(16)  NOT NULL,
    event_type       text         NOT NULL,
    attempt          integer      NOT NULL,
    status_code      integer,
    error            text,
    duration_ms      integer      NOT NULL,
    attempted_at     timestamptz  NOT NULL
);

CREATE INDEX delivery_attempts_by_notification ON delivery_attempts (notification_id, attempt);
