-- Migration 3: a version's generation and observedGeneration in columns of
-- their own, out of the interned state text. In a spec fight both rise on
-- every write; kept in the text they made every state unique (166 bytes a
-- version), in columns the two alternating states are stored once.
-- Rows written before keep both inside the state text (generation here is 0).
ALTER TABLE versions ADD COLUMN generation INTEGER NOT NULL DEFAULT 0;
ALTER TABLE versions ADD COLUMN observed_generation INTEGER;
