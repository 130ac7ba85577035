INSERT INTO temp.st_gaps (cluster, resource, start, finish, reason, detail, ver)
VALUES (?, ?, ?, ?, ?, ?, ?)
