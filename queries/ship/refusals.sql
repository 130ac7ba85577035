SELECT c.uid, r.at, r.verb, r.user, r.api_group, r.resource, r.subresource, r.namespace, r.name,
       r.code, r.reason, r.message, 0
FROM temp.ship_keys k JOIN refusals r ON r.id = k.a JOIN clusters c ON c.id = r.cluster_id
WHERE k.tbl = 12
