-- Resource types that began or stopped being recorded in [:since, :until] while a recorder ran.
SELECT at, resource, api_version, kind, change FROM type_changes
WHERE cluster_id = :cluster AND at >= :since AND at <= :until
ORDER BY at, id
