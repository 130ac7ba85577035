-- The occurrences of the subjects' Events inside [:since, :until], one row
-- per subject and Event: type, reason, reporting controller, source host, how
-- many inside (in_window), the Event's highest count there, first, last, and
-- its latest message. :ids is a JSON array of object
-- ids; references to the same kind/namespace/name without a uid (imports of
-- Events that gave none) count for the subject too.
WITH subjects(id) AS (SELECT value FROM json_each(:ids)),
targets(event_object, subject) AS (
    SELECT id, id FROM subjects
    UNION ALL
    SELECT o2.id, o.id
    FROM subjects s
    JOIN objects o ON o.id = s.id
    JOIN objects o2 ON o2.cluster_id = o.cluster_id AND o2.kind = o.kind AND o2.namespace = o.namespace
                   AND o2.name = o.name AND o2.uid = '' AND o2.id <> o.id)
SELECT t.subject AS subject, ty.s AS type, re.s AS reason, ctl.s AS controller, ho.s AS host,
       sum(oc.n) AS in_window, max(oc.count) AS count, min(oc.first) AS first, max(oc.last) AS last,
       (SELECT s.s FROM occurrences o2 JOIN strings s ON s.id = o2.message
        WHERE o2.event_id = e.id AND o2.first <= :until ORDER BY o2.count DESC LIMIT 1) AS message
FROM targets t
JOIN events e ON e.object_id = t.event_object
JOIN occurrences oc ON oc.event_id = e.id
JOIN strings ty ON ty.id = e.type
JOIN strings re ON re.id = e.reason
JOIN strings ctl ON ctl.id = e.controller
JOIN strings ho ON ho.id = e.host
WHERE oc.last >= :since AND oc.first <= :until
GROUP BY t.subject, e.id
