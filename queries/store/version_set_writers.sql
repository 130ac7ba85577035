-- An audit log names the writer of a version the recorder saw: its
-- provenance (versions.seen's bits 2-3, model::provenance) becomes 1,
-- "recorded, writer from an audit log", unless it already says otherwise.
UPDATE versions
SET writers = :writers,
    seen = CASE WHEN (seen >> 2) = 0 THEN (seen & 3) | 4 ELSE seen END
WHERE id = :id
