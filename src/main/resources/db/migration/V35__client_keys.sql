-- Client self-service (issue 39): API keys scoped to one client. With one, the API answers only for that client's
-- own resources: its sensors (linked to it), notifications, alarms and statistics.
CREATE TABLE client_keys (
    id          uuid         PRIMARY KEY DEFAULT gen_random_uuid(),
    client_id   uuid         NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    name        text         NOT NULL CONSTRAINT client_key_name_length CHECK (char_length(name) BETWEEN 1 AND 200),
    -- client-read reads; client-admin also changes the client's own settings and acts on its deliveries and alarms
    role        text         NOT NULL CONSTRAINT client_key_role CHECK (role IN ('client-read', 'client-admin')),
    -- SHA-256 of the secret, hex: the secret is 256 random bits made by the service, so no dictionary holds it and
    -- a fast hash is enough (each API request checks one). The secret itself is shown once, at creation.
    secret_hash text         NOT NULL,
    created_at  timestamptz  NOT NULL DEFAULT now(),
    created_by  text         NOT NULL,
    expires_at  timestamptz,
    revoked_at  timestamptz,
    -- at most once a minute per key: a write per request would be a write per poll
    last_used_at timestamptz
);
CREATE INDEX client_keys_by_client ON client_keys (client_id, created_at);
