-- name: object-events
-- description: Everything recorded about one object, by name (deleted objects included), oldest first
-- param: name text -  the object's name (required)
-- param: kind text %  its kind, e.g. Pod (default: any)
-- param: namespace text %  its namespace (default: any)
SELECT strftime('%Y-%m-%dT%H:%M:%SZ', o.last / 1000, 'unixepoch') AS last,
       k.s AS kind, ns.s AS namespace, t.s AS type, r.s AS reason,
       o.n AS occurrences, o.count AS count, m.s AS message
FROM objects ob
JOIN strings k ON k.id = ob.kind
JOIN strings ns ON ns.id = ob.namespace
JOIN strings nm ON nm.id = ob.name
JOIN events e ON e.object_id = ob.id
JOIN occurrences o ON o.event_id = e.id
JOIN strings t ON t.id = e.type
JOIN strings r ON r.id = e.reason
JOIN strings m ON m.id = o.message
WHERE nm.s = :name AND k.s LIKE :kind AND ns.s LIKE :namespace
ORDER BY o.last, e.id, o.count
