-- The cluster of one object.
SELECT cluster_id FROM objects WHERE id = :id
