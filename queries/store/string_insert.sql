INSERT INTO strings (h, s) VALUES (:h, :s)
