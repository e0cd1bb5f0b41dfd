-- The registry file names a sensor's gateways and whether it has a credential of its own. Both are read per sensor,
-- like its address: null leaves what the registry holds.
ALTER TABLE registry_import_rows
    -- gateway ids separated by spaces, or '-' for none
    ADD COLUMN gateways   text,
    -- 'live': it has a live credential (one is made if it has none); 'none': its credentials are revoked
    ADD COLUMN credential text;

-- The credentials an import makes, between the answer that shows their secrets (once) and the merge that stores
-- them: the hashes only, never a secret. Unlogged like the rows: a crash fails the import, and its secrets with it.
CREATE UNLOGGED TABLE registry_import_credentials (
    import_id     uuid         NOT NULL,
    credential_id uuid         NOT NULL,
    sensor_id     text         NOT NULL,
    secret_hash   text         NOT NULL
) WITH (autovacuum_enabled = false);
