SELECT cluster, event_uid, event_namespace, event_name, count, n, first, last, message, ver
FROM occurrences FINAL
WHERE has(?, cluster) AND (? OR has(?, event_namespace))
