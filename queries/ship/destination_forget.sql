DELETE FROM ship_destinations WHERE id = :id
