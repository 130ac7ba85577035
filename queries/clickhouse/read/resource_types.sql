SELECT cluster, api_version, plural, kind, singular, short_names, namespaced, ver
FROM resource_types FINAL
WHERE has(?, cluster)
