-- Registers a cluster by its kube-system uid; refreshes its label and server.
INSERT INTO clusters (uid, label, server, added) VALUES (:uid, :label, :server, :now)
ON CONFLICT (uid) DO UPDATE SET label = excluded.label, server = excluded.server
RETURNING id
