-- A write kept as a touch that an import has now made a version of.
DELETE FROM touches WHERE cluster_id = :cluster AND audit_id = :id
