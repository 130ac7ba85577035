-- `timeline --store`, second read: the Events of the slice about the objects
-- the timeline shows ("Kind/namespace/name", whatever their uid), and their
-- occurrences, in one request; rows as in structure.sql.
-- Binds: the clusters, whether every namespace, the namespaces, the objects.
WITH ? AS clusters_, ? AS every_, ? AS namespaces_, ? AS objects_
SELECT t, k, r FROM (
    SELECT 'events' AS t, id AS k,
           formatRowNoNewline('RowBinary', cluster, uid, namespace, name, object_kind, object_namespace, object_name, object_uid, object_api_version, field_path, reason, type, action, controller, instance, host, related_kind, related_namespace, related_name, related_uid, deleted, id, ver) AS r
    FROM events FINAL
    WHERE has(clusters_, cluster) AND (every_ OR has(namespaces_, namespace))
      AND has(objects_, concat(object_kind, '/', object_namespace, '/', object_name))
    UNION ALL
    SELECT 'occurrences', toInt64(0),
           formatRowNoNewline('RowBinary', cluster, event_uid, event_namespace, event_name, count, n, first, last, message, ver)
    FROM occurrences FINAL
    WHERE has(clusters_, cluster) AND (cluster, event_namespace, event_name, event_uid) IN (
        SELECT cluster, namespace, name, uid FROM events FINAL
        WHERE has(clusters_, cluster) AND (every_ OR has(namespaces_, namespace))
          AND has(objects_, concat(object_kind, '/', object_namespace, '/', object_name)))
)
ORDER BY t, k
