-- Delivery v2. Per client: how undelivered events are kept (every_event: each one, in order, collapsed only behind
-- an endpoint that cannot take them; latest_state: a newer event supersedes the older undelivered ones at once),
-- which event types it is sent (null: every type, present and future), and whether it is paused (by an operator,
-- by a 410 Gone, or after failing for too long), and since when its endpoint has failed without a success.
ALTER TABLE clients
    ADD COLUMN delivery_mode text NOT NULL DEFAULT 'every_event'
        CONSTRAINT client_delivery_mode CHECK (delivery_mode IN ('every_event', 'latest_state')),
    ADD COLUMN event_types   text[],
    ADD COLUMN enabled       boolean NOT NULL DEFAULT true,
    ADD COLUMN paused_reason text,
    ADD COLUMN paused_at     timestamptz,
    ADD COLUMN failing_since timestamptz;

-- which notification made this one superseded
ALTER TABLE notifications ADD COLUMN superseded_by uuid;
