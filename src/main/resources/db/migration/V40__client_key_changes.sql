-- What changed about which client key, and when: revoked, its expiry set, or deleted (with its client). Every
-- instance takes a key it proved lately without asking the database on every request, and looks here every second
-- to forget the ones that changed, so that a key revoked through one instance is refused by all within a second.
-- Written by a trigger, so that no way of changing a key (the API, a client's deletion, an operator's SQL) is
-- missed; rows older than an hour are of no use to anyone and are deleted by the instances' look.
CREATE TABLE client_key_changes (
    key_id     uuid         NOT NULL,
    changed_at timestamptz  NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX client_key_changes_by_time ON client_key_changes (changed_at);

CREATE FUNCTION client_key_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO client_key_changes (key_id) VALUES (OLD.id);
    RETURN NULL;
END $$;

CREATE TRIGGER client_key_changed
    AFTER UPDATE OF revoked_at, expires_at OR DELETE ON client_keys
    FOR EACH ROW EXECUTE FUNCTION client_key_changed();
