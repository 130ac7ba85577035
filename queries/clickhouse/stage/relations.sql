INSERT INTO temp.st_relations (cluster, kind, namespace, name, uid, rel, parent_kind, parent_namespace, parent_name, parent_uid, since, ver)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
