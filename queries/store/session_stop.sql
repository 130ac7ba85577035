UPDATE recorder_sessions SET heartbeat = :now, stopped = :now WHERE id = :id
