-- Every version of one object, oldest first.
SELECT v.at AS at, st.s AS state, w.s AS writers, v.seen AS seen, v.generation AS generation,
       v.observed_generation AS observed_generation, d.s AS diff
FROM versions v
JOIN strings st ON st.id = v.state
JOIN strings w ON w.id = v.writers
LEFT JOIN strings d ON d.id = v.diff
WHERE v.object_id = :object
ORDER BY v.at, v.id
