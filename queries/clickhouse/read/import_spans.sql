SELECT cluster, source, start, finish, ver
FROM import_spans FINAL
WHERE has(?, cluster)
