SELECT start, finish FROM import_spans WHERE cluster_id = :cluster ORDER BY start, finish
