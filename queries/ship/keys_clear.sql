DELETE FROM temp.ship_keys
