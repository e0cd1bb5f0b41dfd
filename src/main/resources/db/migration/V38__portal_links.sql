-- The client portal (issue 39): the operator opens it for a client with a link that is good once, for a short time.
-- Exchanged, it becomes a session: a client key of the client's that expires (client_keys.created_by names the link).
CREATE TABLE portal_links (
    id          uuid         PRIMARY KEY DEFAULT gen_random_uuid(),
    client_id   uuid         NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    role        text         NOT NULL CONSTRAINT portal_link_role CHECK (role IN ('client-read', 'client-admin')),
    -- SHA-256 of the link's secret, hex (256 random bits, as a key's); the link itself is shown once
    secret_hash text         NOT NULL,
    created_at  timestamptz  NOT NULL DEFAULT now(),
    created_by  text         NOT NULL,
    expires_at  timestamptz  NOT NULL,
    used_at     timestamptz,
    session_key_id uuid      REFERENCES client_keys (id) ON DELETE SET NULL
);
CREATE INDEX portal_links_by_client ON portal_links (client_id, created_at);
