-- What each device last said of itself beside its door (optional fields of the v1 reading): battery, tamper switch
-- and radio signal, each with the measured time of the reading that said it. Written only by readings applied to
-- their sensor, so never older than the sensor's newest reading; gone with the sensor, so that a sensor deleted and
-- registered again starts with no health of its predecessor's.
CREATE TABLE sensor_health (
    sensor_id  varchar(16)  PRIMARY KEY REFERENCES sensors (id) ON DELETE CASCADE,
    battery    real         CONSTRAINT sensor_health_battery CHECK (battery BETWEEN 0 AND 100),
    battery_at timestamptz,
    tamper     boolean,
    tamper_at  timestamptz,
    rssi       smallint     CONSTRAINT sensor_health_rssi CHECK (rssi BETWEEN -200 AND 0),
    snr        real         CONSTRAINT sensor_health_snr CHECK (snr BETWEEN -50 AND 50),
    signal_at  timestamptz
);
