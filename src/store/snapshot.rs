//! The recorded path of `check`: one [`Snapshot`] of a recorded cluster at
//! any past moment, built from object history, Events and update counters.

use std::collections::HashMap;
use std::path::Path;

use rusqlite::{Connection, named_params};

use super::{StoreError, history};
use crate::checks::{ObjectUpdates, SnapEvent, Snapshot};
use crate::model::{ObjectRef, RecordedObject};

const SQL_CHECK_EVENTS: &str = include_str!("../../queries/store/check_events.sql");
const SQL_CLUSTER_FIND: &str = include_str!("../../queries/store/cluster_find.sql");
const SQL_LATEST_TIME: &str = include_str!("../../queries/store/latest_time.sql");
const SQL_HAS_HISTORY: &str = include_str!("../../queries/store/has_history.sql");
const SQL_PODS_SCOPE: &str = include_str!("../../queries/store/pods_scope.sql");

/// A recorded cluster: (row id, uid, label).
pub type ClusterRow = (i64, String, String);

fn q<'a>(what: &'static str, path: &'a Path) -> impl Fn(rusqlite::Error) -> StoreError + 'a {
    move |e| StoreError::query(what, path, e)
}

/// Recorded clusters matching `--cluster` (uid or label), or all of them.
pub fn clusters(
    conn: &Connection,
    path: &Path,
    wanted: Option<&str>,
) -> Result<Vec<ClusterRow>, StoreError> {
    let mut st = conn
        .prepare_cached(SQL_CLUSTER_FIND)
        .map_err(q("clusters", path))?;
    let rows = st
        .query_map(named_params! {":cluster": wanted}, |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .map_err(q("clusters", path))?;
    rows.collect::<Result<_, _>>().map_err(q("clusters", path))
}

/// The latest moment recorded for a cluster (epoch ms; 0 when nothing is).
pub fn latest_time(conn: &Connection, path: &Path, cluster: i64) -> Result<i64, StoreError> {
    conn.prepare_cached(SQL_LATEST_TIME)
        .and_then(|mut st| st.query_row(named_params! {":cluster": cluster}, |r| r.get(0)))
        .map_err(q("latest time", path))
}

/// Since when an object's generation has been what it is at `at`, from its versions.
fn generation_since(
    conn: &Connection,
    path: &Path,
    o: &RecordedObject,
    at: i64,
) -> Result<Option<i64>, StoreError> {
    let versions = history::versions(conn, path, o.id)?;
    let mut since = None;
    for v in versions.iter().rev().filter(|v| v.at <= at) {
        if v.state.generation != o.state.generation {
            break;
        }
        since = Some(v.at);
    }
    // NB: a generation already current in the first version seen may be older
    // than the recording; the first sighting is then a lower bound of the lag.
    Ok(since)
}

/// The snapshot of `cluster` at `at`; `window_ms` is the span for update rates and storms.
pub fn recorded(
    conn: &Connection,
    path: &Path,
    cluster: i64,
    at: i64,
    window_ms: i64,
) -> Result<Snapshot, StoreError> {
    let mut objects = Vec::new();
    let mut relevance = crate::checks::Relevance::default();
    let mut usage = crate::checks::scheduling_causes::Usage::default();
    history::for_each_state_at(conn, path, cluster, at, |o| {
        usage.add(&o);
        if relevance.keep(&o) {
            objects.push(o);
        }
    })?;
    for o in objects.iter_mut() {
        let lagging = o
            .state
            .observed_generation
            .is_some_and(|og| og < o.state.generation)
            || o.state.conditions.iter().any(|c| {
                c.observed_generation
                    .is_some_and(|og| og < o.state.generation)
            });
        if lagging {
            o.generation_since = generation_since(conn, path, o, at)?;
        }
    }

    let origins = node_origins(conn, path, &objects, at)?;

    let from = at - window_ms;
    let mut st = conn
        .prepare_cached(SQL_CHECK_EVENTS)
        .map_err(q("events", path))?;
    let events = st
        .query_map(
            named_params! {":cluster": cluster, ":at": at, ":from": from},
            |r| {
                Ok(SnapEvent {
                    involved: ObjectRef {
                        api_version: r.get(0)?,
                        kind: r.get(1)?,
                        namespace: r.get(2)?,
                        name: r.get(3)?,
                        uid: r.get(4)?,
                        field_path: String::new(),
                    },
                    reason: r.get(5)?,
                    type_: r.get(6)?,
                    reporting: r.get(7)?,
                    first: r.get(8)?,
                    last: r.get(9)?,
                    count: r.get(10)?,
                    in_window: r.get(11)?,
                    message: r.get::<_, Option<String>>(12)?.unwrap_or_default(),
                })
            },
        )
        .map_err(q("events", path))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(q("events", path))?;

    // Update counters over the window, per object.
    let mut per_object: HashMap<i64, ObjectUpdates> = HashMap::new();
    let mut managers: HashMap<(i64, String), i64> = HashMap::new();
    let mut minutes: HashMap<i64, std::collections::BTreeMap<i64, i64>> = HashMap::new();
    for c in history::update_counts(conn, path, cluster, from, at)? {
        let u = per_object.entry(c.object_id).or_default();
        u.updates += c.updates;
        u.generation_moves += c.generation;
        *minutes
            .entry(c.object_id)
            .or_default()
            .entry(c.minute * 60_000)
            .or_default() += c.updates;
        *managers.entry((c.object_id, c.manager)).or_default() += c.updates;
    }
    let mut updates = Vec::new();
    for (id, mut u) in per_object {
        if u.updates < 2 {
            continue;
        }
        let Some(o) = history::object(conn, path, id)? else {
            continue;
        };
        u.object = o.object;
        u.per_minute = minutes
            .remove(&id)
            .unwrap_or_default()
            .into_iter()
            .collect();
        u.managers = managers
            .iter()
            .filter(|((oid, _), _)| *oid == id)
            .map(|((_, m), n)| (m.clone(), *n))
            .collect();
        u.managers.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        updates.push(u);
    }
    updates.sort_by_key(|u| std::cmp::Reverse(u.updates));

    // NB: a recorder run with -n saw only its namespaces' Pods; what others
    // hold on each Node is unknown, and the sentences say so.
    let pods_scope: Option<i64> = conn
        .prepare_cached(SQL_PODS_SCOPE)
        .and_then(|mut st| st.query_row(named_params! {":cluster": cluster}, |r| r.get(0)))
        .map_err(q("pods scope", path))?;
    if pods_scope == Some(0) {
        usage.only_namespace = Some(String::new());
    }
    let has_objects = conn
        .prepare_cached(SQL_HAS_HISTORY)
        .and_then(|mut st| st.query_row(named_params! {":cluster": cluster}, |r| r.get(0)))
        .map_err(q("history lookup", path))?;
    Ok(Snapshot {
        at,
        objects,
        has_objects,
        events,
        updates,
        window_ms,
        stale_groups: Vec::new(),
        unreadable: Vec::new(),
        origins,
        usage,
        examined: Vec::new(),
        not_examined: Vec::new(),
        failing: Vec::new(),
    })
}

/// Since when, and by whom, each tainted or cordoned Node has been so at `at`.
fn node_origins(
    conn: &Connection,
    path: &Path,
    objects: &[RecordedObject],
    at: i64,
) -> Result<Vec<crate::checks::scheduling_causes::Origin>, StoreError> {
    let nodes: Vec<&RecordedObject> = objects
        .iter()
        .filter(|o| {
            o.object.kind == "Node" && (!o.state.taints.is_empty() || o.state.unschedulable)
        })
        .collect();
    if nodes.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<i64> = nodes.iter().map(|o| o.id).collect();
    let mut versions = history::versions_many(conn, path, &ids)?;
    let mut origins = Vec::new();
    for node in nodes {
        let mut history = versions.remove(&node.id).unwrap_or_default();
        history.retain(|v| v.at <= at);
        history.sort_by_key(|v| v.at);
        origins.extend(crate::checks::scheduling_causes::origins(
            &node.object.name,
            &history,
        ));
    }
    Ok(origins)
}
