INSERT INTO versions (object_id, at, state, writers, seen, generation, observed_generation, diff, resource_version)
VALUES (:object, :at, :state, :writers, :seen, :generation, :observed, :diff, :rv)
