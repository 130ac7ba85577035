-- Every stored occurrence, oldest first, for `kubectl diag export`.
SELECT c.uid AS cluster, e.uid AS event_uid, o.count AS count, o.n AS occurrences,
       o.first AS first, o.last AS last, ty.s AS type, re.s AS reason, msg.s AS message,
       av.s AS api_version, ki.s AS kind, ns.s AS namespace, nm.s AS name, ob.uid AS uid,
       ctl.s AS reporting_controller, ins.s AS reporting_instance, fp.s AS field_path,
       ho.s AS source_host, act.s AS action, evns.s AS event_namespace, e.name AS event_name
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
