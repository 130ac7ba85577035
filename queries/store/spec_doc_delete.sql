-- An object that is gone needs no baseline for its next change.
DELETE FROM spec_docs WHERE object_id = :object
