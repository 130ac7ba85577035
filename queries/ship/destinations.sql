SELECT id, url, cursor FROM ship_destinations ORDER BY id
