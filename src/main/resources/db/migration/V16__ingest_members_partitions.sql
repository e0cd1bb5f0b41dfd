-- Every instance keeps its row in ingest_members, partitioned or not, with the partition count it runs with: at
-- start an instance refuses to consume beside a live one on the unpartitioned queue, or with another count
-- (both would apply one sensor's readings out of order). NULL: a row from before this column.
ALTER TABLE ingest_members ADD COLUMN partitions integer;
