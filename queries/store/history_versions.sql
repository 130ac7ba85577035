-- Every version of one object, oldest first.
SELECT v.at, st.s, w.s, v.seen, v.generation, v.observed_generation, d.s
FROM versions v
JOIN strings st ON st.id = v.state
JOIN strings w ON w.id = v.writers
LEFT JOIN strings d ON d.id = v.diff
WHERE v.object_id = :object
ORDER BY v.at, v.id
