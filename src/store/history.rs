//! Reading object history: time travel (every object's state at T), one
//! object's versions, incarnations by name, relations and update counters.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension, Row, named_params};

use super::{StoreError, fnv1a, q};
use crate::model::{ObjectRef, ObjectState, RecordedObject, UpdateCount, Version};

const SQL_STATES_AT: &str = include_str!("../../queries/store/history_states_at.sql");
const SQL_VERSIONS: &str = include_str!("../../queries/store/history_versions.sql");
const SQL_OBJECTS_NAMED: &str = include_str!("../../queries/store/history_objects_named.sql");
const SQL_CHILDREN: &str = include_str!("../../queries/store/history_children.sql");
const SQL_COUNTS: &str = include_str!("../../queries/store/history_counts.sql");
const SQL_STRING_ID: &str = include_str!("../../queries/store/string_id.sql");

fn writers(text: &str) -> Vec<String> {
    text.split(',')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// A state as stored; a text this build cannot read becomes the empty state.
/// Since migration 3 the generations live in columns (0: inside the text).
fn state(text: &str, generation: i64, observed: Option<i64>) -> ObjectState {
    let mut state: ObjectState = serde_json::from_str(text).unwrap_or_default();
    if generation != 0 {
        state.generation = generation;
        state.observed_generation = observed;
    }
    state
}

/// Columns 0..=9: id, apiVersion, kind, namespace, name, uid, created, first_seen, deleted, deleted_after.
fn identity(row: &Row<'_>) -> rusqlite::Result<RecordedObject> {
    Ok(RecordedObject {
        id: row.get(0)?,
        object: ObjectRef {
            api_version: row.get(1)?,
            kind: row.get(2)?,
            namespace: row.get(3)?,
            name: row.get(4)?,
            uid: row.get(5)?,
            field_path: String::new(),
        },
        created: row.get(6)?,
        first_seen: row.get(7)?,
        deleted: row.get(8)?,
        deleted_after: row.get(9)?,
        ..RecordedObject::default()
    })
}

/// Every watched object that existed at `t`, with its state then.
pub fn states_at(
    conn: &Connection,
    path: &Path,
    cluster: i64,
    t: i64,
) -> Result<Vec<RecordedObject>, StoreError> {
    let mut all = Vec::new();
    for_each_state_at(conn, path, cluster, t, |o| all.push(o))?;
    Ok(all)
}

/// Like [`states_at`], one object at a time (Namespaces first), so a caller
/// can keep only what it needs: memory then does not grow with the cluster.
pub fn for_each_state_at(
    conn: &Connection,
    path: &Path,
    cluster: i64,
    t: i64,
    mut each: impl FnMut(RecordedObject),
) -> Result<(), StoreError> {
    let mut st = conn
        .prepare_cached(SQL_STATES_AT)
        .map_err(q("time travel", path))?;
    let rows = st
        .query_map(named_params! {":cluster": cluster, ":t": t}, |row| {
            let mut o = identity(row)?;
            o.state_at = row.get(10)?;
            o.state = state(&row.get::<_, String>(11)?, row.get(13)?, row.get(14)?);
            o.writers = writers(&row.get::<_, String>(12)?);
            Ok(o)
        })
        .map_err(q("time travel", path))?;
    for row in rows {
        each(row.map_err(q("time travel", path))?);
    }
    Ok(())
}

/// One object by its row id, without state.
pub fn object(
    conn: &Connection,
    path: &Path,
    id: i64,
) -> Result<Option<RecordedObject>, StoreError> {
    Ok(objects_many(conn, path, &[id])?.into_iter().next())
}

/// Every version of one object, oldest first.
pub fn versions(conn: &Connection, path: &Path, id: i64) -> Result<Vec<Version>, StoreError> {
    let mut st = conn
        .prepare_cached(SQL_VERSIONS)
        .map_err(q("versions", path))?;
    let rows = st
        .query_map(named_params! {":object": id}, |row| {
            Ok(Version {
                at: row.get(0)?,
                state: state(&row.get::<_, String>(1)?, row.get(4)?, row.get(5)?),
                writers: writers(&row.get::<_, String>(2)?),
                listed: row.get::<_, i64>(3)? == 0,
                diff: crate::specdiff::decode(
                    &row.get::<_, Option<String>>(6)?.unwrap_or_default(),
                ),
            })
        })
        .map_err(q("versions", path))?;
    rows.collect::<Result<_, _>>().map_err(q("versions", path))
}

/// The id of a stored string, if it is stored.
pub fn string_id(conn: &Connection, path: &Path, s: &str) -> Result<Option<i64>, StoreError> {
    conn.prepare_cached(SQL_STRING_ID)
        .and_then(|mut st| {
            st.query_row(named_params! {":h": fnv1a(s), ":s": s}, |r| r.get(0))
                .optional()
        })
        .map_err(q("string lookup", path))
}

/// Every incarnation of kind/namespace/name, newest first (deleted ones included).
pub fn named(
    conn: &Connection,
    path: &Path,
    cluster: i64,
    kind: &str,
    namespace: &str,
    name: &str,
) -> Result<Vec<RecordedObject>, StoreError> {
    let (Some(kind), Some(namespace), Some(name)) = (
        string_id(conn, path, kind)?,
        string_id(conn, path, namespace)?,
        string_id(conn, path, name)?,
    ) else {
        return Ok(Vec::new());
    };
    let ids: Vec<i64> = conn
        .prepare_cached(SQL_OBJECTS_NAMED)
        .and_then(|mut st| {
            st.query_map(
                named_params! {":cluster": cluster, ":kind": kind, ":namespace": namespace, ":name": name},
                |r| r.get(0),
            )?
            .collect()
        })
        .map_err(q("object lookup", path))?;
    let mut found = Vec::new();
    for id in ids {
        if let Some(o) = object(conn, path, id)? {
            found.push(o);
        }
    }
    Ok(found)
}

/// Objects pointing at `parent` (owned by it, or Pods on that Node / using that claim): (row id, relation).
pub fn children(
    conn: &Connection,
    path: &Path,
    cluster: i64,
    parent: &ObjectRef,
) -> Result<Vec<(i64, String)>, StoreError> {
    let (Some(kind), Some(namespace), Some(name)) = (
        string_id(conn, path, &parent.kind)?,
        string_id(conn, path, &parent.namespace)?,
        string_id(conn, path, &parent.name)?,
    ) else {
        return Ok(Vec::new());
    };
    conn.prepare_cached(SQL_CHILDREN)
        .and_then(|mut st| {
            st.query_map(
                named_params! {
                    ":cluster": cluster, ":kind": kind, ":namespace": namespace,
                    ":name": name, ":uid": parent.uid,
                },
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?
            .collect()
        })
        .map_err(q("relations", path))
}

/// Update counters of one cluster between two times (epoch ms; whole minutes).
pub fn update_counts(
    conn: &Connection,
    path: &Path,
    cluster: i64,
    from: i64,
    to: i64,
) -> Result<Vec<UpdateCount>, StoreError> {
    let mut st = conn
        .prepare_cached(SQL_COUNTS)
        .map_err(q("update counters", path))?;
    let rows = st
        .query_map(
            named_params! {
                ":cluster": cluster, ":from": from.div_euclid(60_000), ":to": to.div_euclid(60_000) + 1,
            },
            |row| {
                Ok(UpdateCount {
                    object_id: row.get(0)?,
                    minute: row.get(1)?,
                    manager: row.get(2)?,
                    updates: row.get(3)?,
                    versions: row.get(4)?,
                    generation: row.get(5)?,
                })
            },
        )
        .map_err(q("update counters", path))?;
    rows.collect::<Result<_, _>>()
        .map_err(q("update counters", path))
}

const SQL_VERSIONS_MANY: &str = include_str!("../../queries/store/history_versions_many.sql");
const SQL_OBJECTS_MANY: &str = include_str!("../../queries/store/history_objects_many.sql");
const SQL_NAMED_MANY: &str = include_str!("../../queries/store/history_named_many.sql");

fn json_ids(ids: &[i64]) -> String {
    serde_json::to_string(ids).unwrap_or_else(|_| "[]".into())
}

/// Every version of several objects, in one query: object id -> versions, oldest first.
pub fn versions_many(
    conn: &Connection,
    path: &Path,
    ids: &[i64],
) -> Result<std::collections::HashMap<i64, Vec<Version>>, StoreError> {
    let mut st = conn
        .prepare_cached(SQL_VERSIONS_MANY)
        .map_err(q("versions", path))?;
    let rows = st
        .query_map(named_params! {":ids": json_ids(ids)}, |row| {
            Ok((
                row.get::<_, i64>(0)?,
                Version {
                    at: row.get(1)?,
                    state: state(&row.get::<_, String>(2)?, row.get(5)?, row.get(6)?),
                    writers: writers(&row.get::<_, String>(3)?),
                    listed: row.get::<_, i64>(4)? == 0,
                    diff: crate::specdiff::decode(
                        &row.get::<_, Option<String>>(7)?.unwrap_or_default(),
                    ),
                },
            ))
        })
        .map_err(q("versions", path))?;
    let mut out: std::collections::HashMap<i64, Vec<Version>> = std::collections::HashMap::new();
    for row in rows {
        let (id, v) = row.map_err(q("versions", path))?;
        out.entry(id).or_default().push(v);
    }
    Ok(out)
}

/// Several objects by row id, in one query (without state).
pub fn objects_many(
    conn: &Connection,
    path: &Path,
    ids: &[i64],
) -> Result<Vec<RecordedObject>, StoreError> {
    let mut st = conn
        .prepare_cached(SQL_OBJECTS_MANY)
        .map_err(q("object lookup", path))?;
    let rows = st
        .query_map(named_params! {":ids": json_ids(ids)}, identity)
        .map_err(q("object lookup", path))?;
    rows.collect::<Result<_, _>>()
        .map_err(q("object lookup", path))
}

/// Objects of one kind and namespace with any of `names`, in one query,
/// newest incarnation first.
pub fn named_many(
    conn: &Connection,
    path: &Path,
    cluster: i64,
    kind: &str,
    namespace: &str,
    names: &[&str],
) -> Result<Vec<RecordedObject>, StoreError> {
    let hashes: Vec<i64> = names.iter().map(|n| fnv1a(n)).collect();
    let mut st = conn
        .prepare_cached(SQL_NAMED_MANY)
        .map_err(q("object lookup", path))?;
    let rows = st
        .query_map(
            named_params! {
                ":cluster": cluster, ":kind": kind, ":kh": fnv1a(kind),
                ":namespace": namespace, ":nsh": fnv1a(namespace),
                ":names": serde_json::to_string(names).unwrap_or_default(),
                ":hashes": serde_json::to_string(&hashes).unwrap_or_default(),
            },
            identity,
        )
        .map_err(q("object lookup", path))?;
    rows.collect::<Result<_, _>>()
        .map_err(q("object lookup", path))
}
