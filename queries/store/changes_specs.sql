-- Spec changes (versions with a diff) of one cluster in [:since, :until],
-- optionally of one namespace (cluster-scoped objects are left out then),
-- oldest first, each with its object's newest owner edge.
SELECT v.at AS at, k.s AS kind, ns.s AS namespace, n.s AS name, w.s AS writers,
       d.s AS diff, v.generation AS generation, v.seen AS seen,
       (SELECT pk.s || '/' || pn.s FROM relations r
        JOIN strings pk ON pk.id = r.parent_kind JOIN strings pn ON pn.id = r.parent_name
        WHERE r.child_id = o.id AND r.rel = 'owner' ORDER BY r.since DESC LIMIT 1) AS owner
FROM versions v
JOIN objects o ON o.id = v.object_id
JOIN strings k ON k.id = o.kind
JOIN strings ns ON ns.id = o.namespace
JOIN strings n ON n.id = o.name
JOIN strings w ON w.id = v.writers
JOIN strings d ON d.id = v.diff
WHERE o.cluster_id = :cluster AND v.diff IS NOT NULL
  AND v.at >= :since AND v.at <= :until
  AND (:namespace IS NULL OR ns.s = :namespace)
ORDER BY v.at, v.id
