-- Why a notification was superseded, for the operator and the client: its client takes only the latest state
-- (latest_state), or its queue collapsed behind an endpoint that could not take it then: the client was paused
-- (paused), its endpoint failing without a success (failing), or the queue's head failed and waited for a
-- retry (retrying). Older rows: unknown (NULL).
ALTER TABLE notifications ADD COLUMN superseded_reason text
    CONSTRAINT notification_superseded_reason
        CHECK (superseded_reason IN ('latest_state', 'paused', 'failing', 'retrying'));
