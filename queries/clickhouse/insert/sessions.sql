INSERT INTO sessions (cluster, host, pid, version, started, heartbeat, stopped, mode, ver) FORMAT RowBinary
