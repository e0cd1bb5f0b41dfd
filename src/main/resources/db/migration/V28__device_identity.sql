-- Device identity: who may report for a sensor. A sensor may hold credentials of its own (its login is 'sensor.' and
-- its id); a gateway holds them for a list of its sensors (its login is 'gateway.' and its id). The prefixes keep
-- device logins apart from each other and from the broker's own users.

CREATE TABLE gateways (
    id          text         PRIMARY KEY
                CONSTRAINT gateway_id_form CHECK (id ~ '^[0-9A-Za-z][0-9A-Za-z_-]{0,63}$'),
    description text         CONSTRAINT gateway_description_length CHECK (char_length(description) <= 500),
    created_at  timestamptz  NOT NULL DEFAULT now(),
    updated_at  timestamptz  NOT NULL DEFAULT now()
);

-- A sensor may belong to several gateways (two gateways in reach of one door, for instance).
CREATE TABLE gateway_sensors (
    gateway_id  text         NOT NULL REFERENCES gateways (id) ON DELETE CASCADE,
    sensor_id   varchar(16)  NOT NULL REFERENCES sensors (id) ON DELETE CASCADE,
    PRIMARY KEY (gateway_id, sensor_id)
);
CREATE INDEX gateway_sensors_by_sensor ON gateway_sensors (sensor_id);

CREATE TABLE device_credentials (
    id          uuid         PRIMARY KEY DEFAULT gen_random_uuid(),
    -- what the device logs in as
    login       text         NOT NULL,
    sensor_id   varchar(16)  REFERENCES sensors (id) ON DELETE CASCADE,
    gateway_id  text         REFERENCES gateways (id) ON DELETE CASCADE,
    -- a salted hash in Spring Security's form ({id}…); the secret itself is shown once, at creation, and kept nowhere
    secret_hash text         NOT NULL,
    created_at  timestamptz  NOT NULL DEFAULT now(),
    -- set when a newer credential replaced it: the end of its grace
    expires_at  timestamptz,
    revoked_at  timestamptz,
    CONSTRAINT device_credential_holder CHECK ((sensor_id IS NULL) <> (gateway_id IS NULL)),
    CONSTRAINT device_credential_login CHECK (login = coalesce('sensor.' || sensor_id, 'gateway.' || gateway_id))
);
CREATE INDEX device_credentials_by_login ON device_credentials (login);
