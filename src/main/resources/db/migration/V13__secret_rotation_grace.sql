-- A rotated secret keeps signing, beside the new one, until previous_secret_until, so that a client can switch
-- its verification over without missing a webhook (Standard Webhooks: several space-separated signatures).
ALTER TABLE clients
    ADD COLUMN previous_secret       text
        CONSTRAINT client_previous_secret_format CHECK (previous_secret LIKE 'whsec\_%'),
    ADD COLUMN previous_secret_until timestamptz;
