-- Whether an audit log was ever imported into this recording (audit_ids
-- exists from migration 7 on): a recording from before migration 13 that had
-- one does not say which versions it made (model::provenance).
SELECT EXISTS (SELECT 1 FROM audit_ids)
