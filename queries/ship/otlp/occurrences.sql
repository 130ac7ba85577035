-- OTLP: each occurrence row named by the batch's keys, with everything its log
-- record says (src/ship/otlp.rs, docs/schema.md "OTLP logs"): its Event, the
-- object the Event is about, the cluster. `start`: the Event's earliest stored
-- occurrence, what k8s.event.start_time (the Event's creation) is taken from.
-- NB: no ORDER BY: rows come in the order of the batch's keys (event, count),
-- and a log record carries its own time; sorting copied every column of every
-- row into a temporary B-tree, a fifth of the shipper's CPU (issue 32).
SELECT c.uid, c.label,
       CASE WHEN typeof(e.uid) = 'blob' THEN lower(substr(hex(e.uid), 1, 8) || '-' || substr(hex(e.uid), 9, 4)
            || '-' || substr(hex(e.uid), 13, 4) || '-' || substr(hex(e.uid), 17, 4) || '-' || substr(hex(e.uid), 21))
            ELSE e.uid END,
       evns.s,
       CASE WHEN typeof(e.name) = 'integer' THEN nm.s || '.' || printf('%llx', e.name) ELSE e.name END,
       oc.count, oc.n, oc.first, oc.last, msg.s,
       ty.s, re.s, act.s, ctl.s, ins.s, ho.s,
       ki.s, ns.s, nm.s, o.uid, av.s, fp.s,
       (SELECT min(f.first) FROM occurrences f WHERE f.event_id = e.id)
FROM temp.ship_keys k
JOIN occurrences oc ON oc.event_id = k.a AND oc.count = k.b
JOIN events e ON e.id = oc.event_id
JOIN clusters c ON c.id = e.cluster_id
JOIN objects o ON o.id = e.object_id
JOIN strings ki ON ki.id = o.kind
JOIN strings ns ON ns.id = o.namespace
JOIN strings nm ON nm.id = o.name
JOIN strings av ON av.id = o.api_version
JOIN strings evns ON evns.id = e.namespace
JOIN strings fp ON fp.id = e.field_path
JOIN strings re ON re.id = e.reason
JOIN strings ty ON ty.id = e.type
JOIN strings act ON act.id = e.action
JOIN strings ctl ON ctl.id = e.controller
JOIN strings ins ON ins.id = e.instance
JOIN strings ho ON ho.id = e.host
JOIN strings msg ON msg.id = oc.message
WHERE k.tbl = 1
