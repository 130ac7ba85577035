//! Loading a timeline from the recording: walk the owner chain up and down
//! from one object (deleted objects included), add each Pod's Node and
//! claims, and read their versions, Event occurrences and the gaps.

use std::collections::HashSet;

use rusqlite::{OptionalExtension, named_params};

use super::{Recording, StoreError};
use crate::model::EventSummary;
use crate::model::Gap;
use crate::model::{Discovered, ObjectRef, RecordedObject, ResourceType, TypeChange, Version};
use crate::timeline::{Relation, Subject};

const SQL_EVENTS: &str = include_str!("../../queries/store/timeline_events.sql");
const SQL_GAPS: &str = include_str!("../../queries/store/timeline_gaps.sql");
const SQL_TYPE_CHANGES: &str = include_str!("../../queries/store/timeline_type_changes.sql");
const SQL_BY_UID: &str = include_str!("../../queries/store/objects_by_uid.sql");
const SQL_TYPES: &str = include_str!("../../queries/store/resource_types_of.sql");
const SQL_NAMES: &str = include_str!("../../queries/store/names_of_kind.sql");
const SQL_HOLDS_HISTORY: &str = include_str!("../../queries/store/holds_history.sql");

impl Recording {
    /// The resource types recorded for a cluster (empty for Events-only recordings).
    pub fn resource_types(&self, cluster: i64) -> Result<Discovered, StoreError> {
        let mut st = self
            .conn
            .prepare_cached(SQL_TYPES)
            .map_err(self.q("resource types"))?;
        let types = st
            .query_map(named_params! {":cluster": cluster}, |r| {
                let api_version: String = r.get("api_version")?;
                let (group, version) = match api_version.rsplit_once('/') {
                    Some((g, v)) => (g.to_string(), v.to_string()),
                    None => (String::new(), api_version.clone()),
                };
                let short: String = r.get("short_names")?;
                Ok(ResourceType {
                    group,
                    version,
                    plural: r.get("plural")?,
                    kind: r.get("kind")?,
                    singular: r.get("singular")?,
                    short_names: short
                        .split(',')
                        .filter(|s| !s.is_empty())
                        .map(str::to_string)
                        .collect(),
                    namespaced: r.get("namespaced")?,
                    verbs: vec!["list".into(), "watch".into()],
                })
            })
            .map_err(self.q("resource types"))?
            .collect::<Result<_, _>>()
            .map_err(self.q("resource types"))?;
        Ok(Discovered {
            types,
            stale: Vec::new(),
        })
    }

    fn object_by_uid(&self, cluster: i64, uid: &str) -> Result<Option<RecordedObject>, StoreError> {
        if uid.is_empty() {
            return Ok(None);
        }
        let id: Option<i64> = self
            .conn
            .prepare_cached(SQL_BY_UID)
            .and_then(|mut st| {
                st.query_row(named_params! {":uid": uid, ":cluster": cluster}, |r| {
                    r.get(0)
                })
                .optional()
            })
            .map_err(self.q("object lookup"))?;
        match id {
            Some(id) => self.object(id),
            None => Ok(None),
        }
    }
}

/// How far to walk.
#[derive(Debug, Clone, Copy)]
pub struct Walk {
    pub depth: u32,
    pub related: bool,
}

impl Recording {
    /// The target and everything related to it, with their versions.
    ///
    /// NB: a level of the walk costs one query for its objects and one for all
    /// their versions, whatever the number of Pods: the budget of a timeline is
    /// for assembling it, not for hundreds of point lookups.
    pub fn subjects(
        &self,
        cluster: i64,
        target: RecordedObject,
        walk: Walk,
    ) -> Result<Vec<Subject>, StoreError> {
        let mut seen: HashSet<i64> = HashSet::new();
        seen.insert(target.id);
        let target = self
            .with_versions(cluster, vec![(target, Relation::Target, 0)])?
            .remove(0);

        let mut out = self.owners_of(cluster, &target, walk.depth, &mut seen)?;
        out.push(target.clone());
        let owned = self.owned_by(cluster, target, walk.depth, &mut seen)?;
        out.extend(owned);
        if walk.related {
            let related = self.nodes_and_claims(cluster, &out, &mut seen)?;
            out.extend(self.with_versions(cluster, related)?);
            out.extend(self.uses_and_selectors(cluster, &out, &mut seen)?);
        }
        Ok(out)
    }

    /// Up: the owners named in any version of the target, by uid, the
    /// farthest first.
    fn owners_of(
        &self,
        cluster: i64,
        target: &Subject,
        depth_limit: u32,
        seen: &mut HashSet<i64>,
    ) -> Result<Vec<Subject>, StoreError> {
        let mut owners: Vec<Subject> = Vec::new();
        let mut frontier = vec![target.clone()];
        // NB: bounded by what exists, not by the number asked: `--depth
        // 99999999` once spun for 18 minutes over empty levels (issue 27.11).
        for depth in 1..=depth_limit {
            if frontier.is_empty() {
                break;
            }
            let mut next = Vec::new();
            for s in &frontier {
                let mut uids: Vec<String> = Vec::new();
                for v in &s.versions {
                    for o in &v.state.owners {
                        if !uids.contains(&o.uid) {
                            uids.push(o.uid.clone());
                        }
                    }
                }
                for uid in uids {
                    if let Some(o) = self.object_by_uid(cluster, &uid)?
                        && seen.insert(o.id)
                    {
                        next.push((o, Relation::Owner, depth));
                    }
                }
            }
            let next = self.with_versions(cluster, next)?;
            owners.extend(next.iter().cloned());
            frontier = next;
        }
        owners.reverse();
        Ok(owners)
    }

    /// Down: what the target owns, and so on, each level by creation.
    fn owned_by(
        &self,
        cluster: i64,
        target: Subject,
        depth_limit: u32,
        seen: &mut HashSet<i64>,
    ) -> Result<Vec<Subject>, StoreError> {
        let mut out = Vec::new();
        let mut frontier = vec![target];
        for depth in 1..=depth_limit {
            if frontier.is_empty() {
                break;
            }
            let mut ids = Vec::new();
            for s in &frontier {
                let mut owned = false;
                for (id, rel) in self.children(cluster, &s.object.object)? {
                    if rel == "owner" {
                        owned = true;
                        if seen.insert(id) {
                            ids.push(id);
                        }
                    }
                }
                // NB: an object known only from Events (a pasted `kubectl
                // events`, an Events-only recording) has no owner reference
                // anywhere: what its controller made is tied to it by the
                // names controllers give (`model::named_by_controller`), and
                // only objects as unknown as it is (the summary's `Tied:`
                // says so).
                if !owned
                    && s.object.first_seen.is_none()
                    && let Some(kind) = crate::model::made_by_controller(&s.object.object.kind)
                {
                    let parent = &s.object.object;
                    for o in self.of_kind_in(cluster, kind, &parent.namespace)? {
                        if o.first_seen.is_none()
                            && crate::model::named_by_controller(
                                &parent.kind,
                                &parent.name,
                                kind,
                                &o.object.name,
                            )
                            && seen.insert(o.id)
                        {
                            ids.push(o.id);
                        }
                    }
                }
            }
            let mut objects = self.objects_many(&ids)?;
            objects.sort_by(|a, b| {
                (a.created.or(a.first_seen), &a.object.name)
                    .cmp(&(b.created.or(b.first_seen), &b.object.name))
            });
            let next = self.with_versions(
                cluster,
                objects
                    .into_iter()
                    .map(|o| (o, Relation::Owned, depth))
                    .collect(),
            )?;
            out.extend(next.iter().cloned());
            frontier = next;
        }

        Ok(out)
    }

    /// Each Pod's Nodes and claims, looked up together.
    fn nodes_and_claims(
        &self,
        cluster: i64,
        out: &[Subject],
        seen: &mut HashSet<i64>,
    ) -> Result<Vec<(RecordedObject, Relation, u32)>, StoreError> {
        let mut nodes: Vec<(String, u32)> = Vec::new();
        let mut claims: Vec<(String, String, u32)> = Vec::new();
        for s in out.iter().filter(|s| s.object.object.kind == "Pod") {
            for v in &s.versions {
                if !v.state.node_name.is_empty()
                    && !nodes.iter().any(|(n, _)| *n == v.state.node_name)
                {
                    nodes.push((v.state.node_name.clone(), s.depth + 1));
                }
                for c in &v.state.claims {
                    let ns = &s.object.object.namespace;
                    if !claims.iter().any(|(n, cn, _)| n == ns && cn == c) {
                        claims.push((ns.clone(), c.clone(), s.depth + 1));
                    }
                }
            }
        }
        let mut related = Vec::new();
        let names: Vec<&str> = nodes.iter().map(|(n, _)| n.as_str()).collect();
        if !names.is_empty() {
            for o in self.named_many(cluster, "Node", "", &names)? {
                let depth = nodes
                    .iter()
                    .find(|(n, _)| *n == o.object.name)
                    .map_or(1, |(_, d)| *d);
                // Newest incarnation first: the first of each name wins.
                if !related
                    .iter()
                    .any(|(r, _, _): &(RecordedObject, Relation, u32)| {
                        r.object.name == o.object.name && r.object.kind == "Node"
                    })
                    && seen.insert(o.id)
                {
                    related.push((o, Relation::Node, depth));
                }
            }
        }
        let mut by_namespace: std::collections::BTreeMap<&str, Vec<&str>> = Default::default();
        for (ns, c, _) in &claims {
            by_namespace
                .entry(ns.as_str())
                .or_default()
                .push(c.as_str());
        }
        for (ns, names) in by_namespace {
            for o in self.named_many(cluster, "PersistentVolumeClaim", ns, &names)? {
                let depth = claims
                    .iter()
                    .find(|(_, c, _)| *c == o.object.name)
                    .map_or(1, |(_, _, d)| *d);
                if !related
                    .iter()
                    .any(|(r, _, _): &(RecordedObject, Relation, u32)| {
                        r.object.name == o.object.name
                            && r.object.namespace == o.object.namespace
                            && r.object.kind == "PersistentVolumeClaim"
                    })
                    && seen.insert(o.id)
                {
                    related.push((o, Relation::Claim, depth));
                }
            }
        }
        Ok(related)
    }

    /// What the story's Pods and templates name (ConfigMaps, Secrets,
    /// ServiceAccounts: [`Relation::Uses`]) and the Services and budgets whose
    /// selector matched one of its Pods in some version ([`Relation::Selects`]),
    /// with their versions: causes that travel along no owner reference.
    fn uses_and_selectors(
        &self,
        cluster: i64,
        story: &[Subject],
        seen: &mut HashSet<i64>,
    ) -> Result<Vec<Subject>, StoreError> {
        let mut named: std::collections::BTreeMap<(String, String), Vec<(String, u32)>> =
            Default::default();
        // Each Pod's labels with the interval they held (issue 47: a
        // selector matches a Pod only while both versions stood).
        let mut labels: std::collections::BTreeMap<&str, Vec<Held<'_>>> = Default::default();
        for s in story {
            let ns = s.object.object.namespace.as_str();
            for v in &s.versions {
                for r in &v.state.refs {
                    // NB: a claim is already there, as a Pod's (Relation::Claim).
                    // NB: an Ingress that names no class names no object (`IngressClass/`).
                    if let Some((kind, name)) = r.split_once('/')
                        && kind != "PersistentVolumeClaim"
                        && !name.is_empty()
                    {
                        let names = named.entry((ns.to_string(), kind.to_string())).or_default();
                        if !names.iter().any(|(n, _)| n == name) {
                            names.push((name.to_string(), s.depth + 1));
                        }
                    }
                }
            }
            if s.object.object.kind == "Pod" {
                let sets = labels.entry(ns).or_default();
                for (v, span) in s.versions.iter().zip(spans(&s.object, &s.versions)) {
                    if !v.state.labels.is_empty() {
                        sets.push(Held {
                            labels: &v.state.labels,
                            span,
                        });
                    }
                }
            }
        }
        let mut related: Vec<(RecordedObject, Relation, u32)> = Vec::new();
        for ((ns, kind), names) in &named {
            let list: Vec<&str> = names.iter().map(|(n, _)| n.as_str()).collect();
            // NB: the classes are the cluster's.
            let ns = if crate::model::cluster_scoped_ref(kind) {
                ""
            } else {
                ns.as_str()
            };
            // Every incarnation: a used ConfigMap deleted and made again is
            // often the story (the window keeps what happened in it).
            for o in self.named_many(cluster, kind, ns, &list)? {
                if seen.insert(o.id) {
                    let depth = names
                        .iter()
                        .find(|(n, _)| *n == o.object.name)
                        .map_or(1, |(_, d)| *d);
                    related.push((o, Relation::Uses, depth));
                }
            }
        }
        let mut out = self.with_versions(cluster, related)?;
        for (ns, sets) in labels {
            for kind in ["Service", "PodDisruptionBudget"] {
                let candidates: Vec<RecordedObject> = self
                    .of_kind_in(cluster, kind, ns)?
                    .into_iter()
                    .filter(|o| !seen.contains(&o.id))
                    .collect();
                if candidates.is_empty() {
                    continue;
                }
                let ids: Vec<i64> = candidates.iter().map(|o| o.id).collect();
                let mut versions = self.versions_many(&ids)?;
                for mut o in candidates {
                    let vs = versions.remove(&o.id).unwrap_or_default();
                    self.tell_deletion(cluster, &mut o)?;
                    let selected = vs.iter().zip(spans(&o, &vs)).any(|(v, span)| {
                        sets.iter()
                            .any(|l| overlap(span, l.span) && v.state.selects(l.labels))
                    });
                    if selected && seen.insert(o.id) {
                        out.push(Subject {
                            object: o,
                            relation: Some(Relation::Selects),
                            depth: 1,
                            versions: vs,
                        });
                    }
                }
            }
        }
        Ok(out)
    }

    /// Subjects of `objects`, with their versions (one query) and where a
    /// deletion comes from.
    fn with_versions(
        &self,
        cluster: i64,
        objects: Vec<(RecordedObject, Relation, u32)>,
    ) -> Result<Vec<Subject>, StoreError> {
        let ids: Vec<i64> = objects.iter().map(|(o, _, _)| o.id).collect();
        let mut versions = self.versions_many(&ids)?;
        objects
            .into_iter()
            .map(|(mut o, relation, depth)| {
                self.tell_deletion(cluster, &mut o)?;
                Ok(Subject {
                    versions: versions.remove(&o.id).unwrap_or_default(),
                    object: o,
                    relation: Some(relation),
                    depth,
                })
            })
            .collect()
    }

    /// Sets where `o`'s deletion comes from, when it was deleted.
    fn tell_deletion(&self, cluster: i64, o: &mut RecordedObject) -> Result<(), StoreError> {
        if let Some(at) = o.deleted {
            o.deletion_provenance = self.deletion_provenance(cluster, at)?;
        }
        Ok(())
    }

    /// The Events of the subjects (and of same-named references without a uid,
    /// as imports make them), collapsed per Event, inside [since, until]: one query.
    pub fn events(
        &self,
        _cluster: i64,
        subjects: &[Subject],
        since: i64,
        until: i64,
    ) -> Result<Vec<EventSummary>, StoreError> {
        let ids: Vec<i64> = subjects.iter().map(|s| s.object.id).collect();
        let refs: std::collections::HashMap<i64, &ObjectRef> = subjects
            .iter()
            .map(|s| (s.object.id, &s.object.object))
            .collect();
        let mut st = self
            .conn
            .prepare_cached(SQL_EVENTS)
            .map_err(self.q("timeline events"))?;
        let rows = st
        .query_map(
            named_params! {
                ":ids": serde_json::to_string(&ids).unwrap_or_default(), ":since": since, ":until": until,
            },
            |r| {
                let subject: i64 = r.get("subject")?;
                Ok(EventSummary {
                    involved: refs.get(&subject).map(|o| (*o).clone()).unwrap_or_default(),
                    type_: r.get("type")?,
                    reason: r.get("reason")?,
                    reporting: r.get("controller")?,
                    host: r.get("host")?,
                    count: r.get("count")?,
                    in_window: r.get("in_window")?,
                    first: r.get("first")?,
                    last: r.get("last")?,
                    message: r.get::<_, Option<String>>("message")?.unwrap_or_default(),
                })
            },
        )
        .map_err(self.q("timeline events"))?;
        let mut lines: Vec<EventSummary> = Vec::new();
        let mut index: std::collections::HashMap<(ObjectRef, String, String, String), usize> =
            Default::default();
        for line in rows {
            let line = line.map_err(self.q("timeline events"))?;
            // One line per repeated Event, even across re-created Event objects.
            let key = (
                line.involved.clone(),
                line.reason.clone(),
                line.type_.clone(),
                line.message.clone(),
            );
            match index.get(&key) {
                Some(i) => {
                    let l = &mut lines[*i];
                    l.in_window += line.in_window;
                    l.count = l.count.max(line.count);
                    l.first = l.first.min(line.first);
                    l.last = l.last.max(line.last);
                }
                None => {
                    index.insert(key, lines.len());
                    lines.push(line);
                }
            }
        }
        Ok(lines)
    }

    /// The recorder's gaps overlapping [since, until], merged across watches.
    pub fn gaps(&self, cluster: i64, since: i64, until: i64) -> Result<Vec<Gap>, StoreError> {
        let mut st = self.conn.prepare_cached(SQL_GAPS).map_err(self.q("gaps"))?;
        let rows = st
            .query_map(
                named_params! {":cluster": cluster, ":since": since, ":until": until},
                |r| {
                    Ok(Gap::stored(
                        r.get("resource")?,
                        r.get("start")?,
                        r.get("finish")?,
                        &r.get::<_, String>("reason")?,
                        r.get("detail")?,
                    ))
                },
            )
            .map_err(self.q("gaps"))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(self.q("gaps"))?;
        Ok(crate::timeline::merge_gaps(rows))
    }

    /// The types that began (a CRD established) or stopped (a CRD removed)
    /// being recorded in [since, until].
    pub fn type_changes(
        &self,
        cluster: i64,
        since: i64,
        until: i64,
    ) -> Result<Vec<TypeChange>, StoreError> {
        let mut st = self
            .conn
            .prepare_cached(SQL_TYPE_CHANGES)
            .map_err(self.q("type changes"))?;
        st.query_map(
            named_params! {":cluster": cluster, ":since": since, ":until": until},
            |r| {
                Ok(TypeChange {
                    resource: r.get("resource")?,
                    api_version: r.get("api_version")?,
                    kind: r.get("kind")?,
                    at: r.get("at")?,
                    removed: r.get::<_, String>("change")? == "removed",
                })
            },
        )
        .map_err(self.q("type changes"))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(self.q("type changes"))
    }

    /// Whether the recording holds any object version, of any cluster
    /// (`timeline --store` pulls the Events a stall's check may quote only then).
    pub fn holds_history(&self) -> Result<bool, StoreError> {
        self.conn
            .prepare_cached(SQL_HOLDS_HISTORY)
            .and_then(|mut st| st.query_row([], |r| r.get(0)))
            .map_err(self.q("versions"))
    }

    /// Up to 20 recorded names of `kind` in `namespace`, for error messages.
    pub fn names_of_kind(
        &self,
        cluster: i64,
        kind: &str,
        namespace: &str,
    ) -> Result<Vec<String>, StoreError> {
        let mut st = self
            .conn
            .prepare_cached(SQL_NAMES)
            .map_err(self.q("names"))?;
        let rows = st
            .query_map(
                named_params! {":cluster": cluster, ":kind": kind, ":namespace": namespace},
                |r| r.get(0),
            )
            .map_err(self.q("names"))?;
        rows.collect::<Result<_, _>>().map_err(self.q("names"))
    }
}

/// A Pod's labels and the interval in which they held.
struct Held<'a> {
    labels: &'a std::collections::BTreeMap<String, String>,
    span: (i64, i64),
}

/// The interval each version of `object` stood: from its time (the first
/// from the object's creation, when that is earlier: a version retention
/// pruned is not evidence of another state) to the next version's, the last
/// to the object's deletion, or open.
fn spans(object: &RecordedObject, versions: &[Version]) -> Vec<(i64, i64)> {
    let end = object.deleted.or(object.deleted_after).unwrap_or(i64::MAX);
    versions
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let from = if i == 0 {
                object.created.map_or(v.at, |c| c.min(v.at))
            } else {
                v.at
            };
            let until = versions.get(i + 1).map_or(end, |n| n.at);
            (from, until.max(from))
        })
        .collect()
}

/// Whether two intervals share a moment (an instant interval counts).
fn overlap(a: (i64, i64), b: (i64, i64)) -> bool {
    a.0 <= b.1 && b.0 <= a.1
}
