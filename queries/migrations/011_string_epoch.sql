-- Issue 32: the shipper keeps the strings it read from one batch to the next
-- (src/ship/outbox.rs, StringCache). `strings.id` is a rowid: once retention
-- deleted the newest strings, a new string may be given an id a cache still
-- holds. Every deletion of a string counts here, in the deleting transaction,
-- so a reader whose snapshot shows another count than its cache drops it.
-- NB: a trigger, not the retention code: whoever deletes strings, from
-- whatever process (two recorders of two clusters may share a file), counts.
CREATE TABLE string_epoch (n INTEGER NOT NULL);
INSERT INTO string_epoch (n) VALUES (0);

CREATE TRIGGER strings_deleted AFTER DELETE ON strings
BEGIN UPDATE string_epoch SET n = n + 1; END;
