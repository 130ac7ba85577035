INSERT OR IGNORE INTO temp.ship_keys (tbl, a, b) VALUES (:tbl, :a, :b)
