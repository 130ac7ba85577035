SELECT id, cursor FROM ship_destinations WHERE url = :url
