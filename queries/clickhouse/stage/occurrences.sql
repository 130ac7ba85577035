INSERT INTO temp.st_occurrences (cluster, event_uid, event_namespace, event_name, count, n, first, last, message, ver)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
