-- Stored Events that a row of kubectl text (which has no uid) may be: those on
-- an object of this kind/namespace/name (any uid) with this reason. One row
-- per Event and message it was stored with: id, uid, the Event's namespace,
-- its stored name, the object's name, reporting controller, count, last, and
-- the first time of its earliest occurrence. Strings are found by hash first.
SELECT e.id AS id, e.uid AS uid, ens.s AS namespace, e.name AS name, n.s AS object_name,
       ctl.s AS controller, e.count AS count, e.last AS last,
       (SELECT min(o2.first) FROM occurrences o2 WHERE o2.event_id = e.id) AS first,
       m.s AS message
FROM strings k
JOIN strings ns ON ns.h = :namespace_h AND ns.s = :namespace
JOIN strings n ON n.h = :name_h AND n.s = :name
JOIN objects o ON o.cluster_id = :cluster AND o.kind = k.id AND o.namespace = ns.id AND o.name = n.id
JOIN events e ON e.object_id = o.id
JOIN strings r ON r.id = e.reason
JOIN strings ens ON ens.id = e.namespace
JOIN strings ctl ON ctl.id = e.controller
JOIN occurrences oc ON oc.event_id = e.id
JOIN strings m ON m.id = oc.message
WHERE k.h = :kind_h AND k.s = :kind AND r.s = :reason
GROUP BY e.id, m.s
