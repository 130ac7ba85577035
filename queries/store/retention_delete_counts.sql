DELETE FROM update_counts WHERE minute < :cutoff / 60000
