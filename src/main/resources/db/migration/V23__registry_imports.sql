-- Every registry import: what it is at, and what it did. A large file is applied by a job after its 202; a small
-- one before its 200. Both are kept, so an operator can see who changed the registry from a file, and when.
CREATE TABLE registry_imports (
    id           uuid         PRIMARY KEY,
    -- staging: its rows are being read; applying: being merged; done, refused or failed: finished
    state        text         NOT NULL
                              CONSTRAINT registry_import_state CHECK (state IN ('staging', 'applying', 'done', 'refused', 'failed')),
    rows         integer      NOT NULL DEFAULT 0,
    -- what it is doing now, in words, while it runs
    step         text,
    -- its counts (sensors, clients, links), once done
    outcome      jsonb,
    error        text,
    created_at   timestamptz  NOT NULL DEFAULT now(),
    -- the instance running it says it still is; one that stopped saying so is reported failed
    heartbeat_at timestamptz  NOT NULL DEFAULT now(),
    finished_at  timestamptz
);
CREATE INDEX registry_imports_recent ON registry_imports (created_at DESC);

-- A file's rows between their arrival (COPY, as they are read) and their merge (set-wise), then deleted. Unlogged: a
-- crash loses only rows of imports not yet applied, and those imports are then reported failed. No index: it holds
-- one import's rows at a time, mostly, each read whole by the merge, and an index would slow the COPY and the delete.
CREATE UNLOGGED TABLE registry_import_rows (
    import_id                 uuid     NOT NULL,
    row_no                    integer  NOT NULL,
    sensor_id                 text     NOT NULL,
    address                   text     NOT NULL,
    heartbeat_timeout_seconds integer,
    open_alarm_seconds        integer,
    client_name               text,
    client_url                text
) WITH (autovacuum_enabled = false);
-- emptied by TRUNCATE once an import is done (RegistryFile.discard), which autovacuum's lock would make wait; its
-- statistics are taken by the import itself once its rows are in (ANALYZE), so that its checks are planned for them
