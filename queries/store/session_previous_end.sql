-- When the previous session of this cluster stopped watching.
SELECT MAX(COALESCE(stopped, heartbeat)) FROM recorder_sessions
WHERE cluster_id = :cluster AND id <> :own
