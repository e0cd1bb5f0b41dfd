-- A client that pulls its feed (issue 39) instead of being posted to: delivery_mode 'pull', no URL needed, and no
-- notification is made for it (no POSTs).
ALTER TABLE clients
    ALTER COLUMN url DROP NOT NULL,
    DROP CONSTRAINT client_delivery_mode,
    ADD CONSTRAINT client_delivery_mode CHECK (delivery_mode IN ('every_event', 'latest_state', 'pull')),
    ADD CONSTRAINT client_posted_to_its_url CHECK (url IS NOT NULL OR delivery_mode = 'pull');
