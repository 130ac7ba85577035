INSERT INTO import_spans (cluster_id, source, start, finish) VALUES (:cluster, :source, :start, :finish)
