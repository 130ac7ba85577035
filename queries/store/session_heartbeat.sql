UPDATE recorder_sessions SET heartbeat = :now WHERE id = :id
