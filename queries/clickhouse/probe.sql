-- Whether the schema is there: the newest table of it, read for nothing.
SELECT 1 FROM import_spans LIMIT 0
