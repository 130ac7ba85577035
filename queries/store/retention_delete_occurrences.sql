-- Age retention: occurrences last seen before the cutoff.
DELETE FROM occurrences WHERE last < :cutoff
