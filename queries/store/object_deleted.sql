UPDATE objects SET deleted = :at, deleted_after = :after
WHERE id = :id AND deleted IS NULL
