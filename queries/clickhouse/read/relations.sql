SELECT cluster, kind, namespace, name, uid, rel, parent_kind, parent_namespace, parent_name, parent_uid, since, ver
FROM relations FINAL
WHERE has(?, cluster) AND (? OR has(?, namespace))
