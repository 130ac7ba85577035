SELECT cluster, resource, start, finish, reason, detail, ver
FROM gaps FINAL
WHERE has(?, cluster)
