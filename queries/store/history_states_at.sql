-- Time travel: the compact state of every object the recorder watched, as of
-- :t (epoch ms): its latest version at or before :t, if it existed then.
SELECT o.id, av.s, k.s, ns.s, n.s, o.uid, o.created, o.first_seen, o.deleted, o.deleted_after,
       v.at, st.s, w.s, v.generation, v.observed_generation
FROM objects o
JOIN versions v ON v.id = (
    SELECT v2.id FROM versions v2
    WHERE v2.object_id = o.id AND v2.at <= :t
    ORDER BY v2.at DESC, v2.id DESC LIMIT 1)
JOIN strings st ON st.id = v.state
JOIN strings w ON w.id = v.writers
JOIN strings av ON av.id = o.api_version
JOIN strings k ON k.id = o.kind
JOIN strings ns ON ns.id = o.namespace
JOIN strings n ON n.id = o.name
WHERE o.cluster_id = :cluster
  AND o.first_seen IS NOT NULL AND o.first_seen <= :t
  AND (o.deleted IS NULL OR o.deleted > :t)
-- Namespaces first: a reader that keeps only what matters knows which are terminating.
ORDER BY k.s <> 'Namespace'
