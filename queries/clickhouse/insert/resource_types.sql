INSERT INTO resource_types (cluster, api_version, plural, kind, singular, short_names, namespaced, ver) FORMAT RowBinary
