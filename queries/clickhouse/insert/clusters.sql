INSERT INTO clusters (cluster, label, server, added, ver) FORMAT RowBinary
