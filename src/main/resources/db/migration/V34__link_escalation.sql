-- Escalation per client link (issue 40): a client linked to a sensor may have its own chain for that sensor's alarms,
-- beside the sensor's (the security company's on-call, where the building has the night guard). Each chain's steps
-- are sent on their own; an acknowledgement or a clearing stops every chain of the alarm.
CREATE TABLE link_escalation_steps (
    client_id     uuid         NOT NULL,
    sensor_id     varchar(16)  NOT NULL,
    step          integer      NOT NULL CONSTRAINT link_escalation_step_number CHECK (step BETWEEN 1 AND 10),
    after_seconds integer      NOT NULL CONSTRAINT link_escalation_step_after CHECK (after_seconds BETWEEN 1 AND 2592000),
    to_client_id  uuid         NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    PRIMARY KEY (client_id, sensor_id, step),
    -- the chain is the link's: unlinking removes it
    FOREIGN KEY (client_id, sensor_id) REFERENCES client_sensors (client_id, sensor_id) ON DELETE CASCADE
);
-- raising an alarm reads the chains of its sensor
CREATE INDEX link_escalation_steps_by_sensor ON link_escalation_steps (sensor_id);
CREATE INDEX link_escalation_steps_by_target ON link_escalation_steps (to_client_id);

-- an alarm's step is of the sensor's chain (null) or of a linked client's
ALTER TABLE alarm_escalations
    ADD COLUMN link_client_id uuid,
    DROP CONSTRAINT alarm_escalations_pkey,
    ADD CONSTRAINT alarm_escalation_step UNIQUE NULLS NOT DISTINCT (alarm_id, link_client_id, step);

ALTER TABLE sensor_events ADD COLUMN escalation_link_client_id uuid;
