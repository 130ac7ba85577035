-- The writer has looked the name up first (event_find.sql): the uid is new.
-- :id is NULL outside a batch (SQLite picks the next), else the writer's own
-- (see event_next_id.sql).
INSERT INTO events (id, cluster_id, uid, namespace, name, object_id, field_path, reason, type,
                    action, controller, instance, host, related_id, last, count)
VALUES (:id, :cluster, :uid, :namespace, :name, :object, :field_path, :reason, :type, :action,
        :controller, :instance, :host, :related, :last, :count)
