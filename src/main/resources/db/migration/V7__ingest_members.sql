-- The running instances, each renewing its row while it consumes readings: with partitioned readings queues
-- (lockwatch.ingest.partitions > 1) they share the partitions out evenly by this list. A row not renewed for
-- the member timeout is an instance that is gone; its partitions are taken over.
CREATE TABLE ingest_members (
    instance_id  text         PRIMARY KEY,
    started_at   timestamptz  NOT NULL DEFAULT now(),
    seen_at      timestamptz  NOT NULL DEFAULT now()
);
