-- Alarms that get answered (issue 40): a severity, and an escalation chain of steps, each sent once to its own
-- client when the alarm is still unacknowledged and active that long after it was raised.

-- a sensor's alarms are raised with its severity (null: major); the alarm keeps the one it was raised with
ALTER TABLE sensors ADD COLUMN open_alarm_severity text
    CONSTRAINT sensor_open_alarm_severity CHECK (open_alarm_severity IN ('critical', 'major', 'minor', 'warning'));
ALTER TABLE alarms ADD COLUMN severity text NOT NULL DEFAULT 'major'
    CONSTRAINT alarm_severity CHECK (severity IN ('critical', 'major', 'minor', 'warning'));

-- a sensor's chain: step 1, 2, … each after its delay from the alarm's raising (later steps after longer delays)
CREATE TABLE sensor_escalation_steps (
    sensor_id     varchar(16)  NOT NULL REFERENCES sensors (id) ON DELETE CASCADE,
    step          integer      NOT NULL CONSTRAINT escalation_step_number CHECK (step BETWEEN 1 AND 10),
    after_seconds integer      NOT NULL CONSTRAINT escalation_step_after CHECK (after_seconds BETWEEN 1 AND 2592000),
    client_id     uuid         NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    PRIMARY KEY (sensor_id, step)
);
CREATE INDEX sensor_escalation_steps_by_client ON sensor_escalation_steps (client_id);

-- an alarm's chain as it was when the alarm was raised: a later change of the sensor's chain is for later alarms.
-- A step is sent once (sent_at, its event), or stopped by the acknowledgement or the clearing that came first.
CREATE TABLE alarm_escalations (
    alarm_id      uuid         NOT NULL REFERENCES alarms (id) ON DELETE CASCADE,
    step          integer      NOT NULL,
    after_seconds integer      NOT NULL,
    client_id     uuid         NOT NULL,
    due_at        timestamptz  NOT NULL,
    sent_at       timestamptz,
    event_id      bigint,
    stopped_at    timestamptz,
    PRIMARY KEY (alarm_id, step)
);
-- the scan reads only the steps still to send, by when they are due
CREATE INDEX alarm_escalations_due ON alarm_escalations (due_at) WHERE sent_at IS NULL AND stopped_at IS NULL;

ALTER TABLE sensor_events
    ADD COLUMN escalation_step integer,
    DROP CONSTRAINT sensor_event_type,
    ADD CONSTRAINT sensor_event_type CHECK (type IN ('sensor.state_changed', 'sensor.connection_lost',
        'sensor.connection_restored', 'sensor.alarm_raised', 'sensor.alarm_cleared', 'sensor.alarm_escalated'));

-- a client hears the alarms of these severities (null: all); its other events as its event_types say
ALTER TABLE clients ADD COLUMN alarm_severities text[]
    CONSTRAINT client_alarm_severities CHECK (alarm_severities <@ ARRAY['critical', 'major', 'minor', 'warning']);
