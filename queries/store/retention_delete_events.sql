-- Events left with no occurrence after retention.
DELETE FROM events
WHERE last < :cutoff AND NOT EXISTS (SELECT 1 FROM occurrences o WHERE o.event_id = events.id)
