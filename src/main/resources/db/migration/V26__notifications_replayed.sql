-- A replay or a redelivery asks again for events that were not delivered. They go behind the live head: a sensor's
-- live notifications to a client first, in sequence order, then its replayed ones, in sequence order; and a lane takes
-- its live due work before its replayed work, so that a week of replay does not hold up the door opened now.
-- A constant default: no table rewrite.
ALTER TABLE notifications ADD COLUMN replayed boolean NOT NULL DEFAULT false;
