-- The gaps between imported audit logs, about to be worked out again.
DELETE FROM gaps WHERE cluster_id = :cluster AND reason = 'not-imported'
