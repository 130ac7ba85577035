INSERT INTO recorder_sessions (cluster_id, host, pid, version, started, heartbeat, mode)
VALUES (:cluster, :host, :pid, :version, :now, :now, :mode)
