-- The field a writer took over from another in that minute (string id; NULL:
-- none seen): what a fight between field managers is over. Filled only for
-- objects updated more than twice in a minute whose field sets are read.
ALTER TABLE update_counts ADD COLUMN field INTEGER REFERENCES strings (id);
