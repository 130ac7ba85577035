SELECT c.uid, g.resource, g.start, g.finish, g.reason, g.detail, 0
FROM temp.ship_keys k JOIN gaps g ON g.id = k.a JOIN clusters c ON c.id = g.cluster_id
WHERE k.tbl = 7
