-- Every stored occurrence, oldest first, for `kubectl diag export`.
SELECT c.uid, e.uid, o.count, o.n, o.first, o.last,
       ty.s, re.s, msg.s,
       av.s, ki.s, ns.s, nm.s, ob.uid,
       ctl.s, ins.s, fp.s, ho.s, act.s, evns.s, e.name
FROM occurrences o
JOIN events e ON e.id = o.event_id
JOIN clusters c ON c.id = e.cluster_id
JOIN objects ob ON ob.id = e.object_id
JOIN strings ty ON ty.id = e.type
JOIN strings re ON re.id = e.reason
JOIN strings msg ON msg.id = o.message
JOIN strings av ON av.id = ob.api_version
JOIN strings ki ON ki.id = ob.kind
JOIN strings ns ON ns.id = ob.namespace
JOIN strings nm ON nm.id = ob.name
JOIN strings ctl ON ctl.id = e.controller
JOIN strings ins ON ins.id = e.instance
JOIN strings fp ON fp.id = e.field_path
JOIN strings ho ON ho.id = e.host
JOIN strings act ON act.id = e.action
JOIN strings evns ON evns.id = e.namespace
WHERE o.last >= :since
  AND (:cluster IS NULL OR c.uid = :cluster OR c.label = :cluster)
ORDER BY o.last, e.id, o.count
