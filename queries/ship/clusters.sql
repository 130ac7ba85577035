SELECT c.uid, c.label, c.server, c.added, 0
FROM temp.ship_keys k JOIN clusters c ON c.id = k.a
WHERE k.tbl = 9
