-- ver: the counts only grow within their minute.
SELECT c.uid, ki.s, ns.s, nm.s, o.uid, u.minute, mg.s, fd.s, u.updates, u.versions, u.generation,
       u.updates
FROM temp.ship_keys k
JOIN update_counts u ON u.object_id = k.a AND u.minute = k.b
JOIN objects o ON o.id = u.object_id
JOIN clusters c ON c.id = o.cluster_id
JOIN strings ki ON ki.id = o.kind
JOIN strings ns ON ns.id = o.namespace
JOIN strings nm ON nm.id = o.name
JOIN strings mg ON mg.id = u.manager
LEFT JOIN strings fd ON fd.id = u.field
WHERE k.tbl = 5
