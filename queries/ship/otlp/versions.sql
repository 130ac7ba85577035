-- OTLP: each object version named by the batch's keys, with its object and cluster.
-- NB: no ORDER BY: rows come in the order of the batch's keys (version ids),
-- and a log record carries its own time; sorting copied every column of every
-- row into a temporary B-tree, a fifth of the shipper's CPU (issue 32).
-- NB: strings as their ids (Ty::Id, Ty::NId), resolved once a batch by the outbox reader.
SELECT c.uid, c.label, o.kind, o.namespace, o.name, o.uid, o.api_version, v.id, v.at,
       v.state, v.writers, v.generation, v.observed_generation, v.diff, v.resource_version, v.seen
FROM temp.ship_keys k
JOIN versions v ON v.id = k.a
JOIN objects o ON o.id = v.object_id
JOIN clusters c ON c.id = o.cluster_id
WHERE k.tbl = 4
