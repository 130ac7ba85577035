SELECT cluster, uid, namespace, name, object_kind, object_namespace, object_name, object_uid, object_api_version, field_path, reason, type, action, controller, instance, host, related_kind, related_namespace, related_name, related_uid, deleted, id, ver
FROM events FINAL
WHERE has(?, cluster) AND (? OR has(?, namespace))
ORDER BY cluster, id
