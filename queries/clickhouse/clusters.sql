SELECT cluster, label FROM clusters FINAL ORDER BY label, cluster
