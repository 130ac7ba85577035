-- The stored Events of this name in this namespace: normally one; more when
-- client-go re-created an Event under its name after the TTL (a new uid), or
-- two objects' Events share the hex part of their names.
SELECT id, uid, count, last, object_id, reason FROM events
WHERE name = :name AND namespace = :namespace AND cluster_id = :cluster
