-- Superseding asks whether a newer notification of the same client and sensor exists, whatever its status: one
-- already delivered while an older attempt was in flight supersedes that attempt too. V3's index of that order
-- holds only pending and delivering rows, so the question fell back to scanning the sensor's whole history of
-- notifications (by notifications_by_sensor), on every failed attempt and every notification a claim puts back.
-- With this index it is one probe.
--
-- Built concurrently, so that ingest and delivery go on writing while it is built on a large table (Flyway runs a
-- script of only such statements outside a transaction, and takes its own lock without one: application.yaml). A
-- build that was interrupted (a crash mid-way) leaves an invalid index and no record of this migration, so it is
-- dropped first and built again.
DROP INDEX CONCURRENTLY IF EXISTS notifications_newer;
CREATE INDEX CONCURRENTLY notifications_newer ON notifications (client_id, sensor_id, sequence);
