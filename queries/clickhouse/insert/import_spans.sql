INSERT INTO import_spans (cluster, source, start, finish, ver) FORMAT RowBinary
