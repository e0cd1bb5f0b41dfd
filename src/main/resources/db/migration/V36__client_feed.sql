-- The pull feed (issue 39): a client reads its events in order after a cursor, from sensor_events itself.
--
-- An event's place in the feed is (feed_tx, id). feed_tx is the id of the transaction that recorded it, or its
-- sensor's previous event's place if that is later: a transaction that took its id before another and then waited
-- for that one's lock on the sensor would otherwise sort the sensor's newer event before the older. The feed serves
-- only events whose feed_tx is below the oldest transaction still running: every transaction that may still commit
-- an event has an id at least that, and so sorts after everything served. Events recorded before this migration
-- have none and are not in the feed.
ALTER TABLE sensor_events ADD COLUMN feed_tx xid8;

CREATE FUNCTION sensor_event_feed_place() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.feed_tx := greatest(pg_current_xact_id(),
        (SELECT p.feed_tx FROM sensor_events p
          WHERE p.sensor_id = NEW.sensor_id AND p.sequence < NEW.sequence
          ORDER BY p.sequence DESC LIMIT 1));
    RETURN NEW;
END
$$;

CREATE TRIGGER sensor_event_feed_place BEFORE INSERT ON sensor_events
    FOR EACH ROW EXECUTE FUNCTION sensor_event_feed_place();

CREATE INDEX sensor_events_feed ON sensor_events (feed_tx, id);

-- the escalation steps sent to a client are in its feed too, linked to the sensor or not
CREATE INDEX alarm_escalations_sent_to ON alarm_escalations (client_id, event_id) WHERE event_id IS NOT NULL;
