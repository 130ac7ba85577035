SELECT cluster, resource, updated, ver
FROM watched FINAL
WHERE has(?, cluster)
