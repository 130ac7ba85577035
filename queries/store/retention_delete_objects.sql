-- Objects no stored Event refers to any more.
DELETE FROM objects
WHERE id NOT IN (SELECT object_id FROM events UNION SELECT related_id FROM events WHERE related_id IS NOT NULL)
