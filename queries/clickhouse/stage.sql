-- `--store`: a table per ClickHouse table, in the temporary schema of the recording
-- a command's slice is pulled into (src/ship/pull.rs); queries/clickhouse/load.sql
-- turns them into the recording's own tables.

CREATE TEMP TABLE st_clusters (cluster, label, server, added, ver);
CREATE TEMP TABLE st_resource_types (cluster, api_version, plural, kind, singular, short_names, namespaced, ver);
CREATE TEMP TABLE st_sessions (cluster, host, pid, version, started, heartbeat, stopped, mode, ver);
CREATE TEMP TABLE st_watched (cluster, resource, updated, ver);
CREATE TEMP TABLE st_objects (cluster, kind, namespace, name, uid, api_version, created, first_seen, deleted, deleted_after, id, ver);
CREATE TEMP TABLE st_relations (cluster, kind, namespace, name, uid, rel, parent_kind, parent_namespace, parent_name, parent_uid, since, ver);
CREATE TEMP TABLE st_versions (cluster, kind, namespace, name, uid, id, at, state, writers, seen, generation, observed_generation, diff, resource_version, ver);
CREATE TEMP TABLE st_update_counts (cluster, kind, namespace, name, uid, minute, manager, field, updates, versions, generation, ver);
CREATE TEMP TABLE st_events (cluster, uid, namespace, name, object_kind, object_namespace, object_name, object_uid, object_api_version, field_path, reason, type, action, controller, instance, host, related_kind, related_namespace, related_name, related_uid, deleted, id, ver);
CREATE TEMP TABLE st_occurrences (cluster, event_uid, event_namespace, event_name, count, n, first, last, message, ver);
CREATE TEMP TABLE st_gaps (cluster, resource, start, finish, reason, detail, ver);
CREATE TEMP TABLE st_type_changes (cluster, at, resource, api_version, kind, change, ver);
CREATE TEMP TABLE st_refusals (cluster, at, verb, user, api_group, resource, subresource, namespace, name, code, reason, message, ver);
CREATE TEMP TABLE st_import_spans (cluster, source, start, finish, ver);
CREATE TEMP TABLE st_event_objects (cluster, kind, namespace, name, uid, api_version);
