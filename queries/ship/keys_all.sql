-- Every row of the recording as an outbox key (tbl, a, b): what a new destination
-- is sent first, and all that `kubectl diag ship` sends. The codes are
-- src/ship/tables.rs's; `outbox` is the temporary one of `ship` when it exists.
INSERT INTO outbox (tbl, a, b)
SELECT 9, id, 0 FROM clusters
UNION ALL SELECT 10, cluster_id, 0 FROM (SELECT DISTINCT cluster_id FROM resource_types)
UNION ALL SELECT 8, id, 0 FROM recorder_sessions
UNION ALL SELECT 3, id, 0 FROM objects
UNION ALL SELECT 6, child_id, 0 FROM (SELECT DISTINCT child_id FROM relations)
UNION ALL SELECT 4, id, 0 FROM versions
UNION ALL SELECT 5, object_id, minute FROM (SELECT DISTINCT object_id, minute FROM update_counts)
UNION ALL SELECT 2, id, 0 FROM events
UNION ALL SELECT 1, event_id, count FROM occurrences
UNION ALL SELECT 7, id, 0 FROM gaps
UNION ALL SELECT 11, id, 0 FROM type_changes
UNION ALL SELECT 12, id, 0 FROM refusals
UNION ALL SELECT 13, id, 0 FROM import_spans
UNION ALL SELECT 14, cluster_id, 0 FROM (SELECT DISTINCT cluster_id FROM watch_positions)
