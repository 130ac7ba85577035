-- Interned strings with this hash (normally one).
SELECT id, s FROM strings WHERE h = :h
