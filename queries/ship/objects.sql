-- ver: a row that knows of a deletion wins, then one that saw the object itself.
SELECT c.uid, ki.s, ns.s, nm.s, o.uid, av.s, o.created, o.first_seen, o.deleted, o.deleted_after, o.id,
       coalesce(o.deleted, 0) + (o.first_seen IS NOT NULL)
FROM temp.ship_keys k
JOIN objects o ON o.id = k.a
JOIN clusters c ON c.id = o.cluster_id
JOIN strings ki ON ki.id = o.kind
JOIN strings ns ON ns.id = o.namespace
JOIN strings nm ON nm.id = o.name
JOIN strings av ON av.id = o.api_version
WHERE k.tbl = 3
