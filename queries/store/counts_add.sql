INSERT INTO update_counts (object_id, minute, manager, updates, versions, generation, field)
VALUES (:object, :minute, :manager, :updates, :versions, :generation, :field)
ON CONFLICT (object_id, minute, manager) DO UPDATE SET
    updates = updates + excluded.updates,
    versions = versions + excluded.versions,
    generation = generation + excluded.generation,
    field = COALESCE(excluded.field, field)
