-- OTLP: each object version named by the batch's keys, with its object and cluster.
-- NB: no ORDER BY: rows come in the order of the batch's keys (version ids),
-- and a log record carries its own time; sorting copied every column of every
-- row into a temporary B-tree, a fifth of the shipper's CPU (issue 32).
SELECT c.uid, c.label, ki.s, ns.s, nm.s, o.uid, av.s, v.id, v.at, st.s, wr.s,
       v.generation, v.observed_generation, df.s, v.resource_version
FROM temp.ship_keys k
JOIN versions v ON v.id = k.a
JOIN objects o ON o.id = v.object_id
JOIN clusters c ON c.id = o.cluster_id
JOIN strings ki ON ki.id = o.kind
JOIN strings ns ON ns.id = o.namespace
JOIN strings nm ON nm.id = o.name
JOIN strings av ON av.id = o.api_version
JOIN strings st ON st.id = v.state
JOIN strings wr ON wr.id = v.writers
LEFT JOIN strings df ON df.id = v.diff
WHERE k.tbl = 4
