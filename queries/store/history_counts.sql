-- Update counters of one cluster in [:from, :to) minutes (epoch ms / 60000).
SELECT c.object_id AS object_id, c.minute AS minute, m.s AS manager, c.updates AS updates,
       c.versions AS versions, c.generation AS generation, f.s AS field
FROM update_counts c
JOIN objects o ON o.id = c.object_id
JOIN strings m ON m.id = c.manager
LEFT JOIN strings f ON f.id = c.field
WHERE o.cluster_id = :cluster AND c.minute >= :from AND c.minute < :to
