//! Which resource types the recorder keeps the history of: by default every
//! type discovery offers that can be listed and watched (built-in,
//! aggregated and custom), except Events, which have their own stream, and
//! Secrets; `--kinds` narrows that to a list and `--exclude-kinds` removes
//! types. Pure over [`Discovered`], so the choice is unit-tested.

use anyhow::Context;

use crate::model::{Discovered, ResourceType};

/// Types left out unless `--kinds` names them, as `(group, plural)`.
/// NB: Secrets, because listing them moves every Secret's data over the wire
/// even though the recorder stores none of it; Events are recorded by their
/// own watch (both `events` and `events.events.k8s.io` are the same objects).
const NOT_BY_DEFAULT: &[(&str, &str)] =
    &[("", "secrets"), ("", "events"), ("events.k8s.io", "events")];

/// Why `--exclude-kinds` cannot name Events.
pub const EVENTS_NOT_EXCLUDED: &str = "Events are always recorded, by their own watch, whatever \
    --kinds and --exclude-kinds say (those choose the types whose objects' history is kept); \
    to keep fewer Events, record fewer namespaces (-n) or keep them for less time (--retain)";

/// Types whose objects are never recorded as objects, even when named.
const NEVER: &[(&str, &str)] = &[("", "events"), ("events.k8s.io", "events")];

fn listed_in(list: &[(&str, &str)], t: &ResourceType) -> bool {
    list.iter().any(|(g, p)| t.group == *g && t.plural == *p)
}

fn watchable(t: &ResourceType) -> bool {
    t.can("list") && t.can("watch")
}

fn resolve<'a>(
    discovered: &'a Discovered,
    flag: &str,
    name: &str,
) -> anyhow::Result<&'a ResourceType> {
    discovered.resolve(name).with_context(|| {
        format!(
            "{flag} {name}: this cluster serves no such resource type; `kubectl api-resources` lists them"
        )
    })
}

/// The object types to watch. `kinds` empty: every listable and watchable
/// type but Events and Secrets; else exactly those (an unknown name is an
/// error naming it). `exclude` removes types; an unknown name there is an
/// error too, so a typo does not silently record what it meant to leave out.
pub fn select(
    discovered: &Discovered,
    kinds: &[String],
    exclude: &[String],
) -> anyhow::Result<Vec<ResourceType>> {
    let names = |list: &[String]| -> Vec<String> {
        list.iter()
            .map(|n| n.trim().to_string())
            .filter(|n| !n.is_empty())
            .collect()
    };
    let mut excluded: Vec<String> = Vec::new();
    for name in names(exclude) {
        let t = resolve(discovered, "--exclude-kinds", &name)?;
        if listed_in(NEVER, t) {
            anyhow::bail!("--exclude-kinds {name}: {}", EVENTS_NOT_EXCLUDED);
        }
        excluded.push(t.full_name());
    }
    let mut types: Vec<ResourceType> = Vec::new();
    let kinds = names(kinds);
    if kinds.is_empty() {
        for t in &discovered.types {
            if watchable(t)
                && !listed_in(NOT_BY_DEFAULT, t)
                && !types.iter().any(|x| x.full_name() == t.full_name())
            {
                types.push(t.clone());
            }
        }
    } else {
        for name in kinds {
            let t = resolve(discovered, "--kinds", &name)?;
            if listed_in(NEVER, t) {
                anyhow::bail!(
                    "--kinds {name}: Events are always recorded by their own watch; leave them out of --kinds"
                );
            }
            if !watchable(t) {
                anyhow::bail!(
                    "--kinds {name}: {} cannot be listed and watched (verbs: {})",
                    t.full_name(),
                    t.verbs.join(",")
                );
            }
            if !types.iter().any(|x| x.full_name() == t.full_name()) {
                types.push(t.clone());
            }
        }
    }
    types.retain(|t| !excluded.contains(&t.full_name()));
    Ok(types)
}

/// [`select`] again while recording: names that no longer resolve (a CRD
/// named in `--kinds` or `--exclude-kinds` that was removed) are skipped.
pub fn select_present(
    discovered: &Discovered,
    kinds: &[String],
    exclude: &[String],
) -> Vec<ResourceType> {
    let present = |list: &[String]| -> Vec<String> {
        list.iter()
            .filter(|n| discovered.resolve(n.trim()).is_some())
            .cloned()
            .collect()
    };
    let kinds_present = present(kinds);
    if !kinds.is_empty() && kinds_present.is_empty() {
        return Vec::new();
    }
    select(discovered, &kinds_present, &present(exclude)).unwrap_or_default()
}

/// Whether an API group is Kubernetes' own (the core group, the groups
/// without a dot such as `apps`, and `*.k8s.io`), not a CRD's or an
/// aggregated API's. Approximate: a CRD may use a `*.k8s.io` group (Gateway API).
pub fn built_in_group(group: &str) -> bool {
    group.is_empty() || !group.contains('.') || group.ends_with(".k8s.io")
}

/// Whether a type's objects are Secrets: watched through metadata only, so
/// that their data never crosses the wire.
pub fn metadata_only(t: &ResourceType) -> bool {
    t.group.is_empty() && t.plural == "secrets"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(group: &str, plural: &str, kind: &str, verbs: &[&str]) -> ResourceType {
        ResourceType {
            group: group.into(),
            version: "v1".into(),
            kind: kind.into(),
            plural: plural.into(),
            singular: kind.to_ascii_lowercase(),
            short_names: Vec::new(),
            namespaced: true,
            verbs: verbs.iter().map(|v| v.to_string()).collect(),
        }
    }

    fn cluster() -> Discovered {
        let lw = &["get", "list", "watch"];
        Discovered {
            types: vec![
                t("", "pods", "Pod", lw),
                t("", "events", "Event", lw),
                t("", "secrets", "Secret", lw),
                t("", "configmaps", "ConfigMap", lw),
                t("", "bindings", "Binding", &["create"]),
                t("events.k8s.io", "events", "Event", lw),
                t("coordination.k8s.io", "leases", "Lease", lw),
                t("drill.example.com", "databases", "Database", lw),
            ],
            stale: Vec::new(),
        }
    }

    fn names(types: &[ResourceType]) -> Vec<String> {
        types.iter().map(ResourceType::full_name).collect()
    }

    #[test]
    fn by_default_every_watchable_type_but_events_and_secrets() {
        let types = select(&cluster(), &[], &[]).unwrap();
        assert_eq!(
            names(&types),
            [
                "pods",
                "configmaps",
                "leases.coordination.k8s.io",
                "databases.drill.example.com"
            ]
        );
    }

    #[test]
    fn kinds_narrows_to_its_list_and_may_name_secrets() {
        let kinds = vec!["secrets".to_string(), "db".to_string(), "databases".into()];
        let mut discovered = cluster();
        discovered.types[7].short_names = vec!["db".into()];
        let types = select(&discovered, &kinds, &[]).unwrap();
        assert_eq!(names(&types), ["secrets", "databases.drill.example.com"]);
        assert!(metadata_only(&types[0]));
    }

    #[test]
    fn exclude_kinds_removes_types_and_names_an_unknown_one() {
        let exclude = vec!["leases".to_string(), "cm".into()];
        let mut discovered = cluster();
        discovered.types[3].short_names = vec!["cm".into()];
        let types = select(&discovered, &[], &exclude).unwrap();
        assert_eq!(names(&types), ["pods", "databases.drill.example.com"]);
        let err = select(&discovered, &[], &["leasez".to_string()]).unwrap_err();
        assert!(err.to_string().contains("--exclude-kinds leasez"), "{err}");
    }

    /// Regression (issue 27.18): `--exclude-kinds events` was accepted and
    /// ignored; Events are always recorded.
    #[test]
    fn exclude_kinds_events_is_refused_not_ignored() {
        for name in ["events", "events.events.k8s.io", "Event"] {
            let err = select(&cluster(), &[], &[name.to_string()]).unwrap_err();
            assert!(
                err.to_string().starts_with(&format!(
                    "--exclude-kinds {name}: Events are always recorded"
                )),
                "{err}"
            );
        }
    }

    #[test]
    fn kinds_refuses_events_and_types_that_cannot_be_watched() {
        let err = select(&cluster(), &["events".to_string()], &[]).unwrap_err();
        assert!(err.to_string().contains("own watch"), "{err}");
        let err = select(&cluster(), &["bindings".to_string()], &[]).unwrap_err();
        assert!(
            err.to_string().contains("cannot be listed and watched"),
            "{err}"
        );
    }
}
