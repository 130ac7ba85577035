-- name: recorder-gaps
-- description: Intervals in which the recorder was not watching, and why
-- param: since time 30d  only gaps ending at or after this (duration back, or RFC 3339)
SELECT c.label AS cluster, g.resource, g.reason,
       strftime('%Y-%m-%dT%H:%M:%SZ', g.start / 1000, 'unixepoch') AS start,
       strftime('%Y-%m-%dT%H:%M:%SZ', g.finish / 1000, 'unixepoch') AS finish,
       ROUND((g.finish - g.start) / 1000.0, 1) AS seconds,
       g.detail
FROM gaps g
JOIN clusters c ON c.id = g.cluster_id
WHERE g.finish >= :since
ORDER BY g.start
