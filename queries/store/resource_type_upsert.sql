INSERT INTO resource_types (cluster_id, api_version, plural, kind, singular, short_names, namespaced)
VALUES (:cluster, :api_version, :plural, :kind, :singular, :short_names, :namespaced)
ON CONFLICT (cluster_id, api_version, plural) DO UPDATE SET
    kind = excluded.kind, singular = excluded.singular,
    short_names = excluded.short_names, namespaced = excluded.namespaced
