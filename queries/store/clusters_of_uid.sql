-- The recorded clusters (a recorder session ever ran) that hold an object of this uid.
SELECT DISTINCT o.cluster_id FROM objects o
WHERE o.uid = :uid AND o.uid <> ''
  AND EXISTS (SELECT 1 FROM recorder_sessions s WHERE s.cluster_id = o.cluster_id)
