INSERT INTO spec_docs (object_id, digest, doc) VALUES (:object, :digest, :doc)
ON CONFLICT (object_id) DO UPDATE SET digest = excluded.digest, doc = excluded.doc
