INSERT INTO refusals (cluster_id, at, verb, user, api_group, resource, subresource, namespace, name, code, reason, message, refused_by)
VALUES (:cluster, :at, :verb, :user, :grp, :resource, :subresource, :namespace, :name, :code, :reason, :message, :refused_by)
