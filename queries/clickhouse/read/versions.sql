SELECT cluster, kind, namespace, name, uid, id, at, state, writers, seen, generation, observed_generation, diff, resource_version, ver
FROM versions FINAL
WHERE has(?, cluster) AND (? OR has(?, namespace))
ORDER BY cluster, id
