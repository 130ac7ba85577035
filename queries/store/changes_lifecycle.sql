-- Objects of one cluster created or deleted in [:since, :until] (as an
-- object watch saw them: Events-only references have no life cycle), with
-- the writers of their first version and their newest owner edge.
-- NB: the first version is the creation only when it was seen as one (1),
-- or listed by a recorder (0): an audit log's first write of an object made
-- before it began (2) is its first sight, by its writer, not its creation.
-- (`seen & 3`: the bits above are its provenance, model::provenance,
-- which the creation takes from the first version; a deletion's is told apart.)
SELECT o.created AS created, o.deleted AS deleted, o.deleted_after AS deleted_after,
       k.s AS kind, ns.s AS namespace, n.s AS name,
       (SELECT w.s FROM versions v JOIN strings w ON w.id = v.writers
        WHERE v.object_id = o.id ORDER BY v.at, v.id LIMIT 1) AS writers,
       (SELECT v.seen & 3 FROM versions v
        WHERE v.object_id = o.id ORDER BY v.at, v.id LIMIT 1) AS first_seen_as,
       (SELECT v.at FROM versions v
        WHERE v.object_id = o.id ORDER BY v.at, v.id LIMIT 1) AS first_at,
       (SELECT v.seen FROM versions v
        WHERE v.object_id = o.id ORDER BY v.at, v.id LIMIT 1) AS first_stored_seen,
       (SELECT pk.s || '/' || pn.s FROM relations r
        JOIN strings pk ON pk.id = r.parent_kind JOIN strings pn ON pn.id = r.parent_name
        WHERE r.child_id = o.id AND r.rel = 'owner' ORDER BY r.since DESC LIMIT 1) AS owner
FROM objects o
JOIN strings k ON k.id = o.kind
JOIN strings ns ON ns.id = o.namespace
JOIN strings n ON n.id = o.name
WHERE o.cluster_id = :cluster AND o.first_seen IS NOT NULL
  AND ((o.created >= :since AND o.created <= :until)
       OR (o.deleted >= :since AND o.deleted <= :until)
       OR (o.first_seen >= :since AND o.first_seen <= :until))
  AND (:namespace IS NULL OR ns.s = :namespace)
-- NB: in the order the recording first knew the objects; the plan order
-- followed the ids of kind names, which differ between two copies of a recording.
ORDER BY o.id
