-- The registry: sensors, clients, and which client watches which sensor.

CREATE TABLE sensors (
    id                        varchar(16)  PRIMARY KEY
                              CONSTRAINT sensor_id_alphanumeric CHECK (id ~ '^[0-9A-Za-z]{1,16}$'),
    address                   text         NOT NULL
                              CONSTRAINT sensor_address_length CHECK (char_length(address) BETWEEN 1 AND 500),
    -- null: the global default (lockwatch.heartbeat.timeout)
    heartbeat_timeout_seconds integer
                              CONSTRAINT sensor_timeout_positive CHECK (heartbeat_timeout_seconds > 0),
    created_at                timestamptz  NOT NULL DEFAULT now(),
    updated_at                timestamptz  NOT NULL DEFAULT now()
);

CREATE TABLE clients (
    id              uuid         PRIMARY KEY DEFAULT gen_random_uuid(),
    name            text         NOT NULL
                    CONSTRAINT client_name_length CHECK (char_length(name) BETWEEN 1 AND 200),
    url             text         NOT NULL
                    CONSTRAINT client_url_http CHECK (url ~* '^https?://' AND char_length(url) <= 2048),
    -- Standard Webhooks signing secret, 'whsec_' + base64; needed in clear to sign, never returned but on
    -- create and rotate
    webhook_secret  text         NOT NULL
                    CONSTRAINT client_secret_format CHECK (webhook_secret LIKE 'whsec\_%'),
    created_at      timestamptz  NOT NULL DEFAULT now(),
    updated_at      timestamptz  NOT NULL DEFAULT now()
);

CREATE TABLE client_sensors (
    client_id   uuid         NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    sensor_id   varchar(16)  NOT NULL REFERENCES sensors (id) ON DELETE CASCADE,
    created_at  timestamptz  NOT NULL DEFAULT now(),
    PRIMARY KEY (client_id, sensor_id)
);

-- fan-out reads "all clients of a sensor"
CREATE INDEX client_sensors_by_sensor ON client_sensors (sensor_id, client_id);
