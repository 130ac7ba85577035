INSERT INTO temp.st_sessions (cluster, host, pid, version, started, heartbeat, stopped, mode, ver)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
