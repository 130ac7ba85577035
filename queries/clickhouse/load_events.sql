-- `timeline --store`: Events staged after load.sql built the recording (the
-- timeline's own, then those its checks may quote) join it. An Event's id is
-- its id in ClickHouse (the shipping recording's), so that Events pulled in
-- two reads keep the order one read gives them; one already there is kept.
INSERT INTO strings (h, s)
SELECT fnv1a(s), s FROM (
    SELECT namespace AS s FROM temp.st_events UNION SELECT field_path FROM temp.st_events
    UNION SELECT reason FROM temp.st_events UNION SELECT type FROM temp.st_events
    UNION SELECT action FROM temp.st_events UNION SELECT controller FROM temp.st_events
    UNION SELECT instance FROM temp.st_events UNION SELECT host FROM temp.st_events
    UNION SELECT message FROM temp.st_occurrences)
WHERE s NOT IN (SELECT s FROM temp.sid);
INSERT OR IGNORE INTO temp.sid SELECT s, id FROM strings;

DELETE FROM temp.st_event_last;
INSERT INTO temp.st_event_last
SELECT cluster, event_namespace, event_name, event_uid, max(count), max(last)
FROM temp.st_occurrences GROUP BY cluster, event_namespace, event_name, event_uid;

INSERT OR IGNORE INTO events (id, cluster_id, uid, namespace, name, object_id, field_path, reason, type, action,
                              controller, instance, host, related_id, last, count, deleted)
SELECT e.id, c.id, uid_key(e.uid), ns.id, event_name(e.name, e.object_name), o.rowid, fp.id, re.id,
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
JOIN temp.sid ins ON ins.s = e.instance JOIN temp.sid ho ON ho.s = e.host
ORDER BY e.id;

INSERT OR IGNORE INTO occurrences (event_id, count, n, first, last, message)
SELECT e.id, oc.count, oc.n, oc.first, oc.last, m.id
FROM temp.st_occurrences oc
JOIN temp.st_events e ON e.cluster = oc.cluster AND e.namespace = oc.event_namespace
     AND e.name = oc.event_name AND e.uid = oc.event_uid
JOIN temp.sid m ON m.s = oc.message;

DELETE FROM temp.st_events;
DELETE FROM temp.st_occurrences;
