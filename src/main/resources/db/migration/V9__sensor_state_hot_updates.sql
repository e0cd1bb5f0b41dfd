-- Every applied reading rewrites its sensor's row in sensor_state. With an index on a column that every reading
-- changes (V5's lost_deadline), each rewrite also inserts into every index of the table (the primary key, V5's two).
-- Without one, PostgreSQL rewrites the row in place on its page (a HOT update) and touches no index: in a test on
-- 100,000 sensors, a batch of 1,000 took 10 ms instead of 25.
--
-- The heartbeat scan, the one reader of the deadline, reads the table instead (every 10 s by default: ~10 ms per
-- 100,000 sensors). The count of lost sensors keeps an index that holds the lost ones only, which an online sensor's
-- update never touches. Built concurrently, as V8: ingest goes on meanwhile; an interrupted build is built again.
DROP INDEX CONCURRENTLY IF EXISTS sensor_state_lost;
CREATE INDEX CONCURRENTLY sensor_state_lost ON sensor_state (sensor_id) WHERE connectivity = 'lost';
DROP INDEX CONCURRENTLY IF EXISTS sensor_state_online_deadline;
DROP INDEX CONCURRENTLY IF EXISTS sensor_state_by_connectivity;
