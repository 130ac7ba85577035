SELECT api_version, plural, kind, singular, short_names, namespaced
FROM resource_types WHERE cluster_id = :cluster
