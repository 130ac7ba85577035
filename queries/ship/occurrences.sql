SELECT c.uid,
       CASE WHEN typeof(e.uid) = 'blob' THEN lower(substr(hex(e.uid), 1, 8) || '-' || substr(hex(e.uid), 9, 4)
            || '-' || substr(hex(e.uid), 13, 4) || '-' || substr(hex(e.uid), 17, 4) || '-' || substr(hex(e.uid), 21))
            ELSE e.uid END,
       evns.s,
       CASE WHEN typeof(e.name) = 'integer' THEN nm.s || '.' || printf('%llx', e.name) ELSE e.name END,
       oc.count, oc.n, oc.first, oc.last, msg.s, oc.last
FROM temp.ship_keys k
JOIN occurrences oc ON oc.event_id = k.a AND oc.count = k.b
JOIN events e ON e.id = oc.event_id
JOIN clusters c ON c.id = e.cluster_id
JOIN objects o ON o.id = e.object_id
JOIN strings nm ON nm.id = o.name
JOIN strings evns ON evns.id = e.namespace
JOIN strings msg ON msg.id = oc.message
WHERE k.tbl = 1
