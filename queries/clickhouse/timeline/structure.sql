-- `timeline --store`, first read: every table of the slice except the Events
-- and their occurrences, in one request (src/ship/pull.rs). Each row is its
-- table's name, an order key and the row itself as RowBinary in the columns
-- of its table (src/ship/tables.rs); `event_objects` are the objects the
-- slice's Events name (load.sql adds those without a row of their own).
-- Binds: the clusters, whether every namespace, the namespaces.
WITH ? AS clusters_, ? AS every_, ? AS namespaces_
SELECT t, k, r FROM (
    SELECT 'clusters' AS t, toInt64(0) AS k,
           formatRowNoNewline('RowBinary', cluster, label, server, added, ver) AS r
    FROM clusters FINAL WHERE has(clusters_, cluster)
    UNION ALL
    SELECT 'resource_types', toInt64(0),
           formatRowNoNewline('RowBinary', cluster, api_version, plural, kind, singular, short_names, namespaced, ver)
    FROM resource_types FINAL WHERE has(clusters_, cluster)
    UNION ALL
    SELECT 'sessions', toInt64(0),
           formatRowNoNewline('RowBinary', cluster, host, pid, version, started, heartbeat, stopped, mode, ver)
    FROM sessions FINAL WHERE has(clusters_, cluster)
    UNION ALL
    SELECT 'watched', toInt64(0), formatRowNoNewline('RowBinary', cluster, resource, updated, ver)
    FROM watched FINAL WHERE has(clusters_, cluster)
    UNION ALL
    SELECT 'objects', id,
           formatRowNoNewline('RowBinary', cluster, kind, namespace, name, uid, api_version, created, first_seen, deleted, deleted_after, id, ver)
    FROM objects FINAL WHERE has(clusters_, cluster) AND (every_ OR has(namespaces_, namespace))
    UNION ALL
    SELECT 'relations', toInt64(0),
           formatRowNoNewline('RowBinary', cluster, kind, namespace, name, uid, rel, parent_kind, parent_namespace, parent_name, parent_uid, since, ver)
    FROM relations FINAL WHERE has(clusters_, cluster) AND (every_ OR has(namespaces_, namespace))
    UNION ALL
    SELECT 'versions', id,
           formatRowNoNewline('RowBinary', cluster, kind, namespace, name, uid, id, at, state, writers, seen, generation, observed_generation, diff, resource_version, ver)
    FROM versions FINAL WHERE has(clusters_, cluster) AND (every_ OR has(namespaces_, namespace))
    UNION ALL
    -- Each object's latest version where the TTL of `versions` dropped it (latest.sql).
    SELECT 'versions', id,
           formatRowNoNewline('RowBinary', cluster, kind, namespace, name, uid, id, at, state, writers, seen, generation, observed_generation, diff, resource_version, ver)
    FROM latest_versions FINAL WHERE has(clusters_, cluster) AND (every_ OR has(namespaces_, namespace))
        AND (cluster, kind, namespace, name, uid, at, id) NOT IN (
            SELECT cluster, kind, namespace, name, uid, at, id FROM versions
            WHERE has(clusters_, cluster) AND (every_ OR has(namespaces_, namespace)))
    UNION ALL
    SELECT 'update_counts', toInt64(0),
           formatRowNoNewline('RowBinary', cluster, kind, namespace, name, uid, minute, manager, field, updates, versions, generation, ver)
    FROM update_counts FINAL WHERE has(clusters_, cluster) AND (every_ OR has(namespaces_, namespace))
    UNION ALL
    SELECT 'gaps', toInt64(0), formatRowNoNewline('RowBinary', cluster, resource, start, finish, reason, detail, ver)
    FROM gaps FINAL WHERE has(clusters_, cluster)
    UNION ALL
    SELECT 'type_changes', toInt64(0), formatRowNoNewline('RowBinary', cluster, at, resource, api_version, kind, change, ver)
    FROM type_changes FINAL WHERE has(clusters_, cluster)
    UNION ALL
    SELECT 'refusals', toInt64(0),
           formatRowNoNewline('RowBinary', cluster, at, verb, user, api_group, resource, subresource, namespace, name, code, reason, message, ver)
    FROM refusals FINAL WHERE has(clusters_, cluster) AND (every_ OR has(namespaces_, namespace))
    UNION ALL
    SELECT 'import_spans', toInt64(0), formatRowNoNewline('RowBinary', cluster, source, start, finish, ver)
    FROM import_spans FINAL WHERE has(clusters_, cluster)
    UNION ALL
    -- NB: in the order the load meets them when it reads every Event (by id).
    SELECT 'event_objects', min(id),
           formatRowNoNewline('RowBinary', cluster, object_kind, object_namespace, object_name, object_uid, object_api_version)
    FROM events FINAL WHERE has(clusters_, cluster) AND (every_ OR has(namespaces_, namespace))
    GROUP BY cluster, object_kind, object_namespace, object_name, object_uid, object_api_version
)
ORDER BY t, k
