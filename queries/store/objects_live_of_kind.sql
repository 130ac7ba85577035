-- Objects of one type that the recording believes still exist: in one
-- namespace, or (:namespace NULL) cluster-wide. NB: a type is its group and
-- kind, never its version: objects stored through v1 are the same objects a
-- list through v2 returns (issue 27.5).
SELECT o.id, o.uid
FROM objects o
JOIN strings av ON av.id = o.api_version
WHERE o.cluster_id = :cluster AND o.kind = :kind
  AND (CASE WHEN instr(av.s, '/') > 0 THEN substr(av.s, 1, instr(av.s, '/') - 1) ELSE '' END) = :grp
  AND (:namespace IS NULL OR o.namespace = :namespace)
  AND o.first_seen IS NOT NULL AND o.deleted IS NULL
