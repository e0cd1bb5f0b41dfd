-- A client's delivery statistics read its attempts of the last hour and day. Built concurrently, like V8, so that
-- delivery goes on writing meanwhile; an interrupted build leaves an invalid index, dropped first.
DROP INDEX CONCURRENTLY IF EXISTS delivery_attempts_by_client;
CREATE INDEX CONCURRENTLY delivery_attempts_by_client ON delivery_attempts (client_id, attempted_at);
