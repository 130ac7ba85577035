-- The latest moment the recording knows for one cluster: its last heartbeat,
-- version, occurrence or refused write (an imported audit log).
SELECT max(
    coalesce((SELECT max(heartbeat) FROM recorder_sessions WHERE cluster_id = :cluster), 0),
    coalesce((SELECT max(v.at) FROM versions v JOIN objects o ON o.id = v.object_id WHERE o.cluster_id = :cluster), 0),
    coalesce((SELECT max(last) FROM events WHERE cluster_id = :cluster), 0),
    coalesce((SELECT max(at) FROM refusals WHERE cluster_id = :cluster), 0))
