-- Whether the schema is there: the newest table of it (latest.sql), read for nothing.
SELECT 1 FROM latest_versions LIMIT 0
