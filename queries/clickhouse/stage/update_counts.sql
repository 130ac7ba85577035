INSERT INTO temp.st_update_counts (cluster, kind, namespace, name, uid, minute, manager, field, updates, versions, generation, ver)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
