-- A new destination; :every_table 0 for one that reads occurrences, versions and gaps only (OTLP).
INSERT INTO ship_destinations (url, cursor, added, every_table)
VALUES (:url, :cursor, :now, :every_table) RETURNING id
