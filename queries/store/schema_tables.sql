-- The names of the tables in the file (what tells a recording from another program's file).
SELECT name FROM sqlite_schema WHERE type = 'table'
