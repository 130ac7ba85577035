-- The newest seq: what a destination added now has not been sent yet.
SELECT coalesce(max(seq), 0) FROM outbox
