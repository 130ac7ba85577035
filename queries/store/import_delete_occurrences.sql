-- The occurrences of an Event imported from kubectl text, which a richer
-- import of the same Event (JSON, or text with more count) replaces; how many
-- occurrences each row stood for, for the import to count what it replaced.
DELETE FROM occurrences WHERE event_id = :id RETURNING n
