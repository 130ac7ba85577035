-- `timeline --store`, third read (only when the slice holds object history,
-- so that a check can find a stall): the Events the summary's checks may
-- read about objects in the shown objects' namespaces: every Event with an
-- occurrence since :from (the check's lookback before the timeline's end,
-- model::event::LOOKBACK_MS), and every scheduling Event there (the reasons
-- bound from model::event::SCHEDULING); with their occurrences. Which of these
-- a check keeps is decided after, by the same rule as for a recording
-- (queries/store/check_events.sql calls it), so nothing here copies it.
-- Rows as in structure.sql.
-- Binds: the clusters, whether every namespace, the namespaces, the shown
-- objects' namespaces, the scheduling reasons, the start in epoch ms.
WITH ? AS clusters_, ? AS every_, ? AS namespaces_, ? AS spaces_, ? AS scheduling_, ? AS from_
SELECT t, k, r FROM (
    SELECT 'events' AS t, id AS k,
           formatRowNoNewline('RowBinary', cluster, uid, namespace, name, object_kind, object_namespace, object_name, object_uid, object_api_version, field_path, reason, type, action, controller, instance, host, related_kind, related_namespace, related_name, related_uid, deleted, id, ver) AS r
    FROM events FINAL
    WHERE (cluster, namespace, name, uid) IN (
        SELECT e.cluster, e.namespace, e.name, e.uid FROM events AS e FINAL
        WHERE has(clusters_, e.cluster) AND (every_ OR has(namespaces_, e.namespace))
          AND has(spaces_, e.object_namespace)
          AND (has(scheduling_, e.reason)
               OR (e.cluster, e.namespace, e.name, e.uid) IN (
                   SELECT cluster, event_namespace, event_name, event_uid FROM occurrences FINAL
                   WHERE has(clusters_, cluster) AND toUnixTimestamp64Milli(last) >= from_)))
    UNION ALL
    SELECT 'occurrences', toInt64(0),
           formatRowNoNewline('RowBinary', cluster, event_uid, event_namespace, event_name, count, n, first, last, message, ver)
    FROM occurrences FINAL
    WHERE (cluster, event_namespace, event_name, event_uid) IN (
        SELECT e.cluster, e.namespace, e.name, e.uid FROM events AS e FINAL
        WHERE has(clusters_, e.cluster) AND (every_ OR has(namespaces_, e.namespace))
          AND has(spaces_, e.object_namespace)
          AND (has(scheduling_, e.reason)
               OR (e.cluster, e.namespace, e.name, e.uid) IN (
                   SELECT cluster, event_namespace, event_name, event_uid FROM occurrences FINAL
                   WHERE has(clusters_, cluster) AND toUnixTimestamp64Milli(last) >= from_)))
)
ORDER BY t, k
