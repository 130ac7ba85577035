INSERT INTO gaps (cluster, resource, start, finish, reason, detail, ver) FORMAT RowBinary
