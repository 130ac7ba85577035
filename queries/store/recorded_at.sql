-- Whether a recorder (not an import) was running for the cluster at :at.
SELECT EXISTS (
    SELECT 1 FROM recorder_sessions
    WHERE cluster_id = :cluster AND mode IN ('watch', 'once')
      AND started <= :at AND COALESCE(stopped, heartbeat) >= :at)
