-- Issue 48: every write an audit log names is a fact, with its provenance.
-- A write the import cannot make a version of (a Metadata-level entry, which
-- holds no body; a patch of an object the log never showed whole; a session
-- into a Pod: exec, attach, port-forward; an eviction, a binding) is kept as a
-- touch: who, what verb on which object and subresource, when, with which
-- answer, and what the entry tells of the change where it tells something
-- (`spec.replicas -> 0` from a Scale). Stored once by auditID, apart from
-- `audit_ids`: a later import that can make a version of the same write (the
-- whole log, with the patch's base) replaces its touch.
CREATE TABLE touches (
    id           INTEGER PRIMARY KEY,
    cluster_id   INTEGER NOT NULL REFERENCES clusters (id),
    audit_id     TEXT NOT NULL,
    at           INTEGER NOT NULL,
    verb         TEXT NOT NULL,
    user         TEXT NOT NULL,      -- as versions name writers: person [impersonated by …] (tool)
    api_group    TEXT NOT NULL,
    resource     TEXT NOT NULL,      -- plural, e.g. 'deployments'
    subresource  TEXT NOT NULL,
    namespace    TEXT NOT NULL,
    name         TEXT NOT NULL,
    code         INTEGER NOT NULL,   -- HTTP status (0: the entry has none)
    detail       TEXT NOT NULL,      -- what the entry tells of the change; '' when nothing
    why          TEXT NOT NULL       -- 'metadata', 'no-base', 'session', 'subresource'
);
CREATE UNIQUE INDEX touches_by_audit_id ON touches (cluster_id, audit_id);
CREATE INDEX touches_by_name ON touches (cluster_id, name, at);
CREATE INDEX touches_by_time ON touches (cluster_id, at);

-- Who refused a write (or a read): authorization, an admission plugin or
-- policy, validation, the object (a conflict); '' when the entry does not say.
ALTER TABLE refusals ADD COLUMN refused_by TEXT NOT NULL DEFAULT '';
