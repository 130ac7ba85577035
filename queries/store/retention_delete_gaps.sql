DELETE FROM gaps WHERE finish < :cutoff
