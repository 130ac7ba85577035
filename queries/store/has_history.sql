-- Whether the recorder kept object history for this cluster by :at (not
-- Events only): some object watch had stored an object by then.
-- NB: as of :at, not of the whole file. A check early in a recording, before
-- any object watch had stored anything, reads Events alone; the same moment
-- asked again later must read them the same way (issue 19, item 14).
SELECT EXISTS (
    SELECT 1 FROM objects
    WHERE cluster_id = :cluster AND first_seen IS NOT NULL AND first_seen <= :at)
