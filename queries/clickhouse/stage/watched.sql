INSERT INTO temp.st_watched (cluster, resource, updated, ver)
VALUES (?, ?, ?, ?)
