-- name: slowest-deletions
-- description: Deletions that took longest or never finished: from deletionTimestamp to gone, with the finalizers that were waiting
-- param: since time 7d  only deletions requested at or after this (duration back, or RFC 3339)
SELECT k.s AS kind, ns.s AS namespace, n.s AS name,
       strftime('%Y-%m-%dT%H:%M:%SZ', json_extract(st.s, '$.del') / 1000, 'unixepoch') AS requested,
       CASE WHEN o.deleted IS NULL THEN 'not yet' ELSE strftime('%Y-%m-%dT%H:%M:%SZ', o.deleted / 1000, 'unixepoch') END AS gone,
       (coalesce(o.deleted, CAST(strftime('%s', 'now') AS INTEGER) * 1000) - json_extract(st.s, '$.del')) / 1000 AS seconds,
       coalesce((SELECT group_concat(f.value, ', ') FROM json_each(st.s, '$.fin') f), '') AS finalizers_waiting
FROM objects o
JOIN versions v ON v.id = (
    SELECT min(v2.id) FROM versions v2 JOIN strings s2 ON s2.id = v2.state
    WHERE v2.object_id = o.id AND json_extract(s2.s, '$.del') IS NOT NULL)
JOIN strings st ON st.id = v.state
JOIN strings k ON k.id = o.kind
JOIN strings ns ON ns.id = o.namespace
JOIN strings n ON n.id = o.name
-- NB: parameters arrive as text; json_extract has no column affinity to convert them.
WHERE json_extract(st.s, '$.del') >= CAST(:since AS INTEGER)
ORDER BY o.deleted IS NOT NULL, seconds DESC
