SELECT cluster, at, resource, api_version, kind, change, ver
FROM type_changes FINAL
WHERE has(?, cluster)
