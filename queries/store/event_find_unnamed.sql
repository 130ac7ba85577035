-- The stored Events without a name (kubectl text does not show it) about this
-- object in this namespace. NB: by name, every unnamed Event of the namespace
-- was read for each new one, so a text import was quadratic (80,000 rows of
-- `kubectl get events -A` took minutes); by object (events_by_object), only
-- that object's. The `+` keeps SQLite from choosing events_by_name, which
-- has more equal columns but reads every unnamed Event.
SELECT id, uid, count, last, object_id, reason FROM events
WHERE object_id = :object AND +name = :name AND +namespace = :namespace AND +cluster_id = :cluster
