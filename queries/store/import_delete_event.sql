-- An Event imported from kubectl text, replaced by a richer import of it (its
-- occurrences go first, import_delete_occurrences.sql).
DELETE FROM events WHERE id = :id
