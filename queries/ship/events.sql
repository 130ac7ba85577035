-- The Event's uid and name as the apiserver wrote them (the recording keeps a
-- UUID as 16 bytes and client-go's `<object>.<hex>` names as the integer of the hex).
SELECT c.uid,
       CASE WHEN typeof(e.uid) = 'blob' THEN lower(substr(hex(e.uid), 1, 8) || '-' || substr(hex(e.uid), 9, 4)
            || '-' || substr(hex(e.uid), 13, 4) || '-' || substr(hex(e.uid), 17, 4) || '-' || substr(hex(e.uid), 21))
            ELSE e.uid END,
       evns.s,
       CASE WHEN typeof(e.name) = 'integer' THEN nm.s || '.' || printf('%llx', e.name) ELSE e.name END,
       ki.s, ns.s, nm.s, o.uid, av.s, fp.s, re.s, ty.s, act.s, ctl.s, ins.s, ho.s,
       rk.s, rn.s, rm.s, r.uid, e.deleted, e.id, coalesce(e.deleted, 0)
FROM temp.ship_keys k
JOIN events e ON e.id = k.a
JOIN clusters c ON c.id = e.cluster_id
JOIN objects o ON o.id = e.object_id
JOIN strings ki ON ki.id = o.kind
JOIN strings ns ON ns.id = o.namespace
JOIN strings nm ON nm.id = o.name
JOIN strings av ON av.id = o.api_version
JOIN strings evns ON evns.id = e.namespace
JOIN strings fp ON fp.id = e.field_path
JOIN strings re ON re.id = e.reason
JOIN strings ty ON ty.id = e.type
JOIN strings act ON act.id = e.action
JOIN strings ctl ON ctl.id = e.controller
JOIN strings ins ON ins.id = e.instance
JOIN strings ho ON ho.id = e.host
LEFT JOIN objects r ON r.id = e.related_id
LEFT JOIN strings rk ON rk.id = r.kind
LEFT JOIN strings rn ON rn.id = r.namespace
LEFT JOIN strings rm ON rm.id = r.name
WHERE k.tbl = 2
