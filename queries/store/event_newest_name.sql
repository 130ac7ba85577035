-- The greatest integer Event name stored (any cluster): client-go names Events
-- `<object>.<hex nanoseconds>`, stored as that integer, so a new Event's name is
-- normally greater, and then it cannot be stored yet. Integers sort before text,
-- so this reads one end of events_by_name.
SELECT name FROM events WHERE name < '' ORDER BY name DESC LIMIT 1
