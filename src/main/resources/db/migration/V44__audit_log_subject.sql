-- A person signed in at the identity provider is named in the audit log by their name and, since names change, by
-- the provider's subject (sub) as well.
ALTER TABLE audit_log ADD COLUMN actor_subject text;
