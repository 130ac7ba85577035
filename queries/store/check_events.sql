-- Events for `check` at :at: every Event with occurrences in the window
-- [:from, :at], plus every scheduling Event up to :at (the last one of a Pod
-- decides whether it is unschedulable), plus every Warning (and Failed… reason) of the
-- hour before :at (what explains a stall; the apiserver keeps Events that long too), and
-- the scheduler's Normal `Preempted` of that hour (who took a Pod's room, L003). One row per Event, with its latest
-- message up to :at and how many occurrences fell inside the window.
SELECT av.s AS api_version, ki.s AS kind, ns.s AS namespace, nm.s AS name, ob.uid AS uid,
       re.s AS reason, ty.s AS type, ctl.s AS reporting,
       min(o.first) AS first, max(o.last) AS last, max(o.count) AS count,
       sum(CASE WHEN o.last >= :from THEN o.n ELSE 0 END) AS in_window,
       (SELECT s.s FROM occurrences o2 JOIN strings s ON s.id = o2.message
        WHERE o2.event_id = e.id AND o2.last <= :at ORDER BY o2.count DESC LIMIT 1) AS message
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
    OR ((ty.s = 'Warning' OR re.s LIKE 'Failed%' OR re.s = 'Preempted') AND max(o.last) >= :at - 3600000)
