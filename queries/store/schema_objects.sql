-- How many schema objects (tables, indexes, views, triggers) the file holds: 0 for a new file.
SELECT COUNT(*) FROM sqlite_schema
