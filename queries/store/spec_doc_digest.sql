-- Only the digest of an object's last diffed document: enough to tell a change.
SELECT digest FROM spec_docs WHERE object_id = :object
