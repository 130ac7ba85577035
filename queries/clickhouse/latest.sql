-- Derived tables of the ClickHouse schema (docs/schema.md, "ClickHouse"): made
-- after schema.sql's, by the same --ship-create-schema, with the same markers.
-- Statements are separated by a line holding only ';'.
--
-- Each object's latest version, kept past the TTL of `versions` (issue 44.2):
-- SQLite's retention keeps it (retention_delete_versions.sql), so a reader of
-- the store must see an object unchanged for longer than --retain as the
-- recording does. No TTL. The newest `at` wins (among equals, the last
-- inserted); the view below fills it from every insert into `versions`.
-- Readers (read/versions.sql, timeline/structure.sql) add the rows the TTL
-- dropped from `versions`.
CREATE TABLE IF NOT EXISTS latest_versions @ON_CLUSTER@ AS versions
ENGINE = @ENGINE(at)@ ORDER BY (cluster, kind, namespace, name, uid) @SETTINGS@
;
-- A schema made before the table existed: its versions, once, while it is empty.
INSERT INTO latest_versions SELECT * FROM versions WHERE (SELECT count() FROM latest_versions) = 0
;
CREATE MATERIALIZED VIEW IF NOT EXISTS latest_versions_fill @ON_CLUSTER@ TO latest_versions
AS SELECT * FROM versions
