-- Migration 5: what changed in each spec, and which types were recorded when.

-- The field-level diff of a version's spec against the previous version's
-- (src/specdiff.rs: a JSON array of {p, o, n}), interned: a fight between two
-- values stores each of its two diffs once. NULL: no spec change, or not diffed.
ALTER TABLE versions ADD COLUMN diff INTEGER REFERENCES strings (id);

-- The last diffed document of each live object (its spec; a Node's spec and
-- labels; a ConfigMap's keys with a digest of each value, never the value),
-- which the next change is diffed against. Deleted with the object's life.
CREATE TABLE spec_docs (
    object_id  INTEGER PRIMARY KEY REFERENCES objects (id),
    digest     INTEGER NOT NULL,
    doc        TEXT NOT NULL
);

-- Resource types that appeared (a CRD established, an APIService available)
-- or went (a CRD removed) while a recorder ran: from `at` on, the type is
-- recorded, or no longer is. Types present when a recorder started are not
-- listed here: sessions and positions say when they were recorded.
CREATE TABLE type_changes (
    id           INTEGER PRIMARY KEY,
    cluster_id   INTEGER NOT NULL REFERENCES clusters (id),
    at           INTEGER NOT NULL,
    resource     TEXT NOT NULL,     -- kubectl's full name: plural.group
    api_version  TEXT NOT NULL,
    kind         TEXT NOT NULL,
    change       TEXT NOT NULL      -- 'appeared' or 'removed'
);
CREATE INDEX type_changes_by_time ON type_changes (cluster_id, at);
