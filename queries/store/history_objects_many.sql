-- Several recorded objects by id (:ids, a JSON array).
SELECT o.id AS id, av.s AS api_version, k.s AS kind, ns.s AS namespace, n.s AS name, o.uid AS uid,
       o.created AS created, o.first_seen AS first_seen, o.deleted AS deleted,
       o.deleted_after AS deleted_after
FROM objects o
JOIN strings av ON av.id = o.api_version
JOIN strings k ON k.id = o.kind
JOIN strings ns ON ns.id = o.namespace
JOIN strings n ON n.id = o.name
WHERE o.id IN (SELECT value FROM json_each(:ids))
