SELECT cluster, kind, namespace, name, uid, minute, manager, field, updates, versions, generation, ver
FROM update_counts FINAL
WHERE has(?, cluster) AND (? OR has(?, namespace))
