-- Issue 32: an OTLP destination reads occurrences, versions and gaps only
-- (src/ship/otlp.rs, OTLP_TABLES); with no other destination, the keys of
-- every other table were written, staged past and trimmed for nothing, one
-- per new Event. A destination says whether it reads every table
-- (ClickHouse) or those three (OTLP); the triggers of the other tables fire
-- only while one that reads every table exists.
ALTER TABLE ship_destinations ADD COLUMN every_table INTEGER NOT NULL DEFAULT 1;
UPDATE ship_destinations SET every_table = 0 WHERE url LIKE 'otlp+%';

DROP TRIGGER ship_events_insert;
CREATE TRIGGER ship_events_insert AFTER INSERT ON events
WHEN EXISTS (SELECT 1 FROM ship_destinations WHERE every_table)
BEGIN INSERT INTO outbox (tbl, a, b) VALUES (2, NEW.id, 0); END;

DROP TRIGGER ship_events_update;
CREATE TRIGGER ship_events_update AFTER UPDATE OF deleted ON events
WHEN EXISTS (SELECT 1 FROM ship_destinations WHERE every_table)
BEGIN INSERT INTO outbox (tbl, a, b) VALUES (2, NEW.id, 0); END;

DROP TRIGGER ship_objects_insert;
CREATE TRIGGER ship_objects_insert AFTER INSERT ON objects
WHEN EXISTS (SELECT 1 FROM ship_destinations WHERE every_table)
BEGIN INSERT INTO outbox (tbl, a, b) VALUES (3, NEW.id, 0); END;

DROP TRIGGER ship_objects_update;
CREATE TRIGGER ship_objects_update AFTER UPDATE ON objects
WHEN EXISTS (SELECT 1 FROM ship_destinations WHERE every_table)
BEGIN INSERT INTO outbox (tbl, a, b) VALUES (3, NEW.id, 0); END;

DROP TRIGGER ship_update_counts_insert;
CREATE TRIGGER ship_update_counts_insert AFTER INSERT ON update_counts
WHEN EXISTS (SELECT 1 FROM ship_destinations WHERE every_table)
BEGIN INSERT INTO outbox (tbl, a, b) VALUES (5, NEW.object_id, NEW.minute); END;

DROP TRIGGER ship_update_counts_update;
CREATE TRIGGER ship_update_counts_update AFTER UPDATE ON update_counts
WHEN EXISTS (SELECT 1 FROM ship_destinations WHERE every_table)
BEGIN INSERT INTO outbox (tbl, a, b) VALUES (5, NEW.object_id, NEW.minute); END;

DROP TRIGGER ship_relations_insert;
CREATE TRIGGER ship_relations_insert AFTER INSERT ON relations
WHEN EXISTS (SELECT 1 FROM ship_destinations WHERE every_table)
BEGIN INSERT INTO outbox (tbl, a, b) VALUES (6, NEW.child_id, 0); END;

DROP TRIGGER ship_relations_update;
CREATE TRIGGER ship_relations_update AFTER UPDATE ON relations
WHEN EXISTS (SELECT 1 FROM ship_destinations WHERE every_table)
BEGIN INSERT INTO outbox (tbl, a, b) VALUES (6, NEW.child_id, 0); END;

DROP TRIGGER ship_recorder_sessions_insert;
CREATE TRIGGER ship_recorder_sessions_insert AFTER INSERT ON recorder_sessions
WHEN EXISTS (SELECT 1 FROM ship_destinations WHERE every_table)
BEGIN INSERT INTO outbox (tbl, a, b) VALUES (8, NEW.id, 0); END;

DROP TRIGGER ship_recorder_sessions_update;
CREATE TRIGGER ship_recorder_sessions_update AFTER UPDATE ON recorder_sessions
WHEN EXISTS (SELECT 1 FROM ship_destinations WHERE every_table)
BEGIN INSERT INTO outbox (tbl, a, b) VALUES (8, NEW.id, 0); END;

DROP TRIGGER ship_clusters_insert;
CREATE TRIGGER ship_clusters_insert AFTER INSERT ON clusters
WHEN EXISTS (SELECT 1 FROM ship_destinations WHERE every_table)
BEGIN INSERT INTO outbox (tbl, a, b) VALUES (9, NEW.id, 0); END;

DROP TRIGGER ship_clusters_update;
CREATE TRIGGER ship_clusters_update AFTER UPDATE ON clusters
WHEN EXISTS (SELECT 1 FROM ship_destinations WHERE every_table)
BEGIN INSERT INTO outbox (tbl, a, b) VALUES (9, NEW.id, 0); END;

DROP TRIGGER ship_resource_types_insert;
CREATE TRIGGER ship_resource_types_insert AFTER INSERT ON resource_types
WHEN EXISTS (SELECT 1 FROM ship_destinations WHERE every_table)
BEGIN INSERT INTO outbox (tbl, a, b) VALUES (10, NEW.cluster_id, 0); END;

DROP TRIGGER ship_resource_types_update;
CREATE TRIGGER ship_resource_types_update AFTER UPDATE ON resource_types
WHEN EXISTS (SELECT 1 FROM ship_destinations WHERE every_table)
BEGIN INSERT INTO outbox (tbl, a, b) VALUES (10, NEW.cluster_id, 0); END;

DROP TRIGGER ship_type_changes_insert;
CREATE TRIGGER ship_type_changes_insert AFTER INSERT ON type_changes
WHEN EXISTS (SELECT 1 FROM ship_destinations WHERE every_table)
BEGIN INSERT INTO outbox (tbl, a, b) VALUES (11, NEW.id, 0); END;

DROP TRIGGER ship_refusals_insert;
CREATE TRIGGER ship_refusals_insert AFTER INSERT ON refusals
WHEN EXISTS (SELECT 1 FROM ship_destinations WHERE every_table)
BEGIN INSERT INTO outbox (tbl, a, b) VALUES (12, NEW.id, 0); END;

DROP TRIGGER ship_import_spans_insert;
CREATE TRIGGER ship_import_spans_insert AFTER INSERT ON import_spans
WHEN EXISTS (SELECT 1 FROM ship_destinations WHERE every_table)
BEGIN INSERT INTO outbox (tbl, a, b) VALUES (13, NEW.id, 0); END;

DROP TRIGGER ship_watch_positions_insert;
CREATE TRIGGER ship_watch_positions_insert AFTER INSERT ON watch_positions
WHEN EXISTS (SELECT 1 FROM ship_destinations WHERE every_table)
BEGIN INSERT INTO outbox (tbl, a, b) VALUES (14, NEW.cluster_id, 0); END;
