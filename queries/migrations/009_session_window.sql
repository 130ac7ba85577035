-- Issue 33: a commit every minute instead of every few seconds.
-- The heartbeat, rewritten by nearly every commit, was also a key of this
-- index: one more page per commit. Only the cluster is looked up by it.
DROP INDEX recorder_sessions_by_cluster;
CREATE INDEX recorder_sessions_by_cluster ON recorder_sessions (cluster_id);
-- How long this session's transactions may stay open (record --commit-every):
-- its heartbeat may be that much older than a per-second one while it lives.
-- 0 for sessions recorded before it was declared.
ALTER TABLE recorder_sessions ADD COLUMN commit_every_ms INTEGER NOT NULL DEFAULT 0;
