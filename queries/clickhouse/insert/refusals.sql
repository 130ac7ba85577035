INSERT INTO refusals (cluster, at, verb, user, api_group, resource, subresource, namespace, name, code, reason, message, ver) FORMAT RowBinary
