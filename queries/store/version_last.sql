SELECT s.h, v.generation, v.observed_generation, s.s
FROM versions v JOIN strings s ON s.id = v.state
WHERE v.object_id = :object
ORDER BY v.at DESC, v.id DESC
LIMIT 1
