-- A session that died (kill -9, power loss) stopped at its last heartbeat.
UPDATE recorder_sessions SET stopped = heartbeat WHERE id = :id
