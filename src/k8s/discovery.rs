//! API discovery: which resource types the cluster serves, with their short
//! names and verbs, through aggregated discovery (two requests for the whole
//! cluster). Group versions that discovery marks stale (an aggregated API that
//! is down) are reported, not dropped.

use kube::Client;
use kube::core::discovery::v2::APIGroupDiscoveryList;

use crate::model::{Discovered, ResourceType, StaleGroup};

/// Discovers every resource type; only the preferred (first listed) version of each group.
pub async fn discover(client: &Client) -> Result<Discovered, kube::Error> {
    let core = client.list_core_api_versions_aggregated().await?;
    let groups = client.list_api_groups_aggregated().await?;
    let mut found = Discovered::default();
    convert(&core, &mut found);
    convert(&groups, &mut found);
    Ok(found)
}

fn convert(list: &APIGroupDiscoveryList, out: &mut Discovered) {
    for group in &list.items {
        let name = group
            .metadata
            .as_ref()
            .and_then(|m| m.name.clone())
            .unwrap_or_default();
        for (index, version) in group.versions.iter().enumerate() {
            let v = version.version.clone().unwrap_or_default();
            if version.freshness.as_deref() == Some("Stale") {
                out.stale.push(StaleGroup {
                    group_version: if name.is_empty() {
                        v.clone()
                    } else {
                        format!("{name}/{v}")
                    },
                });
            }
            if index > 0 {
                continue;
            }
            for r in &version.resources {
                let Some(plural) = r.resource.clone() else {
                    continue;
                };
                let kind = r
                    .response_kind
                    .as_ref()
                    .and_then(|k| k.kind.clone())
                    .unwrap_or_default();
                out.types.push(ResourceType {
                    group: name.clone(),
                    version: v.clone(),
                    kind,
                    singular: r.singular_resource.clone().unwrap_or_default(),
                    plural,
                    short_names: r.short_names.clone(),
                    namespaced: r.scope.as_deref() == Some("Namespaced"),
                    verbs: r.verbs.clone(),
                });
            }
        }
    }
}

/// kube's description of a type, for building requests.
pub fn api_resource(t: &ResourceType) -> kube::core::ApiResource {
    kube::core::ApiResource {
        group: t.group.clone(),
        version: t.version.clone(),
        api_version: t.api_version(),
        kind: t.kind.clone(),
        plural: t.plural.clone(),
    }
}
