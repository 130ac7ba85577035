INSERT INTO temp.st_refusals (cluster, at, verb, user, api_group, resource, subresource, namespace, name, code, reason, message, ver)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
