INSERT INTO update_counts (cluster, kind, namespace, name, uid, minute, manager, field, updates, versions, generation, ver) FORMAT RowBinary
