WITH ? AS clusters_, ? AS every_, ? AS namespaces_
SELECT * FROM (
SELECT cluster, kind, namespace, name, uid, id, at, state, writers, seen, generation, observed_generation, diff, resource_version, ver
FROM versions FINAL
WHERE has(clusters_, cluster) AND (every_ OR has(namespaces_, namespace))
UNION ALL
-- Each object's latest version where the TTL of `versions` dropped it (latest.sql).
SELECT cluster, kind, namespace, name, uid, id, at, state, writers, seen, generation, observed_generation, diff, resource_version, ver
FROM latest_versions FINAL
WHERE has(clusters_, cluster) AND (every_ OR has(namespaces_, namespace))
  AND (cluster, kind, namespace, name, uid, at, id) NOT IN (
      SELECT cluster, kind, namespace, name, uid, at, id FROM versions
      WHERE has(clusters_, cluster) AND (every_ OR has(namespaces_, namespace)))
)
ORDER BY cluster, id
