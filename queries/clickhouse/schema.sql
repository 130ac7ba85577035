-- kubectl-diag's ClickHouse schema (docs/schema.md, "ClickHouse"): the facts of
-- the SQLite recording, names in place of string ids, the cluster (the uid of
-- its kube-system namespace) first in every key. Every table is a
-- ReplacingMergeTree keyed by what identifies the fact, so a batch sent twice,
-- or a row sent again after it changed, leaves one row; `ver` says which copy
-- wins (the last inserted among equals). Readers use FINAL.
--
-- Markers, replaced by src/ship/clickhouse.rs (never with user text other than
-- a validated cluster name and a number): @ON_CLUSTER@, @ENGINE@ (ReplacingMergeTree
-- or its Replicated form), @TTL(column)@ (from record --retain), @SETTINGS@.
-- Statements are separated by a line holding only ';'.
--
-- `id` (objects, events, versions) is the row's id in the recording it came
-- from: not part of any key, it keeps the recording's order among facts of
-- the same millisecond when a reader pulls them back.

CREATE TABLE IF NOT EXISTS clusters @ON_CLUSTER@ (
    cluster  String,
    label    String,
    server   String,
    added    DateTime64(3, 'UTC'),
    ver      UInt64
) ENGINE = @ENGINE@ ORDER BY cluster @SETTINGS@
;
CREATE TABLE IF NOT EXISTS resource_types @ON_CLUSTER@ (
    cluster      String,
    api_version  String,
    plural       String,
    kind         String,
    singular     String,
    short_names  String,
    namespaced   UInt8,
    ver          UInt64
) ENGINE = @ENGINE@ ORDER BY (cluster, api_version, plural) @SETTINGS@
;
CREATE TABLE IF NOT EXISTS sessions @ON_CLUSTER@ (
    cluster    String,
    host       String,
    pid        Int64,
    version    String,
    started    DateTime64(3, 'UTC'),
    heartbeat  DateTime64(3, 'UTC'),
    stopped    Nullable(DateTime64(3, 'UTC')),
    mode       LowCardinality(String),
    ver        UInt64
) ENGINE = @ENGINE@ ORDER BY (cluster, host, pid, started) @TTL(heartbeat)@ @SETTINGS@
;
CREATE TABLE IF NOT EXISTS watched @ON_CLUSTER@ (
    cluster   String,
    resource  String,
    updated   DateTime64(3, 'UTC'),
    ver       UInt64
) ENGINE = @ENGINE@ ORDER BY (cluster, resource) @SETTINGS@
;
CREATE TABLE IF NOT EXISTS objects @ON_CLUSTER@ (
    cluster        String,
    kind           LowCardinality(String),
    namespace      String,
    name           String,
    uid            String,
    api_version    LowCardinality(String),
    created        Nullable(DateTime64(3, 'UTC')),
    first_seen     Nullable(DateTime64(3, 'UTC')),
    deleted        Nullable(DateTime64(3, 'UTC')),
    deleted_after  Nullable(DateTime64(3, 'UTC')),
    id             Int64,
    ver            UInt64
) ENGINE = @ENGINE@ ORDER BY (cluster, kind, namespace, name, uid) @SETTINGS@
;
CREATE TABLE IF NOT EXISTS relations @ON_CLUSTER@ (
    cluster           String,
    kind              LowCardinality(String),
    namespace         String,
    name              String,
    uid               String,
    rel               LowCardinality(String),
    parent_kind       LowCardinality(String),
    parent_namespace  String,
    parent_name       String,
    parent_uid        String,
    since             DateTime64(3, 'UTC'),
    ver               UInt64
) ENGINE = @ENGINE@ ORDER BY (cluster, kind, namespace, name, uid, rel, parent_kind, parent_name, parent_uid) @SETTINGS@
;
CREATE TABLE IF NOT EXISTS versions @ON_CLUSTER@ (
    cluster              String,
    kind                 LowCardinality(String),
    namespace            String,
    name                 String,
    uid                  String,
    id                   Int64,
    at                   DateTime64(3, 'UTC'),
    state                String,
    writers              String,
    seen                 DateTime64(3, 'UTC'),
    generation           Int64,
    observed_generation  Nullable(Int64),
    diff                 Nullable(String),
    resource_version     Nullable(String),
    ver                  UInt64
) ENGINE = @ENGINE@ ORDER BY (cluster, kind, namespace, name, uid, at, id) @TTL(at)@ @SETTINGS@
;
CREATE TABLE IF NOT EXISTS update_counts @ON_CLUSTER@ (
    cluster     String,
    kind        LowCardinality(String),
    namespace   String,
    name        String,
    uid         String,
    minute      Int64,
    manager     String,
    field       Nullable(String),
    updates     Int64,
    versions    Int64,
    generation  Int64,
    ver         UInt64
) ENGINE = @ENGINE@ ORDER BY (cluster, kind, namespace, name, uid, minute, manager) @TTL(toDateTime(minute * 60))@ @SETTINGS@
;
CREATE TABLE IF NOT EXISTS events @ON_CLUSTER@ (
    cluster             String,
    uid                 String,
    namespace           String,
    name                String,
    object_kind         LowCardinality(String),
    object_namespace    String,
    object_name         String,
    object_uid          String,
    object_api_version  LowCardinality(String),
    field_path          String,
    reason              LowCardinality(String),
    type                LowCardinality(String),
    action              LowCardinality(String),
    controller          LowCardinality(String),
    instance            String,
    host                String,
    related_kind        Nullable(String),
    related_namespace   Nullable(String),
    related_name        Nullable(String),
    related_uid         Nullable(String),
    deleted             Nullable(DateTime64(3, 'UTC')),
    id                  Int64,
    ver                 UInt64
) ENGINE = @ENGINE@ ORDER BY (cluster, namespace, name, uid) @SETTINGS@
;
CREATE TABLE IF NOT EXISTS occurrences @ON_CLUSTER@ (
    cluster         String,
    event_uid       String,
    event_namespace String,
    event_name      String,
    count           Int64,
    n               Int64,
    first           DateTime64(3, 'UTC'),
    last            DateTime64(3, 'UTC'),
    message         String,
    ver             UInt64
) ENGINE = @ENGINE@ ORDER BY (cluster, event_namespace, event_name, event_uid, count) @TTL(last)@ @SETTINGS@
;
CREATE TABLE IF NOT EXISTS gaps @ON_CLUSTER@ (
    cluster   String,
    resource  String,
    start     DateTime64(3, 'UTC'),
    finish    DateTime64(3, 'UTC'),
    reason    LowCardinality(String),
    detail    String,
    ver       UInt64
) ENGINE = @ENGINE@ ORDER BY (cluster, resource, start, finish, reason) @TTL(finish)@ @SETTINGS@
;
CREATE TABLE IF NOT EXISTS type_changes @ON_CLUSTER@ (
    cluster      String,
    at           DateTime64(3, 'UTC'),
    resource     String,
    api_version  String,
    kind         String,
    change       LowCardinality(String),
    ver          UInt64
) ENGINE = @ENGINE@ ORDER BY (cluster, at, resource, api_version, change) @SETTINGS@
;
CREATE TABLE IF NOT EXISTS refusals @ON_CLUSTER@ (
    cluster      String,
    at           DateTime64(3, 'UTC'),
    verb         LowCardinality(String),
    user         String,
    api_group    String,
    resource     String,
    subresource  String,
    namespace    String,
    name         String,
    code         Int64,
    reason       String,
    message      String,
    ver          UInt64
) ENGINE = @ENGINE@ ORDER BY (cluster, at, resource, namespace, name, verb, user, code) @TTL(at)@ @SETTINGS@
;
CREATE TABLE IF NOT EXISTS import_spans @ON_CLUSTER@ (
    cluster  String,
    source   String,
    start    DateTime64(3, 'UTC'),
    finish   DateTime64(3, 'UTC'),
    ver      UInt64
) ENGINE = @ENGINE@ ORDER BY (cluster, source, start, finish) @SETTINGS@
