-- Sessions that never recorded a stop, of the cluster with this uid: read
-- before a recorder takes the write lock (another may hold it a minute).
SELECT s.id, s.host, s.pid, s.heartbeat, s.commit_every_ms
FROM recorder_sessions s JOIN clusters c ON c.id = s.cluster_id
WHERE c.uid = :uid AND s.stopped IS NULL
