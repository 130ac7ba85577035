SELECT c.uid, s.host, s.pid, s.version, s.started, s.heartbeat, s.stopped, s.mode, s.heartbeat
FROM temp.ship_keys k
JOIN recorder_sessions s ON s.id = k.a
JOIN clusters c ON c.id = s.cluster_id
WHERE k.tbl = 8
