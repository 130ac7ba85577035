-- name: warnings-by-reason
-- description: Warning occurrences per reason, with how many objects each touched
-- param: since time 24h  only occurrences last seen at or after this (duration back, or RFC 3339)
SELECT r.s AS reason,
       SUM(o.n) AS occurrences,
       COUNT(DISTINCT e.object_id) AS objects,
       strftime('%Y-%m-%dT%H:%M:%SZ', MAX(o.last) / 1000, 'unixepoch') AS last_seen
FROM occurrences o
JOIN events e ON e.id = o.event_id
JOIN strings t ON t.id = e.type
JOIN strings r ON r.id = e.reason
WHERE t.s = 'Warning' AND o.last >= :since
GROUP BY r.s
ORDER BY occurrences DESC, reason
