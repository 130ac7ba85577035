//! Reads the feed of `kubectl diag changes` from the recording: spec diffs,
//! creations and deletions, and types that appeared or went, as plain
//! [`Item`]s in time order.

use rusqlite::named_params;

use super::{Recording, StoreError};
use crate::changes::{Item, Owner, What};

const SQL_SPECS: &str = include_str!("../../queries/store/changes_specs.sql");
const SQL_LIFECYCLE: &str = include_str!("../../queries/store/changes_lifecycle.sql");
const SQL_TYPES: &str = include_str!("../../queries/store/changes_types.sql");

fn owner(text: Option<String>) -> Option<Owner> {
    let text = text?;
    let (kind, name) = text.split_once('/')?;
    Some(Owner {
        kind: kind.to_string(),
        name: name.to_string(),
    })
}

/// The writers of a spec change or a creation: a `/status` writer only
/// updated status in the same write, so it is left out when another wrote too.
fn writers(text: Option<String>) -> Vec<String> {
    let all: Vec<String> = text
        .unwrap_or_default()
        .split(',')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    let main: Vec<String> = all
        .iter()
        .filter(|w| !w.ends_with("/status"))
        .cloned()
        .collect();
    if main.is_empty() { all } else { main }
}

/// `(cluster, since, until, namespace)`: what `feed` reads.
type Window<'a> = (i64, i64, i64, Option<&'a str>);

impl Recording {
    /// Every change of `cluster` in `[since, until]`, in `namespace` when given
    /// (then cluster-scoped objects and types are left out), oldest first.
    pub fn feed(
        &self,
        cluster: i64,
        since: i64,
        until: i64,
        namespace: Option<&str>,
    ) -> Result<Vec<Item>, StoreError> {
        let window = (cluster, since, until, namespace);
        let mut items: Vec<Item> = Vec::new();
        self.spec_items(window, &mut items)?;
        self.lifecycle_items(window, &mut items)?;
        if namespace.is_none() {
            self.type_items(window, &mut items)?;
        }
        self.touch_items(window, &mut items)?;
        // NB: stable, so that at one moment a type comes before its objects and
        // a spec change before the deletions it caused, as read.
        items.sort_by_key(|i| i.at);
        Ok(crate::changes::join_touches(items))
    }

    /// The spec changes, with their diffs and writers.
    fn spec_items(
        &self,
        (cluster, since, until, namespace): Window,
        items: &mut Vec<Item>,
    ) -> Result<(), StoreError> {
        let params = named_params! {
            ":cluster": cluster, ":since": since, ":until": until, ":namespace": namespace,
        };
        let mut st = self
            .conn
            .prepare_cached(SQL_SPECS)
            .map_err(self.q("changes"))?;
        let rows = st
            .query_map(params, |r| {
                Ok(Item {
                    at: r.get("at")?,
                    kind: r.get("kind")?,
                    namespace: r.get("namespace")?,
                    name: r.get("name")?,
                    owner: owner(r.get("owner")?),
                    writers: writers(r.get("writers")?),
                    what: What::Spec {
                        diff: crate::specdiff::decode(&r.get::<_, String>("diff")?),
                        generation: r.get("generation")?,
                    },
                    provenance: self.provenance(cluster, r.get("seen")?),
                })
            })
            .map_err(self.q("changes"))?;
        for row in rows {
            items.push(row.map_err(self.q("changes"))?);
        }
        Ok(())
    }

    /// Creations, first sightings by a writer, and deletions.
    fn lifecycle_items(
        &self,
        (cluster, since, until, namespace): Window,
        items: &mut Vec<Item>,
    ) -> Result<(), StoreError> {
        let params = named_params! {
            ":cluster": cluster, ":since": since, ":until": until, ":namespace": namespace,
        };
        let mut st = self
            .conn
            .prepare_cached(SQL_LIFECYCLE)
            .map_err(self.q("changes"))?;
        let rows = st
            .query_map(params, |r| {
                let base = Item {
                    at: 0,
                    kind: r.get("kind")?,
                    namespace: r.get("namespace")?,
                    name: r.get("name")?,
                    owner: owner(r.get("owner")?),
                    writers: Vec::new(),
                    what: What::Created,
                    provenance: self.provenance(
                        cluster,
                        r.get::<_, Option<i64>>("first_stored_seen")?.unwrap_or(0),
                    ),
                };
                let created: Option<i64> = r.get("created")?;
                let deleted: Option<i64> = r.get("deleted")?;
                let after: Option<i64> = r.get("deleted_after")?;
                let first_writers = writers(r.get("writers")?);
                let first_seen_as: Option<i64> = r.get("first_seen_as")?;
                let first_at: Option<i64> = r.get("first_at")?;
                // Seen first as a change (2) or a deletion (3): not its creation.
                let sighted = matches!(first_seen_as, Some(2 | 3));
                let mut out = Vec::new();
                if let Some(c) = created.filter(|c| (since..=until).contains(c)) {
                    out.push(Item {
                        at: c,
                        writers: if sighted {
                            Vec::new()
                        } else {
                            first_writers.clone()
                        },
                        ..base.clone()
                    });
                }
                if sighted
                    && let Some(at) = first_at.filter(|a| (since..=until).contains(a))
                    && !first_writers.is_empty()
                {
                    out.push(Item {
                        at,
                        writers: first_writers,
                        what: What::FirstSeen,
                        ..base.clone()
                    });
                }
                if let Some(d) = deleted.filter(|d| (since..=until).contains(d)) {
                    out.push(Item {
                        at: d,
                        what: What::Deleted { after },
                        provenance: self
                            .deletion_provenance(cluster, d)
                            .map_err(|e| rusqlite::Error::UserFunctionError(Box::new(e)))?,
                        ..base
                    });
                }
                Ok(out)
            })
            .map_err(self.q("changes"))?;
        for row in rows {
            items.extend(row.map_err(self.q("changes"))?);
        }
        Ok(())
    }

    /// Types that appeared or were removed.
    fn type_items(
        &self,
        (cluster, since, until, _): Window,
        items: &mut Vec<Item>,
    ) -> Result<(), StoreError> {
        let mut st = self
            .conn
            .prepare_cached(SQL_TYPES)
            .map_err(self.q("changes"))?;
        let rows = st
            .query_map(
                named_params! {":cluster": cluster, ":since": since, ":until": until},
                |r| {
                    let removed = r.get::<_, String>("change")? == "removed";
                    Ok(Item {
                        at: r.get("at")?,
                        kind: r.get("kind")?,
                        namespace: String::new(),
                        name: r.get("resource")?,
                        owner: None,
                        writers: Vec::new(),
                        what: if removed {
                            What::TypeRemoved
                        } else {
                            What::TypeAppeared
                        },
                        provenance: crate::model::Provenance::Recorded,
                    })
                },
            )
            .map_err(self.q("changes"))?;
        for row in rows {
            items.push(row.map_err(self.q("changes"))?);
        }
        Ok(())
    }

    /// What an audit log says people did that no stored version shows; a
    /// deleter joins its deletion's line.
    fn touch_items(
        &self,
        (cluster, since, until, namespace): Window,
        items: &mut Vec<Item>,
    ) -> Result<(), StoreError> {
        let kinds = std::collections::HashMap::new();
        for t in self.touches(cluster, since, until, None, namespace)? {
            // Status writes and bindings are what controllers and the
            // scheduler do all day: not changes anyone looks for here.
            if matches!(t.subresource.as_str(), "status" | "binding") {
                continue;
            }
            let kind = crate::checks::hotloop::kind_of_resource(&kinds, &t.group, &t.resource);
            if t.why == crate::model::TouchWhy::Deleter {
                // The deletion is a line already: it gains its deleter.
                if let Some(i) = items.iter_mut().find(|i| {
                    matches!(i.what, What::Deleted { .. })
                        && i.kind == kind
                        && i.namespace == t.namespace
                        && i.name == t.name
                        && (i.at - t.at).abs() <= 1_000
                }) {
                    i.writers = vec![t.user.clone()];
                    if i.provenance == crate::model::Provenance::Recorded {
                        i.provenance = crate::model::Provenance::RecordedWriterFromAudit;
                    }
                    continue;
                }
            }
            items.push(Item {
                at: t.at,
                kind,
                namespace: t.namespace.clone(),
                name: t.name.clone(),
                owner: None,
                writers: vec![t.user.clone()],
                what: What::Touch {
                    action: t.action(),
                    detail: t.detail.clone(),
                    unknown: t.why.unknown().to_string(),
                    code: t.code,
                    sentence: t.sentence(),
                },
                provenance: crate::model::Provenance::AuditLog,
            });
        }
        Ok(())
    }
}
