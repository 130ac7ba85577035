-- Whether the cluster holds any Event imported from kubectl text (uids that
-- begin with the made-up prefix): if none, an import of JSON replaces none and
-- need look none up. Through the cluster's objects (objects_by_name starts with
-- cluster_id, events_by_object): events has no index on its uid or cluster.
SELECT EXISTS (
    SELECT 1 FROM objects o JOIN events e ON e.object_id = o.id
    WHERE o.cluster_id = :cluster AND e.uid >= :prefix AND e.uid < :after
)
