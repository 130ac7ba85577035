SELECT cursor FROM ship_destinations WHERE id = :id
