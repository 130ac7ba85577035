-- Imports of kube-apiserver audit logs (docs/schema.md, "Imports of audit logs").

-- The object's resourceVersion of each version: what an audit entry of the
-- same write is matched by (NULL in versions stored before this migration).
-- NB: no index of its own: an object's versions are found by versions_by_object,
-- and an index would cost the recorder a page per commit. (A partial index was
-- worse: a statement whose bound value picks a partial index is prepared again
-- at every step.)
ALTER TABLE versions ADD COLUMN resource_version TEXT;

-- Every audit entry an import took (writes only; reads store nothing): a
-- file imported twice, or two files that overlap, store each entry once.
CREATE TABLE audit_ids (
    cluster_id  INTEGER NOT NULL REFERENCES clusters (id),
    audit_id    TEXT NOT NULL,
    at          INTEGER NOT NULL,
    PRIMARY KEY (cluster_id, audit_id)
) WITHOUT ROWID;

-- Writes the apiserver refused (4xx/5xx): a controller getting 403 or 409 in
-- a loop is the cause of many stuck reconciles.
CREATE TABLE refusals (
    id           INTEGER PRIMARY KEY,
    cluster_id   INTEGER NOT NULL REFERENCES clusters (id),
    at           INTEGER NOT NULL,
    verb         TEXT NOT NULL,
    user         TEXT NOT NULL,      -- the writer: user (field manager or user agent)
    api_group    TEXT NOT NULL,
    resource     TEXT NOT NULL,      -- plural, e.g. 'deployments'
    subresource  TEXT NOT NULL,
    namespace    TEXT NOT NULL,
    name         TEXT NOT NULL,
    code         INTEGER NOT NULL,   -- HTTP status
    reason       TEXT NOT NULL,      -- Forbidden, Conflict, ...
    message      TEXT NOT NULL
);
CREATE INDEX refusals_by_time ON refusals (cluster_id, at);
CREATE INDEX refusals_by_object ON refusals (cluster_id, resource, namespace, name, at);

-- What each import of an audit log covered, first entry to last: the time
-- outside every span is a gap of the imports (`gaps.reason` 'not-imported').
CREATE TABLE import_spans (
    id          INTEGER PRIMARY KEY,
    cluster_id  INTEGER NOT NULL REFERENCES clusters (id),
    source      TEXT NOT NULL,       -- the file, as given to import
    start       INTEGER NOT NULL,
    finish      INTEGER NOT NULL
);
CREATE INDEX import_spans_by_cluster ON import_spans (cluster_id, start);
