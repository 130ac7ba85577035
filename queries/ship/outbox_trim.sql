-- What every destination confirmed leaves the outbox; with no destination, all of it.
DELETE FROM outbox
WHERE seq <= coalesce((SELECT min(cursor) FROM ship_destinations), (SELECT max(seq) FROM outbox))
