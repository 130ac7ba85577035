-- Edges of objects that were deleted before the cutoff.
DELETE FROM relations
WHERE child_id IN (SELECT id FROM objects WHERE deleted < :cutoff)
