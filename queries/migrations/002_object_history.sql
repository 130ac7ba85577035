-- Migration 2: object history. Compact versions of watched objects, who wrote
-- each, per-minute update counters, owner/node/claim relations, and the
-- resource types discovery found.

-- An object row exists for everything Events name; these columns are filled
-- for objects the recorder watches itself.
ALTER TABLE objects ADD COLUMN created INTEGER;       -- metadata.creationTimestamp
ALTER TABLE objects ADD COLUMN first_seen INTEGER;    -- first seen by an object watch; NULL: known from Events only
ALTER TABLE objects ADD COLUMN deleted INTEGER;       -- when the watch saw it deleted; see deleted_after
-- Set when the object vanished while the recorder was blind: it was deleted
-- some time after deleted_after and no later than deleted.
ALTER TABLE objects ADD COLUMN deleted_after INTEGER;
CREATE INDEX objects_by_uid ON objects (uid);

-- One row per meaningful change of an object. state is the compact state as
-- JSON (see docs/schema.md), interned: an object flipping between two states
-- stores each text once. writers names the field managers whose managedFields
-- entry changed, comma separated. seen: 0 listed, 1 added, 2 modified, 3 deleted.
CREATE TABLE versions (
    id         INTEGER PRIMARY KEY,
    object_id  INTEGER NOT NULL REFERENCES objects (id),
    at         INTEGER NOT NULL,
    state      INTEGER NOT NULL REFERENCES strings (id),
    writers    INTEGER NOT NULL REFERENCES strings (id),
    seen       INTEGER NOT NULL
);
CREATE INDEX versions_by_object ON versions (object_id, at);

-- Every update (resourceVersion change) an object watch saw, per object, minute
-- and writer, meaningful or not: a hot loop shows here without bloating versions.
CREATE TABLE update_counts (
    object_id  INTEGER NOT NULL REFERENCES objects (id),
    minute     INTEGER NOT NULL,  -- epoch ms / 60000
    manager    INTEGER NOT NULL REFERENCES strings (id),
    updates    INTEGER NOT NULL,
    versions   INTEGER NOT NULL,  -- of those, how many made a new version
    generation INTEGER NOT NULL,  -- of those, how many moved metadata.generation
    PRIMARY KEY (object_id, minute, manager)
) WITHOUT ROWID;

-- Edges between objects as they were observed: 'owner' (ownerReferences),
-- 'node' (Pod -> Node) and 'claim' (Pod -> PersistentVolumeClaim). The parent
-- is named, not joined, so an edge survives the parent's deletion or absence.
CREATE TABLE relations (
    child_id          INTEGER NOT NULL REFERENCES objects (id),
    rel               TEXT NOT NULL,
    parent_kind       INTEGER NOT NULL REFERENCES strings (id),
    parent_namespace  INTEGER NOT NULL REFERENCES strings (id),
    parent_name       INTEGER NOT NULL REFERENCES strings (id),
    parent_uid        TEXT NOT NULL,   -- '' for Pod -> Node and Pod -> PVC
    since             INTEGER NOT NULL,
    PRIMARY KEY (child_id, rel, parent_kind, parent_name, parent_uid)
) WITHOUT ROWID;
CREATE INDEX relations_by_parent ON relations (parent_name, parent_kind);

-- Resource types the cluster served when the recorder last started, for
-- resolving names such as `deploy/web` or a custom resource's short name offline.
CREATE TABLE resource_types (
    cluster_id   INTEGER NOT NULL REFERENCES clusters (id),
    api_version  TEXT NOT NULL,
    plural       TEXT NOT NULL,
    kind         TEXT NOT NULL,
    singular     TEXT NOT NULL,
    short_names  TEXT NOT NULL,       -- comma separated
    namespaced   INTEGER NOT NULL,
    PRIMARY KEY (cluster_id, api_version, plural)
) WITHOUT ROWID;
