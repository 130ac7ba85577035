-- Strings nothing refers to any more (every column that holds a string id).
DELETE FROM strings
WHERE id NOT IN (
    SELECT message FROM occurrences
    UNION SELECT namespace FROM events UNION SELECT field_path FROM events
    UNION SELECT reason FROM events UNION SELECT type FROM events
    UNION SELECT action FROM events UNION SELECT controller FROM events
    UNION SELECT instance FROM events UNION SELECT host FROM events
    UNION SELECT kind FROM objects UNION SELECT namespace FROM objects
    UNION SELECT name FROM objects UNION SELECT api_version FROM objects
    UNION SELECT state FROM versions UNION SELECT writers FROM versions
    UNION SELECT diff FROM versions WHERE diff IS NOT NULL
    UNION SELECT manager FROM update_counts
    UNION SELECT field FROM update_counts WHERE field IS NOT NULL
    UNION SELECT parent_kind FROM relations UNION SELECT parent_namespace FROM relations
    UNION SELECT parent_name FROM relations
)
