INSERT INTO watched (cluster, resource, updated, ver) FORMAT RowBinary
