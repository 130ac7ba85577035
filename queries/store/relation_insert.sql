INSERT OR IGNORE INTO relations (child_id, rel, parent_kind, parent_namespace, parent_name, parent_uid, since)
VALUES (:child, :rel, :kind, :namespace, :name, :uid, :since)
