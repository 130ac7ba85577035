-- Migration 4: find a stored Event by its name, not its uid; index Events by
-- object alone.
--
-- Why: the uid index was keyed on random UUIDs, so every new Event touched a
-- random page of it; in a recording of 10 million occurrences that index no
-- longer fits the page cache and each batch rewrote thousands of scattered
-- pages. client-go names Events `<object>.<hex nanoseconds>` and the name is
-- stored as that integer (migration 1): ordered by time, so new Events land at
-- the index's right edge, which stays in cache. The uid stays in the row: the
-- writer compares it among the (rare) Events that share a name, such as one
-- re-created after its TTL with the same name and a new uid.
--
-- The object index no longer carries `last`: it moved on every repeat of an
-- Event, and readers filter time on the rows of one object anyway.
DROP INDEX events_by_uid;
CREATE INDEX events_by_name ON events (name, namespace, cluster_id);
DROP INDEX events_by_object;
CREATE INDEX events_by_object ON events (object_id);
