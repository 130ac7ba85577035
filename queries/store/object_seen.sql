UPDATE objects
SET first_seen = coalesce(first_seen, :at), created = coalesce(created, :created)
WHERE id = :id
