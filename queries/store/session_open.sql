-- Sessions of this cluster that never recorded a stop: running, or died.
SELECT id, host, pid, heartbeat, commit_every_ms FROM recorder_sessions
WHERE cluster_id = :cluster AND stopped IS NULL AND id <> :own
