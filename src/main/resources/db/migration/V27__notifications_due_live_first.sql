-- Each lane's due notifications, live before replayed (V26), each oldest due first: the claim reads a lane's live range,
-- then, if it has room left, its replayed range, both by index. The skip scan that finds the clients with pending
-- notifications leads with client_id, as before. It replaces V21's index.
--
-- Built concurrently, like V8 and V21, so that ingest and delivery go on writing while it is built on a large table; an
-- interrupted build leaves an invalid index and no record of this migration, so it is dropped first and built again.
DROP INDEX CONCURRENTLY IF EXISTS notifications_due_live_first;
CREATE INDEX CONCURRENTLY notifications_due_live_first ON notifications (client_id, replayed, next_attempt_at)
    WHERE status = 'pending';
DROP INDEX CONCURRENTLY IF EXISTS notifications_due_by_client;
