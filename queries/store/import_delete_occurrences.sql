-- The occurrences of an Event imported from kubectl text, which a richer
-- import of the same Event (JSON, or text with more count) replaces.
DELETE FROM occurrences WHERE event_id = :id
