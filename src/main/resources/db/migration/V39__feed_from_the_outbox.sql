-- The pull feed reads each client's own rows of the outbox (issue 39): its notifications, with their event's place
-- (V36) copied, through an index by client and place. A read then costs its page, not a scan of every client's
-- events since the cursor (the first design: 6 ms of PostgreSQL per read with 1,000 clients pulling). A pull client's
-- rows are 'pulled': made like any other client's, with its filters, never posted, finished at once and kept as long
-- as finished notifications are. A replayed notification is an old event sent again: not in the feed.
ALTER TABLE notifications
    ADD COLUMN feed_tx xid8,
    DROP CONSTRAINT notification_status,
    ADD CONSTRAINT notification_status CHECK (status IN
        ('pending', 'delivering', 'delivered', 'dead', 'superseded', 'cancelled', 'pulled'));

CREATE INDEX notifications_feed ON notifications (client_id, feed_tx, event_id) WHERE feed_tx IS NOT NULL AND NOT replayed;

DROP INDEX notifications_finished;
CREATE INDEX notifications_finished ON notifications (finished_at)
    WHERE status IN ('delivered', 'dead', 'superseded', 'cancelled', 'pulled');
