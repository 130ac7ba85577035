INSERT INTO versions (object_id, at, state, writers, seen)
VALUES (:object, :at, :state, :writers, :seen)
