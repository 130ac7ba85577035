INSERT INTO temp.st_event_objects (cluster, kind, namespace, name, uid, api_version)
VALUES (?, ?, ?, ?, ?, ?)
