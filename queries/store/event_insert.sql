-- The writer has looked the name up first (event_find.sql): the uid is new.
INSERT INTO events (cluster_id, uid, namespace, name, object_id, field_path, reason, type, action,
                    controller, instance, host, related_id, last, count)
VALUES (:cluster, :uid, :namespace, :name, :object, :field_path, :reason, :type, :action,
        :controller, :instance, :host, :related, :last, :count)
