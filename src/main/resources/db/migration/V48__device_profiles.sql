-- A sensor that speaks its network's own messages (issue 57): its profile names the adapter that takes them and how
-- they say the door's state, and device_id is its id on that network (a Zigbee2MQTT friendly name, ...), by which
-- the adapter finds it. Only a sensor that names both is ever reported for by an adapter.
ALTER TABLE sensors
    ADD COLUMN profile text CONSTRAINT sensor_profile CHECK (char_length(profile) BETWEEN 1 AND 64),
    ADD COLUMN device_id text CONSTRAINT sensor_device_id CHECK (char_length(device_id) BETWEEN 1 AND 200),
    ADD CONSTRAINT sensor_profile_and_device_id CHECK ((profile IS NULL) = (device_id IS NULL));

-- one sensor per device, whatever its profile: two profiles of one adapter would otherwise both claim its messages
CREATE UNIQUE INDEX sensors_by_device ON sensors (device_id) WHERE device_id IS NOT NULL;
