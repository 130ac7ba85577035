-- The session declares how long its transactions may stay open.
UPDATE recorder_sessions SET commit_every_ms = :commit_every_ms WHERE id = :id
