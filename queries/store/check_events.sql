-- Events for `check` at :at: every Event with occurrences in the window
-- [:from, :at], plus every scheduling Event (:scheduling) up to :at (the last one
-- of a Pod decides whether it is unschedulable), plus every Event of the
-- :lookback before :at that `diag_looked_back` keeps (Rust's
-- model::event::looked_back, the rule the live check applies: what explains a
-- stall, a controller's success, the scheduler's Preempted). One row per
-- Event, with its latest message up to :at and how many occurrences fell
-- inside the window.
SELECT av.s AS api_version, ki.s AS kind, ns.s AS namespace, nm.s AS name, ob.uid AS uid,
       re.s AS reason, ty.s AS type, ctl.s AS reporting, ho.s AS host,
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
JOIN strings ho ON ho.id = e.host
WHERE e.cluster_id = :cluster AND o.last <= :at
GROUP BY e.id
HAVING max(o.last) >= :from OR re.s IN (SELECT value FROM json_each(:scheduling))
    OR (diag_looked_back(ty.s, re.s) AND max(o.last) >= :at - :lookback)
