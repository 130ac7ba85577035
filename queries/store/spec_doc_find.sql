-- The document an object's next spec change is diffed against.
SELECT digest, doc FROM spec_docs WHERE object_id = :object
