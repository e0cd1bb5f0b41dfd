-- Expected-open schedules (issue 40): weekly time ranges, in a time zone, within which a sensor's open door raises
-- no alarm; a door still open when a range ends has its alarm's timer start then.
CREATE TABLE sensor_open_schedules (
    sensor_id  varchar(16)  PRIMARY KEY REFERENCES sensors (id) ON DELETE CASCADE,
    -- an IANA zone id (Europe/Moscow): daylight-saving changes follow its rules
    time_zone  text         NOT NULL,
    -- [{"days": ["mon", …], "from": "08:00", "to": "19:00"}, …]; a range whose "to" is not after its "from" ends the
    -- next day
    ranges     jsonb        NOT NULL,
    updated_at timestamptz  NOT NULL DEFAULT now()
);
