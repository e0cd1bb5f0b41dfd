-- Delivery lanes: each client's due notifications are claimed on their own, oldest due first, so the due order is
-- kept per client rather than across all of them (where one client with a backlog of 100,000 came before every
-- other client's one notification). The same index finds the clients with pending notifications by a skip scan,
-- one probe per client. The index of the one due order across clients served only the claim, and goes.
--
-- Built concurrently, like V8, so that ingest and delivery go on writing while it is built on a large table; an
-- interrupted build leaves an invalid index and no record of this migration, so it is dropped first and built again.
DROP INDEX CONCURRENTLY IF EXISTS notifications_due_by_client;
CREATE INDEX CONCURRENTLY notifications_due_by_client ON notifications (client_id, next_attempt_at)
    WHERE status = 'pending';
DROP INDEX CONCURRENTLY IF EXISTS notifications_due;
