-- Time travel: the compact state of every object the recorder watched, as of
-- :t (epoch ms): its latest version at or before :t, if it existed then, and
-- how that version was seen (versions.seen: 1 when it is the object's creation).
SELECT o.id AS id, av.s AS api_version, k.s AS kind, ns.s AS namespace, n.s AS name, o.uid AS uid,
       o.created AS created, o.first_seen AS first_seen, o.deleted AS deleted,
       o.deleted_after AS deleted_after,
       v.at AS state_at, st.s AS state, w.s AS writers, v.generation AS generation,
       v.observed_generation AS observed_generation, v.seen AS seen
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
