-- What a cluster's recording covers, for `kubectl diag mcp`'s recordings():
-- the recorder's sessions (first start, last heartbeat) and the imports'
-- spans, each NULL when there are none.
SELECT (SELECT min(started) FROM recorder_sessions WHERE cluster_id = :cluster) AS recorded_from,
       (SELECT max(coalesce(stopped, heartbeat)) FROM recorder_sessions WHERE cluster_id = :cluster) AS recorded_until,
       (SELECT count(*) FROM recorder_sessions WHERE cluster_id = :cluster) AS sessions,
       (SELECT min(start) FROM import_spans WHERE cluster_id = :cluster) AS imported_from,
       (SELECT max(finish) FROM import_spans WHERE cluster_id = :cluster) AS imported_until
