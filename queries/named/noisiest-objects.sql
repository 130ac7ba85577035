-- name: noisiest-objects
-- description: Objects with the most Event occurrences
-- param: since time 24h  only occurrences last seen at or after this (duration back, or RFC 3339)
-- param: limit int 20  how many objects
SELECT k.s AS kind, ns.s AS namespace, nm.s AS name,
       SUM(o.n) AS occurrences,
       SUM(CASE WHEN t.s = 'Warning' THEN o.n ELSE 0 END) AS warnings,
       strftime('%Y-%m-%dT%H:%M:%SZ', MAX(o.last) / 1000, 'unixepoch') AS last_seen
FROM occurrences o
JOIN events e ON e.id = o.event_id
JOIN objects ob ON ob.id = e.object_id
JOIN strings k ON k.id = ob.kind
JOIN strings ns ON ns.id = ob.namespace
JOIN strings nm ON nm.id = ob.name
JOIN strings t ON t.id = e.type
WHERE o.last >= :since
GROUP BY ob.id
ORDER BY occurrences DESC, kind, namespace, name
LIMIT :limit
