INSERT INTO temp.st_type_changes (cluster, at, resource, api_version, kind, change, ver)
VALUES (?, ?, ?, ?, ?, ?, ?)
