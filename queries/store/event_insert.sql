INSERT INTO events (cluster_id, uid, namespace, name, object_id, field_path, reason, type, action,
                    controller, instance, host, related_id, last, count)
VALUES (:cluster, :uid, :namespace, :name, :object, :field_path, :reason, :type, :action,
        :controller, :instance, :host, :related, :last, :count)
-- A uid already stored inserts nothing; the writer then reads its state instead.
ON CONFLICT (uid, cluster_id) DO NOTHING
