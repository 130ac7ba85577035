//! Loading a timeline from the recording: walk the owner chain up and down
//! from one object (deleted objects included), add each Pod's Node and
//! claims, and read their versions, Event occurrences and the gaps.

use std::collections::HashSet;
use std::path::Path;

use rusqlite::{Connection, OptionalExtension, named_params};

use super::{StoreError, history};
use crate::model::{Discovered, ObjectRef, RecordedObject, ResourceType};
use crate::timeline::{EventLine, GapLine, Relation, Subject};

const SQL_EVENTS: &str = include_str!("../../queries/store/timeline_events.sql");
const SQL_GAPS: &str = include_str!("../../queries/store/timeline_gaps.sql");
const SQL_BY_UID: &str = include_str!("../../queries/store/objects_by_uid.sql");
const SQL_TYPES: &str = include_str!("../../queries/store/resource_types_of.sql");

fn q<'a>(what: &'static str, path: &'a Path) -> impl Fn(rusqlite::Error) -> StoreError + 'a {
    move |e| StoreError::query(what, path, e)
}

/// The resource types recorded for a cluster (empty for Events-only recordings).
pub fn resource_types(
    conn: &Connection,
    path: &Path,
    cluster: i64,
) -> Result<Discovered, StoreError> {
    let mut st = conn
        .prepare_cached(SQL_TYPES)
        .map_err(q("resource types", path))?;
    let types = st
        .query_map(named_params! {":cluster": cluster}, |r| {
            let api_version: String = r.get(0)?;
            let (group, version) = match api_version.rsplit_once('/') {
                Some((g, v)) => (g.to_string(), v.to_string()),
                None => (String::new(), api_version.clone()),
            };
            let short: String = r.get(4)?;
            Ok(ResourceType {
                group,
                version,
                plural: r.get(1)?,
                kind: r.get(2)?,
                singular: r.get(3)?,
                short_names: short
                    .split(',')
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect(),
                namespaced: r.get(5)?,
                verbs: vec!["list".into(), "watch".into()],
            })
        })
        .map_err(q("resource types", path))?
        .collect::<Result<_, _>>()
        .map_err(q("resource types", path))?;
    Ok(Discovered {
        types,
        stale: Vec::new(),
    })
}

fn by_uid(
    conn: &Connection,
    path: &Path,
    cluster: i64,
    uid: &str,
) -> Result<Option<RecordedObject>, StoreError> {
    if uid.is_empty() {
        return Ok(None);
    }
    let id: Option<i64> = conn
        .prepare_cached(SQL_BY_UID)
        .and_then(|mut st| {
            st.query_row(named_params! {":uid": uid, ":cluster": cluster}, |r| {
                r.get(0)
            })
            .optional()
        })
        .map_err(q("object lookup", path))?;
    match id {
        Some(id) => history::object(conn, path, id),
        None => Ok(None),
    }
}

/// How far to walk.
#[derive(Debug, Clone, Copy)]
pub struct Walk {
    pub depth: u32,
    pub related: bool,
}

/// The target and everything related to it, with their versions.
pub fn subjects(
    conn: &Connection,
    path: &Path,
    cluster: i64,
    target: RecordedObject,
    walk: Walk,
) -> Result<Vec<Subject>, StoreError> {
    let mut seen: HashSet<i64> = HashSet::new();
    let mut out: Vec<Subject> = Vec::new();
    let load = |o: RecordedObject, relation: Relation, depth: u32| -> Result<Subject, StoreError> {
        let versions = history::versions(conn, path, o.id)?;
        Ok(Subject {
            object: o,
            relation: Some(relation),
            depth,
            versions,
        })
    };
    seen.insert(target.id);
    let target = load(target, Relation::Target, 0)?;

    // Up: the owners named in any version, by uid.
    let mut owners: Vec<Subject> = Vec::new();
    let mut frontier = vec![target.clone()];
    for depth in 1..=walk.depth {
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
                if let Some(o) = by_uid(conn, path, cluster, &uid)?
                    && seen.insert(o.id)
                {
                    next.push(load(o, Relation::Owner, depth)?);
                }
            }
        }
        owners.extend(next.iter().cloned());
        frontier = next;
    }
    owners.reverse();
    out.extend(owners);
    out.push(target.clone());

    // Down: what the target owns, and so on.
    let mut frontier = vec![target];
    for depth in 1..=walk.depth {
        let mut next = Vec::new();
        for s in &frontier {
            for (id, rel) in history::children(conn, path, cluster, &s.object.object)? {
                if rel != "owner" || !seen.insert(id) {
                    continue;
                }
                if let Some(o) = history::object(conn, path, id)? {
                    next.push(load(o, Relation::Owned, depth)?);
                }
            }
        }
        next.sort_by(|a, b| {
            (
                a.object.created.or(a.object.first_seen),
                &a.object.object.name,
            )
                .cmp(&(
                    b.object.created.or(b.object.first_seen),
                    &b.object.object.name,
                ))
        });
        out.extend(next.iter().cloned());
        frontier = next;
    }

    if walk.related {
        let mut related = Vec::new();
        for s in out.iter().filter(|s| s.object.object.kind == "Pod") {
            let mut nodes: Vec<&str> = Vec::new();
            let mut claims: Vec<&str> = Vec::new();
            for v in &s.versions {
                if !v.state.node_name.is_empty() && !nodes.contains(&v.state.node_name.as_str()) {
                    nodes.push(&v.state.node_name);
                }
                for c in &v.state.claims {
                    if !claims.contains(&c.as_str()) {
                        claims.push(c);
                    }
                }
            }
            for node in nodes {
                if let Some(o) = history::named(conn, path, cluster, "Node", "", node)?
                    .into_iter()
                    .next()
                    && seen.insert(o.id)
                {
                    related.push(load(o, Relation::Node, s.depth + 1)?);
                }
            }
            for claim in claims {
                let ns = &s.object.object.namespace;
                if let Some(o) =
                    history::named(conn, path, cluster, "PersistentVolumeClaim", ns, claim)?
                        .into_iter()
                        .next()
                    && seen.insert(o.id)
                {
                    related.push(load(o, Relation::Claim, s.depth + 1)?);
                }
            }
        }
        out.extend(related);
    }
    Ok(out)
}

/// The Events of the subjects (and of same-named references without a uid,
/// as imports make them), collapsed per Event, inside [since, until].
pub fn events(
    conn: &Connection,
    path: &Path,
    cluster: i64,
    subjects: &[Subject],
    since: i64,
    until: i64,
) -> Result<Vec<EventLine>, StoreError> {
    let mut ids: Vec<(i64, ObjectRef)> = Vec::new();
    let mut names_done: HashSet<(String, String, String)> = HashSet::new();
    for s in subjects {
        let r = &s.object.object;
        ids.push((s.object.id, r.clone()));
        if names_done.insert((r.kind.clone(), r.namespace.clone(), r.name.clone())) {
            for o in history::named(conn, path, cluster, &r.kind, &r.namespace, &r.name)? {
                if o.object.uid.is_empty() {
                    ids.push((o.id, r.clone()));
                }
            }
        }
    }
    let mut lines: Vec<EventLine> = Vec::new();
    let mut st = conn
        .prepare_cached(SQL_EVENTS)
        .map_err(q("timeline events", path))?;
    for (id, object) in ids {
        let rows = st
            .query_map(
                named_params! {":object": id, ":since": since, ":until": until},
                |r| {
                    let controller: String = r.get(2)?;
                    let host: String = r.get(3)?;
                    Ok(EventLine {
                        object: object.clone(),
                        type_: r.get(0)?,
                        reason: r.get(1)?,
                        source: match (controller.is_empty(), host.is_empty()) {
                            (false, false) => format!("{controller}, {host}"),
                            (false, true) => controller,
                            (true, _) => host,
                        },
                        count: r.get(4)?,
                        first: r.get(5)?,
                        last: r.get(6)?,
                        message: r.get::<_, Option<String>>(7)?.unwrap_or_default(),
                    })
                },
            )
            .map_err(q("timeline events", path))?;
        for line in rows {
            let line = line.map_err(q("timeline events", path))?;
            // One line per repeated Event, even across re-created Event objects.
            match lines.iter_mut().find(|l| {
                l.object == line.object
                    && l.reason == line.reason
                    && l.type_ == line.type_
                    && l.message == line.message
            }) {
                Some(l) => {
                    l.count += line.count;
                    l.first = l.first.min(line.first);
                    l.last = l.last.max(line.last);
                }
                None => lines.push(line),
            }
        }
    }
    Ok(lines)
}

/// The recorder's gaps overlapping [since, until], merged across watches.
pub fn gaps(
    conn: &Connection,
    path: &Path,
    cluster: i64,
    since: i64,
    until: i64,
) -> Result<Vec<GapLine>, StoreError> {
    let mut st = conn.prepare_cached(SQL_GAPS).map_err(q("gaps", path))?;
    let rows = st
        .query_map(
            named_params! {":cluster": cluster, ":since": since, ":until": until},
            |r| {
                Ok(GapLine {
                    start: r.get(0)?,
                    finish: r.get(1)?,
                    reason: r.get(2)?,
                    detail: r.get(3)?,
                    resources: vec![r.get(4)?],
                })
            },
        )
        .map_err(q("gaps", path))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(q("gaps", path))?;
    Ok(crate::timeline::merge_gaps(rows))
}

const SQL_NAMES: &str = include_str!("../../queries/store/names_of_kind.sql");

/// Up to 20 recorded names of `kind` in `namespace`, for error messages.
pub fn names_of_kind(
    conn: &Connection,
    path: &Path,
    cluster: i64,
    kind: &str,
    namespace: &str,
) -> Result<Vec<String>, StoreError> {
    let mut st = conn.prepare_cached(SQL_NAMES).map_err(q("names", path))?;
    let rows = st
        .query_map(
            named_params! {":cluster": cluster, ":kind": kind, ":namespace": namespace},
            |r| r.get(0),
        )
        .map_err(q("names", path))?;
    rows.collect::<Result<_, _>>().map_err(q("names", path))
}
