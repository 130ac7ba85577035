-- Events for `check` at :at: every Event with occurrences in the window
-- [:from, :at], plus every scheduling Event up to :at (the last one of a Pod
-- decides whether it is unschedulable). One row per Event, with its latest
-- message up to :at and how many occurrences fell inside the window.
SELECT av.s, ki.s, ns.s, nm.s, ob.uid, re.s, ty.s, ctl.s,
       min(o.first), max(o.last), max(o.count),
       sum(CASE WHEN o.last >= :from THEN o.n ELSE 0 END),
       (SELECT s.s FROM occurrences o2 JOIN strings s ON s.id = o2.message
        WHERE o2.event_id = e.id AND o2.last <= :at ORDER BY o2.count DESC LIMIT 1)
FROM events e
JOIN occurrences o ON o.event_id = e.id
JOIN objects ob ON ob.id = e.object_id
JOIN strings av ON av.id = ob.api_version
JOIN strings ki ON ki.id = ob.kind
JOIN strings ns ON ns.id = ob.namespace
JOIN strings nm ON nm.id = ob.name
JOIN strings re ON re.id = e.reason
JOIN strings ty ON ty.id = e.type
JOIN strings ctl ON ctl.id = e.controller
WHERE e.cluster_id = :cluster AND o.last <= :at
GROUP BY e.id
HAVING max(o.last) >= :from OR re.s IN ('FailedScheduling', 'Scheduled')
