SELECT c.uid, ki.s, ns.s, nm.s, o.uid, r.rel, pk.s, pn.s, pm.s, r.parent_uid, r.since, 0
FROM temp.ship_keys k
JOIN relations r ON r.child_id = k.a
JOIN objects o ON o.id = r.child_id
JOIN clusters c ON c.id = o.cluster_id
JOIN strings ki ON ki.id = o.kind
JOIN strings ns ON ns.id = o.namespace
JOIN strings nm ON nm.id = o.name
JOIN strings pk ON pk.id = r.parent_kind
JOIN strings pn ON pn.id = r.parent_namespace
JOIN strings pm ON pm.id = r.parent_name
WHERE k.tbl = 6
