-- Batched delivery, opt in per client: up to this many of its notifications in one POST, as a JSON array. 1 (every
-- client until it asks) keeps the one-event body. A constant default: no table rewrite.
ALTER TABLE clients ADD COLUMN max_events_per_request integer NOT NULL DEFAULT 1
    CONSTRAINT clients_max_events_per_request_range CHECK (max_events_per_request BETWEEN 1 AND 1000);
