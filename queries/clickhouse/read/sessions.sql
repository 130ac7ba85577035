SELECT cluster, host, pid, version, started, heartbeat, stopped, mode, ver
FROM sessions FINAL
WHERE has(?, cluster)
