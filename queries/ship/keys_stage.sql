-- One batch's keys (seqs :first to :last) of the tables its destination reads
-- (:codes, a JSON array of outbox codes), deduplicated by the key table.
-- NB: one statement, not one insert a key from Rust: that was a tenth of
-- the shipper's reading (issue 32).
INSERT OR IGNORE INTO temp.ship_keys (tbl, a, b)
SELECT tbl, a, b FROM outbox
WHERE seq BETWEEN :first AND :last AND tbl IN (SELECT value FROM json_each(:codes))
