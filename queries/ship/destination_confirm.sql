-- A confirmed batch. NB: never backwards: a confirmation that arrives late
-- (the shipper ran ahead of a commit) does not move the cursor back.
UPDATE ship_destinations
SET cursor = max(cursor, :cursor), shipped = shipped + :rows, last_ok = :now
WHERE id = :id
