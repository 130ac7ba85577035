-- Shipping to other stores (docs/schema.md, "Shipping"): an outbox of what changed,
-- filled by triggers, and a cursor per destination, moved only when the
-- destination confirmed a batch.
--
-- NB: the triggers write nothing unless a destination exists (`record --ship`
-- made one), so a recording that ships nowhere pays one lookup of an empty
-- table per row and no page. A key names rows, not values: the shipper reads
-- the rows as they are when it sends, so a row changed ten times between two
-- batches is sent once.

CREATE TABLE ship_destinations (
    id       INTEGER PRIMARY KEY,
    url      TEXT NOT NULL UNIQUE,   -- the destination, without its password
    cursor   INTEGER NOT NULL,       -- the last outbox seq it confirmed
    added    INTEGER NOT NULL,
    shipped  INTEGER NOT NULL DEFAULT 0,  -- rows it confirmed, all sessions
    last_ok  INTEGER                 -- when it last confirmed a batch
);

-- tbl: which table (src/ship/tables.rs); a, b: the row's key there.
CREATE TABLE outbox (
    seq  INTEGER PRIMARY KEY AUTOINCREMENT,
    tbl  INTEGER NOT NULL,
    a    INTEGER NOT NULL,
    b    INTEGER NOT NULL
);

CREATE TRIGGER ship_occurrences_insert AFTER INSERT ON occurrences
WHEN EXISTS (SELECT 1 FROM ship_destinations)
BEGIN INSERT INTO outbox (tbl, a, b) VALUES (1, NEW.event_id, NEW.count); END;

CREATE TRIGGER ship_occurrences_update AFTER UPDATE ON occurrences
WHEN EXISTS (SELECT 1 FROM ship_destinations)
BEGIN INSERT INTO outbox (tbl, a, b) VALUES (1, NEW.event_id, NEW.count); END;

CREATE TRIGGER ship_events_insert AFTER INSERT ON events
WHEN EXISTS (SELECT 1 FROM ship_destinations)
BEGIN INSERT INTO outbox (tbl, a, b) VALUES (2, NEW.id, 0); END;

CREATE TRIGGER ship_events_update AFTER UPDATE OF deleted ON events
WHEN EXISTS (SELECT 1 FROM ship_destinations)
BEGIN INSERT INTO outbox (tbl, a, b) VALUES (2, NEW.id, 0); END;

CREATE TRIGGER ship_objects_insert AFTER INSERT ON objects
WHEN EXISTS (SELECT 1 FROM ship_destinations)
BEGIN INSERT INTO outbox (tbl, a, b) VALUES (3, NEW.id, 0); END;

CREATE TRIGGER ship_objects_update AFTER UPDATE ON objects
WHEN EXISTS (SELECT 1 FROM ship_destinations)
BEGIN INSERT INTO outbox (tbl, a, b) VALUES (3, NEW.id, 0); END;

CREATE TRIGGER ship_versions_insert AFTER INSERT ON versions
WHEN EXISTS (SELECT 1 FROM ship_destinations)
BEGIN INSERT INTO outbox (tbl, a, b) VALUES (4, NEW.id, 0); END;

CREATE TRIGGER ship_versions_update AFTER UPDATE ON versions
WHEN EXISTS (SELECT 1 FROM ship_destinations)
BEGIN INSERT INTO outbox (tbl, a, b) VALUES (4, NEW.id, 0); END;

CREATE TRIGGER ship_update_counts_insert AFTER INSERT ON update_counts
WHEN EXISTS (SELECT 1 FROM ship_destinations)
BEGIN INSERT INTO outbox (tbl, a, b) VALUES (5, NEW.object_id, NEW.minute); END;

CREATE TRIGGER ship_update_counts_update AFTER UPDATE ON update_counts
WHEN EXISTS (SELECT 1 FROM ship_destinations)
BEGIN INSERT INTO outbox (tbl, a, b) VALUES (5, NEW.object_id, NEW.minute); END;

CREATE TRIGGER ship_relations_insert AFTER INSERT ON relations
WHEN EXISTS (SELECT 1 FROM ship_destinations)
BEGIN INSERT INTO outbox (tbl, a, b) VALUES (6, NEW.child_id, 0); END;

CREATE TRIGGER ship_relations_update AFTER UPDATE ON relations
WHEN EXISTS (SELECT 1 FROM ship_destinations)
BEGIN INSERT INTO outbox (tbl, a, b) VALUES (6, NEW.child_id, 0); END;

CREATE TRIGGER ship_gaps_insert AFTER INSERT ON gaps
WHEN EXISTS (SELECT 1 FROM ship_destinations)
BEGIN INSERT INTO outbox (tbl, a, b) VALUES (7, NEW.id, 0); END;

CREATE TRIGGER ship_gaps_update AFTER UPDATE ON gaps
WHEN EXISTS (SELECT 1 FROM ship_destinations)
BEGIN INSERT INTO outbox (tbl, a, b) VALUES (7, NEW.id, 0); END;

CREATE TRIGGER ship_recorder_sessions_insert AFTER INSERT ON recorder_sessions
WHEN EXISTS (SELECT 1 FROM ship_destinations)
BEGIN INSERT INTO outbox (tbl, a, b) VALUES (8, NEW.id, 0); END;

CREATE TRIGGER ship_recorder_sessions_update AFTER UPDATE ON recorder_sessions
WHEN EXISTS (SELECT 1 FROM ship_destinations)
BEGIN INSERT INTO outbox (tbl, a, b) VALUES (8, NEW.id, 0); END;

CREATE TRIGGER ship_clusters_insert AFTER INSERT ON clusters
WHEN EXISTS (SELECT 1 FROM ship_destinations)
BEGIN INSERT INTO outbox (tbl, a, b) VALUES (9, NEW.id, 0); END;

CREATE TRIGGER ship_clusters_update AFTER UPDATE ON clusters
WHEN EXISTS (SELECT 1 FROM ship_destinations)
BEGIN INSERT INTO outbox (tbl, a, b) VALUES (9, NEW.id, 0); END;

CREATE TRIGGER ship_resource_types_insert AFTER INSERT ON resource_types
WHEN EXISTS (SELECT 1 FROM ship_destinations)
BEGIN INSERT INTO outbox (tbl, a, b) VALUES (10, NEW.cluster_id, 0); END;

CREATE TRIGGER ship_resource_types_update AFTER UPDATE ON resource_types
WHEN EXISTS (SELECT 1 FROM ship_destinations)
BEGIN INSERT INTO outbox (tbl, a, b) VALUES (10, NEW.cluster_id, 0); END;

CREATE TRIGGER ship_type_changes_insert AFTER INSERT ON type_changes
WHEN EXISTS (SELECT 1 FROM ship_destinations)
BEGIN INSERT INTO outbox (tbl, a, b) VALUES (11, NEW.id, 0); END;

CREATE TRIGGER ship_refusals_insert AFTER INSERT ON refusals
WHEN EXISTS (SELECT 1 FROM ship_destinations)
BEGIN INSERT INTO outbox (tbl, a, b) VALUES (12, NEW.id, 0); END;

CREATE TRIGGER ship_import_spans_insert AFTER INSERT ON import_spans
WHEN EXISTS (SELECT 1 FROM ship_destinations)
BEGIN INSERT INTO outbox (tbl, a, b) VALUES (13, NEW.id, 0); END;

CREATE TRIGGER ship_watch_positions_insert AFTER INSERT ON watch_positions
WHEN EXISTS (SELECT 1 FROM ship_destinations)
BEGIN INSERT INTO outbox (tbl, a, b) VALUES (14, NEW.cluster_id, 0); END;
