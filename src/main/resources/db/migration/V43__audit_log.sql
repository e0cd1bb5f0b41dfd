-- Who changed what, when, from where, and how it ended: every change through the API, the console, the portal,
-- Jolokia (Hawtio) and the routes directory, refused attempts included. Append-only for the service: no operation
-- of the API changes or deletes a row; retention (lockwatch.audit.retention) removes the oldest. An update is refused
-- by the database itself, whoever asks.
CREATE TABLE audit_log (
    id             uuid         PRIMARY KEY,
    at             timestamptz  NOT NULL,
    -- the token's, key's or device's name; 'anonymous' when no valid credential was presented
    actor          text         NOT NULL,
    actor_kind     text         NOT NULL,
    -- the client a client key (or portal session) belongs to
    actor_client   uuid,
    -- the contract's operationId, or jolokia.exec / jolokia.write, or routes.reloaded
    operation      text         NOT NULL,
    method         text,
    -- what it was done to, e.g. clients/8f0c..., sensors/door1, an MBean's name, a route file
    resource       text         NOT NULL,
    -- the request's fields, its secrets replaced by "[redacted]"
    details        jsonb,
    status         integer,
    -- succeeded (2xx), refused (401, 403), rejected (another 4xx), failed (5xx)
    outcome        text         NOT NULL,
    address        text,
    user_agent     text,
    correlation_id text
);
CREATE INDEX audit_log_by_time ON audit_log (at DESC, id DESC);
CREATE INDEX audit_log_by_resource ON audit_log (resource text_pattern_ops, at DESC);
CREATE INDEX audit_log_by_actor ON audit_log (actor, at DESC);

CREATE FUNCTION audit_log_is_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the audit log is append-only: rows are not updated';
END $$;

CREATE TRIGGER audit_log_is_append_only
    BEFORE UPDATE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_log_is_append_only();
