-- Several recorded objects by id (:ids, a JSON array).
SELECT o.id, av.s, k.s, ns.s, n.s, o.uid, o.created, o.first_seen, o.deleted, o.deleted_after
FROM objects o
JOIN strings av ON av.id = o.api_version
JOIN strings k ON k.id = o.kind
JOIN strings ns ON ns.id = o.namespace
JOIN strings n ON n.id = o.name
WHERE o.id IN (SELECT value FROM json_each(:ids))
