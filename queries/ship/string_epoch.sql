-- How many times strings were deleted (migration 11): a reader's cache of
-- strings by id holds while this stays the same.
SELECT n FROM string_epoch
