INSERT INTO update_counts (object_id, minute, manager, updates, versions, generation)
VALUES (:object, :minute, :manager, :updates, :versions, :generation)
ON CONFLICT (object_id, minute, manager) DO UPDATE SET
    updates = updates + excluded.updates,
    versions = versions + excluded.versions,
    generation = generation + excluded.generation
