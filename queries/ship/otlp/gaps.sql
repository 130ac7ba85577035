-- OTLP: each gap named by the batch's keys, with its cluster.
SELECT c.uid, c.label, g.id, g.resource, g.start, g.finish, g.reason, g.detail
FROM temp.ship_keys k JOIN gaps g ON g.id = k.a JOIN clusters c ON c.id = g.cluster_id
WHERE k.tbl = 7
ORDER BY g.start, g.id
