-- The types the recorder watched in a cluster, as their full plural names
-- (`secrets`, `deployments.apps`): watch keys are `TYPE` or `TYPE/NAMESPACE`.
-- What a check may call missing is only what it could have seen.
SELECT DISTINCT CASE WHEN instr(resource, '/') > 0
                     THEN substr(resource, 1, instr(resource, '/') - 1)
                     ELSE resource END AS type
FROM watch_positions
WHERE cluster_id = :cluster
