INSERT INTO temp.st_objects (cluster, kind, namespace, name, uid, api_version, created, first_seen, deleted, deleted_after, id, ver)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
