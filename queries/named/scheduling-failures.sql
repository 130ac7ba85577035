-- name: scheduling-failures
-- description: FailedScheduling messages, with how many Pods and occurrences each
-- param: since time 24h  only occurrences last seen at or after this (duration back, or RFC 3339)
SELECT m.s AS message,
       COUNT(DISTINCT e.object_id) AS pods,
       SUM(o.n) AS occurrences,
       strftime('%Y-%m-%dT%H:%M:%SZ', MAX(o.last) / 1000, 'unixepoch') AS last_seen
FROM occurrences o
JOIN events e ON e.id = o.event_id
JOIN strings r ON r.id = e.reason
JOIN strings m ON m.id = o.message
WHERE r.s = 'FailedScheduling' AND o.last >= :since
GROUP BY m.s
ORDER BY pods DESC, occurrences DESC
