-- The clusters an audit log was ever imported into (audit_ids exists from
-- migration 7 on): in a recording from before migration 13, which versions
-- of theirs an import made was not kept (model::provenance).
SELECT DISTINCT cluster_id FROM audit_ids
