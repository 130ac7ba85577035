-- Migration 1: clusters, interned strings, involved objects, Events and their
-- occurrences, recorder sessions, gaps and watch positions.
-- Times are INTEGER milliseconds since the Unix epoch, UTC.

-- One row per recorded cluster; uid = the uid of its kube-system namespace.
CREATE TABLE clusters (
    id      INTEGER PRIMARY KEY,
    uid     TEXT NOT NULL UNIQUE,
    label   TEXT NOT NULL,          -- the kubeconfig context name, for people
    server  TEXT NOT NULL DEFAULT '',
    added   INTEGER NOT NULL
);

-- Every repeated text (kinds, names, reasons, messages, controllers) once.
-- h is a 64-bit FNV-1a hash of s: an index on h is 8 bytes a row, an index on
-- s would store every message twice.
CREATE TABLE strings (
    id  INTEGER PRIMARY KEY,
    h   INTEGER NOT NULL,
    s   TEXT NOT NULL
);
CREATE INDEX strings_by_hash ON strings (h);

-- Objects that Events are about (and, later, whose history is kept).
CREATE TABLE objects (
    id           INTEGER PRIMARY KEY,
    cluster_id   INTEGER NOT NULL REFERENCES clusters (id),
    kind         INTEGER NOT NULL REFERENCES strings (id),
    namespace    INTEGER NOT NULL REFERENCES strings (id),
    name         INTEGER NOT NULL REFERENCES strings (id),
    uid          TEXT NOT NULL,     -- '' when the reference carried none
    api_version  INTEGER NOT NULL REFERENCES strings (id)
);
CREATE UNIQUE INDEX objects_by_name ON objects (cluster_id, kind, namespace, name, uid);

-- One row per Event object (by uid).
CREATE TABLE events (
    id            INTEGER PRIMARY KEY,
    cluster_id    INTEGER NOT NULL REFERENCES clusters (id),
    uid           BLOB NOT NULL,    -- 16 bytes when the uid is a UUID, else its text
    namespace     INTEGER NOT NULL REFERENCES strings (id),
    -- The Event's own name. client-go names Events `<object name>.<hex nanoseconds>`:
    -- such a name is stored as the INTEGER of its hex part (8 bytes instead of ~40);
    -- any other name as TEXT.
    name          ANY NOT NULL,
    object_id     INTEGER NOT NULL REFERENCES objects (id),
    field_path    INTEGER NOT NULL REFERENCES strings (id),
    reason        INTEGER NOT NULL REFERENCES strings (id),
    type          INTEGER NOT NULL REFERENCES strings (id),
    action        INTEGER NOT NULL REFERENCES strings (id),
    controller    INTEGER NOT NULL REFERENCES strings (id),
    instance      INTEGER NOT NULL REFERENCES strings (id),
    host          INTEGER NOT NULL REFERENCES strings (id),
    related_id    INTEGER REFERENCES objects (id),
    last          INTEGER NOT NULL, -- last time of the highest count stored
    count         INTEGER NOT NULL, -- the highest count stored for this Event
    deleted       INTEGER           -- when the watch saw it deleted (TTL), if it did
);
CREATE UNIQUE INDEX events_by_uid ON events (uid, cluster_id);
CREATE INDEX events_by_object ON events (object_id, last);

-- One row per stored count change of an Event. An occurrence is identified by
-- (event, count). n is how many occurrences the row stands for: 1 normally;
-- more when the count jumped between two observations (3 -> 7 stores one row,
-- count 7, n 4, between the two observation times), never invented rows.
CREATE TABLE occurrences (
    event_id  INTEGER NOT NULL REFERENCES events (id),
    count     INTEGER NOT NULL,
    n         INTEGER NOT NULL,
    first     INTEGER NOT NULL,
    last      INTEGER NOT NULL,
    message   INTEGER NOT NULL REFERENCES strings (id),
    PRIMARY KEY (event_id, count)
) WITHOUT ROWID;
-- NB: no index on occurrence time. Readers go through an object (events_by_object);
-- time-window scans over all occurrences (export --since, retention) read the
-- table, which is cheaper than 18 bytes more on every stored occurrence.

-- Each run of `kubectl diag record`.
CREATE TABLE recorder_sessions (
    id          INTEGER PRIMARY KEY,
    cluster_id  INTEGER NOT NULL REFERENCES clusters (id),
    host        TEXT NOT NULL,
    pid         INTEGER NOT NULL,
    version     TEXT NOT NULL,
    started     INTEGER NOT NULL,
    heartbeat   INTEGER NOT NULL,
    stopped     INTEGER,            -- NULL while running, or when it died without stopping
    mode        TEXT NOT NULL       -- 'watch' or 'once'
);
CREATE INDEX recorder_sessions_by_cluster ON recorder_sessions (cluster_id, heartbeat);

-- Intervals in which the recorder was not watching: what happened then may be missing.
CREATE TABLE gaps (
    id          INTEGER PRIMARY KEY,
    cluster_id  INTEGER NOT NULL REFERENCES clusters (id),
    resource    TEXT NOT NULL,      -- 'events', or a kind
    start       INTEGER NOT NULL,
    finish      INTEGER NOT NULL,
    reason      TEXT NOT NULL,      -- 'not-running', 'disconnected', 'relist'
    detail      TEXT NOT NULL DEFAULT ''
);
CREATE INDEX gaps_by_cluster ON gaps (cluster_id, start);

-- Where each watch stands, written in the same transaction as the data it covers.
CREATE TABLE watch_positions (
    cluster_id        INTEGER NOT NULL REFERENCES clusters (id),
    resource          TEXT NOT NULL,
    resource_version  TEXT NOT NULL,
    updated           INTEGER NOT NULL,
    PRIMARY KEY (cluster_id, resource)
) WITHOUT ROWID;
