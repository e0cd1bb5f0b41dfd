-- Webhook secrets are kept sealed (AES-256-GCM, 'aesgcm:<key id>:<base64>'); the service seals the rows written
-- before at its start (io.lockwatch.secrets.SecretsAtRest), so both forms are allowed.
ALTER TABLE clients
    DROP CONSTRAINT client_secret_format,
    ADD CONSTRAINT client_secret_format
        CHECK (webhook_secret LIKE 'whsec\_%' OR webhook_secret LIKE 'aesgcm:%'),
    DROP CONSTRAINT client_previous_secret_format,
    ADD CONSTRAINT client_previous_secret_format
        CHECK (previous_secret LIKE 'whsec\_%' OR previous_secret LIKE 'aesgcm:%');
