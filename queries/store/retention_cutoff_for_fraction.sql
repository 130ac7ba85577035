-- The time below which the oldest :fraction of occurrences lie (size retention).
SELECT last FROM occurrences ORDER BY last
LIMIT 1 OFFSET (SELECT CAST(COUNT(*) * :fraction AS INTEGER) FROM occurrences)
