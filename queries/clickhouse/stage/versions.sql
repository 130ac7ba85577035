INSERT INTO temp.st_versions (cluster, kind, namespace, name, uid, id, at, state, writers, seen, generation, observed_generation, diff, resource_version, ver)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
