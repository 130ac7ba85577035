INSERT INTO versions (object_id, at, state, writers, seen, generation, observed_generation, diff)
VALUES (:object, :at, :state, :writers, :seen, :generation, :observed, :diff)
