SELECT c.uid, ki.s, ns.s, nm.s, o.uid, v.id, v.at, st.s, wr.s, v.seen, v.generation,
       v.observed_generation, df.s, v.resource_version, 0
FROM temp.ship_keys k
JOIN versions v ON v.id = k.a
JOIN objects o ON o.id = v.object_id
JOIN clusters c ON c.id = o.cluster_id
JOIN strings ki ON ki.id = o.kind
JOIN strings ns ON ns.id = o.namespace
JOIN strings nm ON nm.id = o.name
JOIN strings st ON st.id = v.state
JOIN strings wr ON wr.id = v.writers
LEFT JOIN strings df ON df.id = v.diff
WHERE k.tbl = 4
