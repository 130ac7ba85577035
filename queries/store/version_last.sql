-- An object's last version, and the digest of the document its next spec
-- change is diffed against (NULL: none kept): what the writer needs of an
-- object it has not seen since it started, in one lookup; and when that
-- version was stored (a version dated by its write stays after it).
SELECT s.h, v.generation, v.observed_generation, s.s,
       (SELECT d.digest FROM spec_docs d WHERE d.object_id = v.object_id) AS doc_digest,
       v.at
FROM versions v JOIN strings s ON s.id = v.state
WHERE v.object_id = :object
ORDER BY v.at DESC, v.id DESC
LIMIT 1
