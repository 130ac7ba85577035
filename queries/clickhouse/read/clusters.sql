SELECT cluster, label, server, added, ver
FROM clusters FINAL
WHERE has(?, cluster)
