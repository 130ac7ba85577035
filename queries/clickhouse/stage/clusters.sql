INSERT INTO temp.st_clusters (cluster, label, server, added, ver)
VALUES (?, ?, ?, ?, ?)
