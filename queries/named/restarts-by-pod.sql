-- name: restarts-by-pod
-- description: Container restarts per Pod in its latest recorded state, with the last termination reason and exit code (deleted Pods included)
-- param: since time 24h  only Pods whose latest state was recorded at or after this (duration back, or RFC 3339)
SELECT ns.s AS namespace, n.s AS pod,
       json_extract(c.value, '$.n') AS container,
       json_extract(c.value, '$.rc') AS restarts,
       coalesce(json_extract(c.value, '$.lr'), '') AS last_reason,
       json_extract(c.value, '$.lx') AS last_exit_code,
       strftime('%Y-%m-%dT%H:%M:%SZ', v.at / 1000, 'unixepoch') AS recorded,
       CASE WHEN o.deleted IS NULL THEN '' ELSE 'deleted' END AS gone
FROM objects o
JOIN strings k ON k.id = o.kind
JOIN versions v ON v.id = (SELECT max(v2.id) FROM versions v2 WHERE v2.object_id = o.id)
JOIN strings st ON st.id = v.state
JOIN json_each(st.s, '$.ctr') c
JOIN strings ns ON ns.id = o.namespace
JOIN strings n ON n.id = o.name
WHERE k.s = 'Pod' AND v.at >= :since AND json_extract(c.value, '$.rc') > 0
ORDER BY restarts DESC, namespace, pod, container
