INSERT INTO ship_destinations (url, cursor, added) VALUES (:url, :cursor, :now) RETURNING id
