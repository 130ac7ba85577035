-- `--store`: what was pulled from ClickHouse (the temp.st_* tables) becomes a
-- recording of the usual schema, so that every reader runs on it unchanged.
-- The recording is new and empty. Functions registered by src/ship/pull.rs:
-- fnv1a(text) (the strings table's hash), uid_key(text) (a UUID as its 16
-- bytes), event_name(name, object name) (client-go's names as an integer).

-- NB: first: the NOT EXISTS below scanned every object for every Event without it (280 ms of 1 s).
CREATE INDEX temp.st_objects_key ON st_objects (cluster, kind, namespace, name, uid);
-- Objects known only from an Event, when their own row was not shipped yet:
-- those `timeline` read from ClickHouse (queries/clickhouse/timeline/structure.sql)
-- without the Events, else those of the Events staged.
INSERT INTO temp.st_objects (cluster, kind, namespace, name, uid, api_version, ver)
SELECT e.cluster, e.kind, e.namespace, e.name, e.uid, e.api_version, 0
FROM temp.st_event_objects e
WHERE NOT EXISTS (SELECT 1 FROM temp.st_objects o WHERE o.cluster = e.cluster AND o.kind = e.kind
                  AND o.namespace = e.namespace AND o.name = e.name AND o.uid = e.uid)
ORDER BY e.rowid;
INSERT INTO temp.st_objects (cluster, kind, namespace, name, uid, api_version, ver)
SELECT DISTINCT e.cluster, e.object_kind, e.object_namespace, e.object_name, e.object_uid, e.object_api_version, 0
FROM temp.st_events e
WHERE NOT EXISTS (SELECT 1 FROM temp.st_objects o WHERE o.cluster = e.cluster AND o.kind = e.object_kind
                  AND o.namespace = e.object_namespace AND o.name = e.object_name AND o.uid = e.object_uid);
CREATE INDEX temp.st_events_key ON st_events (cluster, namespace, name, uid);

INSERT INTO clusters (uid, label, server, added)
SELECT cluster, label, server, added FROM temp.st_clusters;
INSERT OR IGNORE INTO clusters (uid, label, server, added)
SELECT DISTINCT cluster, cluster, '', 0 FROM temp.st_objects;

CREATE TEMP TABLE st_strings AS
SELECT DISTINCT s FROM (
    SELECT kind AS s FROM temp.st_objects UNION ALL SELECT namespace FROM temp.st_objects
    UNION ALL SELECT name FROM temp.st_objects UNION ALL SELECT api_version FROM temp.st_objects
    UNION ALL SELECT parent_kind FROM temp.st_relations UNION ALL SELECT parent_namespace FROM temp.st_relations
    UNION ALL SELECT parent_name FROM temp.st_relations
    UNION ALL SELECT state FROM temp.st_versions UNION ALL SELECT writers FROM temp.st_versions
    UNION ALL SELECT diff FROM temp.st_versions WHERE diff IS NOT NULL
    UNION ALL SELECT manager FROM temp.st_update_counts
    UNION ALL SELECT field FROM temp.st_update_counts WHERE field IS NOT NULL
    UNION ALL SELECT namespace FROM temp.st_events UNION ALL SELECT field_path FROM temp.st_events
    UNION ALL SELECT reason FROM temp.st_events UNION ALL SELECT type FROM temp.st_events
    UNION ALL SELECT action FROM temp.st_events UNION ALL SELECT controller FROM temp.st_events
    UNION ALL SELECT instance FROM temp.st_events UNION ALL SELECT host FROM temp.st_events
    UNION ALL SELECT message FROM temp.st_occurrences
);
INSERT INTO strings (h, s) SELECT fnv1a(s), s FROM temp.st_strings;
CREATE TEMP TABLE sid (s TEXT PRIMARY KEY, id INTEGER NOT NULL) WITHOUT ROWID;
INSERT INTO temp.sid SELECT s, id FROM strings;

-- An object's id in the recording is its staging row's.
INSERT INTO objects (id, cluster_id, kind, namespace, name, uid, api_version, created, first_seen, deleted, deleted_after)
SELECT o.rowid, c.id, k.id, ns.id, nm.id, o.uid, av.id, o.created, o.first_seen, o.deleted, o.deleted_after
FROM temp.st_objects o
JOIN clusters c ON c.uid = o.cluster
JOIN temp.sid k ON k.s = o.kind JOIN temp.sid ns ON ns.s = o.namespace
JOIN temp.sid nm ON nm.s = o.name JOIN temp.sid av ON av.s = o.api_version;

INSERT OR IGNORE INTO relations (child_id, rel, parent_kind, parent_namespace, parent_name, parent_uid, since)
SELECT o.rowid, r.rel, pk.id, pn.id, pm.id, r.parent_uid, r.since
FROM temp.st_relations r
JOIN temp.st_objects o ON o.cluster = r.cluster AND o.kind = r.kind AND o.namespace = r.namespace
     AND o.name = r.name AND o.uid = r.uid
JOIN temp.sid pk ON pk.s = r.parent_kind JOIN temp.sid pn ON pn.s = r.parent_namespace
JOIN temp.sid pm ON pm.s = r.parent_name;

INSERT INTO versions (object_id, at, state, writers, seen, generation, observed_generation, diff, resource_version)
SELECT o.rowid, v.at, st.id, wr.id, v.seen, v.generation, v.observed_generation, df.id, v.resource_version
FROM temp.st_versions v
JOIN temp.st_objects o ON o.cluster = v.cluster AND o.kind = v.kind AND o.namespace = v.namespace
     AND o.name = v.name AND o.uid = v.uid
JOIN temp.sid st ON st.s = v.state JOIN temp.sid wr ON wr.s = v.writers
LEFT JOIN temp.sid df ON df.s = v.diff
ORDER BY v.cluster, v.id;

INSERT OR IGNORE INTO update_counts (object_id, minute, manager, updates, versions, generation, field)
SELECT o.rowid, u.minute, mg.id, u.updates, u.versions, u.generation, fd.id
FROM temp.st_update_counts u
JOIN temp.st_objects o ON o.cluster = u.cluster AND o.kind = u.kind AND o.namespace = u.namespace
     AND o.name = u.name AND o.uid = u.uid
JOIN temp.sid mg ON mg.s = u.manager
LEFT JOIN temp.sid fd ON fd.s = u.field;

CREATE TEMP TABLE st_event_last AS
SELECT cluster, event_namespace, event_name, event_uid, max(count) AS count, max(last) AS last
FROM temp.st_occurrences GROUP BY cluster, event_namespace, event_name, event_uid;
CREATE INDEX temp.st_event_last_key ON st_event_last (cluster, event_namespace, event_name, event_uid);

-- An Event's id in the recording is its staging row's.
INSERT INTO events (id, cluster_id, uid, namespace, name, object_id, field_path, reason, type, action,
                    controller, instance, host, related_id, last, count, deleted)
SELECT e.rowid, c.id, uid_key(e.uid), ns.id, event_name(e.name, e.object_name), o.rowid, fp.id, re.id,
       ty.id, ac.id, ct.id, ins.id, ho.id, r.rowid, coalesce(l.last, 0), coalesce(l.count, 0), e.deleted
FROM temp.st_events e
JOIN clusters c ON c.uid = e.cluster
JOIN temp.st_objects o ON o.cluster = e.cluster AND o.kind = e.object_kind AND o.namespace = e.object_namespace
     AND o.name = e.object_name AND o.uid = e.object_uid
LEFT JOIN temp.st_objects r ON r.cluster = e.cluster AND r.kind = e.related_kind
     AND r.namespace = e.related_namespace AND r.name = e.related_name AND r.uid = e.related_uid
LEFT JOIN temp.st_event_last l ON l.cluster = e.cluster AND l.event_namespace = e.namespace
     AND l.event_name = e.name AND l.event_uid = e.uid
JOIN temp.sid ns ON ns.s = e.namespace JOIN temp.sid fp ON fp.s = e.field_path
JOIN temp.sid re ON re.s = e.reason JOIN temp.sid ty ON ty.s = e.type
JOIN temp.sid ac ON ac.s = e.action JOIN temp.sid ct ON ct.s = e.controller
JOIN temp.sid ins ON ins.s = e.instance JOIN temp.sid ho ON ho.s = e.host;

INSERT OR IGNORE INTO occurrences (event_id, count, n, first, last, message)
SELECT e.rowid, oc.count, oc.n, oc.first, oc.last, m.id
FROM temp.st_occurrences oc
JOIN temp.st_events e ON e.cluster = oc.cluster AND e.namespace = oc.event_namespace
     AND e.name = oc.event_name AND e.uid = oc.event_uid
JOIN temp.sid m ON m.s = oc.message;

INSERT INTO recorder_sessions (cluster_id, host, pid, version, started, heartbeat, stopped, mode)
SELECT c.id, s.host, s.pid, s.version, s.started, s.heartbeat, s.stopped, s.mode
FROM temp.st_sessions s JOIN clusters c ON c.uid = s.cluster ORDER BY s.started;

INSERT OR IGNORE INTO watch_positions (cluster_id, resource, resource_version, updated)
SELECT c.id, w.resource, '', w.updated FROM temp.st_watched w JOIN clusters c ON c.uid = w.cluster;

INSERT OR IGNORE INTO resource_types (cluster_id, api_version, plural, kind, singular, short_names, namespaced)
SELECT c.id, t.api_version, t.plural, t.kind, t.singular, t.short_names, t.namespaced
FROM temp.st_resource_types t JOIN clusters c ON c.uid = t.cluster;

INSERT INTO gaps (cluster_id, resource, start, finish, reason, detail)
SELECT c.id, g.resource, g.start, g.finish, g.reason, g.detail
FROM temp.st_gaps g JOIN clusters c ON c.uid = g.cluster ORDER BY g.start;

INSERT INTO type_changes (cluster_id, at, resource, api_version, kind, change)
SELECT c.id, t.at, t.resource, t.api_version, t.kind, t.change
FROM temp.st_type_changes t JOIN clusters c ON c.uid = t.cluster ORDER BY t.at;

INSERT INTO refusals (cluster_id, at, verb, user, api_group, resource, subresource, namespace, name, code, reason, message)
SELECT c.id, r.at, r.verb, r.user, r.api_group, r.resource, r.subresource, r.namespace, r.name, r.code, r.reason, r.message
FROM temp.st_refusals r JOIN clusters c ON c.uid = r.cluster ORDER BY r.at;

INSERT INTO import_spans (cluster_id, source, start, finish)
SELECT c.id, s.source, s.start, s.finish
FROM temp.st_import_spans s JOIN clusters c ON c.uid = s.cluster ORDER BY s.start;
