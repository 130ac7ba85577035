-- The time below which the oldest :fraction of what retention may drop lies
-- (size retention), counted over every table it drops rows of, each row by
-- the time at which the same cutoff drops it: occurrences by their last time,
-- versions by theirs (an object's latest only with the object, when it was
-- deleted), gaps by their end, update counters by their minute's end. Of
-- cluster :cluster (NULL: of all clusters). NB: not occurrences alone: one
-- recent Event made "now" the cutoff of a file of imported versions, and
-- every version but each object's latest went in one pass (issue 44.1).
WITH latest(id) AS (SELECT max(id) FROM versions GROUP BY object_id),
droppable(at) AS MATERIALIZED (
    SELECT last FROM occurrences
    WHERE :cluster IS NULL OR event_id IN (SELECT id FROM events WHERE cluster_id = :cluster)
    UNION ALL
    SELECT CASE WHEN v.id IN latest THEN max(v.at, o.deleted) ELSE v.at END
    FROM versions v JOIN objects o ON o.id = v.object_id
    WHERE (:cluster IS NULL OR o.cluster_id = :cluster)
      AND (v.id NOT IN latest OR o.deleted IS NOT NULL)
    UNION ALL
    SELECT finish FROM gaps WHERE :cluster IS NULL OR cluster_id = :cluster
    UNION ALL
    SELECT minute * 60000 + 59999 FROM update_counts
    WHERE :cluster IS NULL OR object_id IN (SELECT id FROM objects WHERE cluster_id = :cluster)
)
SELECT at FROM droppable
ORDER BY at
LIMIT 1 OFFSET (SELECT CAST(COUNT(*) * :fraction AS INTEGER) FROM droppable)
