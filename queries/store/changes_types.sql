-- Resource types that appeared or went in [:since, :until].
SELECT at, resource, kind, change FROM type_changes
WHERE cluster_id = :cluster AND at >= :since AND at <= :until
ORDER BY at, id
