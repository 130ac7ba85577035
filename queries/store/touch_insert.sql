-- One touch (see migration 012); ignored (0 rows) when this auditID was kept before.
INSERT OR IGNORE INTO touches (cluster_id, audit_id, at, verb, user, api_group, resource, subresource, namespace, name, code, detail, why)
VALUES (:cluster, :id, :at, :verb, :user, :grp, :resource, :subresource, :namespace, :name, :code, :detail, :why)
