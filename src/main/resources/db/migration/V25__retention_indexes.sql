-- Retention (issue 36): what is older than its retention is removed in batches, each found through an index so that
-- a batch reads what it removes and little else.
--   notifications that have finished (delivered, dead, superseded, cancelled), oldest finished first;
--   events by the notification that names them: an event is kept while a notification does (the foreign key), and
--   removing one checks that through this index rather than by reading every notification;
--   readings of PostgreSQL's history by the time they were received.
-- Built concurrently, like V8 and V21, so that ingest and delivery go on writing meanwhile.
DROP INDEX CONCURRENTLY IF EXISTS notifications_finished;
CREATE INDEX CONCURRENTLY notifications_finished ON notifications (finished_at)
    WHERE status IN ('delivered', 'dead', 'superseded', 'cancelled');
DROP INDEX CONCURRENTLY IF EXISTS notifications_by_event;
CREATE INDEX CONCURRENTLY notifications_by_event ON notifications (event_id);
DROP INDEX CONCURRENTLY IF EXISTS reading_history_received;
CREATE INDEX CONCURRENTLY reading_history_received ON reading_history (received_at);
