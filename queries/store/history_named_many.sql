-- Recorded objects of one kind and namespace named any of :names (a JSON
-- array; :hashes holds their FNV-1a hashes, so the strings index finds them),
-- newest incarnation first.
SELECT o.id AS id, av.s AS api_version, k.s AS kind, ns.s AS namespace, n.s AS name, o.uid AS uid,
       o.created AS created, o.first_seen AS first_seen, o.deleted AS deleted,
       o.deleted_after AS deleted_after
FROM strings k
JOIN strings ns ON ns.h = :nsh AND ns.s = :namespace
JOIN strings n ON n.h IN (SELECT value FROM json_each(:hashes))
JOIN objects o ON o.cluster_id = :cluster AND o.kind = k.id AND o.namespace = ns.id AND o.name = n.id
JOIN strings av ON av.id = o.api_version
WHERE k.h = :kh AND k.s = :kind AND n.s IN (SELECT value FROM json_each(:names))
ORDER BY coalesce(o.created, o.first_seen, 0) DESC, o.id DESC
