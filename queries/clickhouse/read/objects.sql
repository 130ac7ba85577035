SELECT cluster, kind, namespace, name, uid, api_version, created, first_seen, deleted, deleted_after, id, ver
FROM objects FINAL
WHERE has(?, cluster) AND (? OR has(?, namespace))
ORDER BY cluster, id
