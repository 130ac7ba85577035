INSERT INTO type_changes (cluster, at, resource, api_version, kind, change, ver) FORMAT RowBinary
