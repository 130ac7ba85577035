-- Where each version comes from (model::Provenance), in the two bits above
-- versions.seen's own (0 listed, 1 added, 2 modified, 3 deleted):
--   0 recorded by a watch, 1 recorded with its writer named by an audit log,
--   2 made from an imported audit log's entry, 3 unknown.
-- No column of its own: a recording pays no byte for it, and every sink that
-- ships `seen` carries it.
--
-- Only an audit import makes versions other than the recorder's. So in a
-- cluster no audit log was imported into, every version stored so far was
-- recorded (0, as stored); in one that had an import, which one made a
-- version was not kept: unknown (3), not a guess.
UPDATE versions SET seen = (seen & 3) | 12
WHERE object_id IN (
    SELECT o.id FROM objects o
    WHERE o.cluster_id IN (SELECT DISTINCT cluster_id FROM audit_ids)
);
