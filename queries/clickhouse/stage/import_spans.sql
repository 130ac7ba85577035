INSERT INTO temp.st_import_spans (cluster, source, start, finish, ver)
VALUES (?, ?, ?, ?, ?)
