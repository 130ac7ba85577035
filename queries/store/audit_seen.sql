-- One audit entry taken by an import; ignored (0 rows) when taken before.
INSERT OR IGNORE INTO audit_ids (cluster_id, audit_id, at) VALUES (:cluster, :id, :at)
