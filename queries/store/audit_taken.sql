-- Whether an import took this audit entry before (as a version, an Event, a refusal).
SELECT EXISTS (SELECT 1 FROM audit_ids WHERE cluster_id = :cluster AND audit_id = :id)
