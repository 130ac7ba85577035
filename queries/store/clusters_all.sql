-- Every cluster of the recording, as query --all-clusters runs them.
SELECT id, uid, label FROM clusters ORDER BY label, uid
