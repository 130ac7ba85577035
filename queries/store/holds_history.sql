-- Whether the recording holds any object version (not Events alone).
SELECT EXISTS (SELECT 1 FROM versions)
