INSERT INTO objects (cluster, kind, namespace, name, uid, api_version, created, first_seen, deleted, deleted_after, id, ver) FORMAT RowBinary
