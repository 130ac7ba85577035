-- The recorder's blind intervals of one cluster that overlap [:since, :until].
SELECT start, finish, reason, detail, resource FROM gaps
WHERE cluster_id = :cluster AND finish >= :since AND start <= :until
ORDER BY start
