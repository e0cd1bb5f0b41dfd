-- The console's search (issue 18): sensors whose id, or address in any case, starts with what the operator typed,
-- among a million, without reading them all. text_pattern_ops: LIKE 'prefix%' whatever the database's collation.
CREATE INDEX sensors_id_prefix ON sensors (id text_pattern_ops);
CREATE INDEX sensors_address_prefix ON sensors (lower(address) text_pattern_ops);
