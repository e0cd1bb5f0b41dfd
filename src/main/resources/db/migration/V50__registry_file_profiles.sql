-- The registry file names a sensor's device profile and its id on that network (issue 57), read per sensor like its
-- gateways: null leaves them as the registry holds them, a profile of '-' takes them away.
ALTER TABLE registry_import_rows
    ADD COLUMN profile   text,
    ADD COLUMN device_id text;
