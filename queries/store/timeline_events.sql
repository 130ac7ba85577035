-- The occurrences of one object's Events inside [:since, :until], one row per
-- Event: type, reason, reporting controller, source host, how many, first,
-- last, and its latest message.
SELECT ty.s, re.s, ctl.s, ho.s, sum(o.n), min(o.first), max(o.last),
       (SELECT s.s FROM occurrences o2 JOIN strings s ON s.id = o2.message
        WHERE o2.event_id = e.id AND o2.first <= :until ORDER BY o2.count DESC LIMIT 1)
FROM events e
JOIN occurrences o ON o.event_id = e.id
JOIN strings ty ON ty.id = e.type
JOIN strings re ON re.id = e.reason
JOIN strings ctl ON ctl.id = e.controller
JOIN strings ho ON ho.id = e.host
WHERE e.object_id = :object AND o.last >= :since AND o.first <= :until
GROUP BY e.id
