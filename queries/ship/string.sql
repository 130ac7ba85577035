-- One interned string, by id: the outbox reader resolves each id once a batch.
SELECT s FROM strings WHERE id = :id
