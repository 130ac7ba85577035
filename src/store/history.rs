//! Reading object history: time travel (every object's state at T), one
//! object's versions, incarnations by name, relations and update counters.

use rusqlite::{OptionalExtension, Row, named_params};

use super::{Recording, StoreError, fnv1a};
use crate::model::provenance::StoredSeen;
use crate::model::{ObjectRef, ObjectState, RecordedObject, UpdateCount, Version};

const SQL_STATES_AT: &str = include_str!("../../queries/store/history_states_at.sql");
const SQL_VERSIONS: &str = include_str!("../../queries/store/history_versions.sql");
const SQL_OBJECT_CLUSTER: &str = include_str!("../../queries/store/object_cluster.sql");
const SQL_OBJECTS_NAMED: &str = include_str!("../../queries/store/history_objects_named.sql");
const SQL_CHILDREN: &str = include_str!("../../queries/store/history_children.sql");
const SQL_COUNTS: &str = include_str!("../../queries/store/history_counts.sql");
const SQL_STRING_ID: &str = include_str!("../../queries/store/string_id.sql");
const SQL_VERSIONS_MANY: &str = include_str!("../../queries/store/history_versions_many.sql");
const SQL_OBJECTS_MANY: &str = include_str!("../../queries/store/history_objects_many.sql");
const SQL_NAMED_MANY: &str = include_str!("../../queries/store/history_named_many.sql");
const SQL_OF_KIND_IN: &str = include_str!("../../queries/store/history_of_kind_in.sql");

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

/// An object's identity, from the columns id, api_version, kind, namespace,
/// name, uid, created, first_seen, deleted and deleted_after.
fn identity(row: &Row<'_>) -> rusqlite::Result<RecordedObject> {
    Ok(RecordedObject {
        id: row.get("id")?,
        object: ObjectRef {
            api_version: row.get("api_version")?,
            kind: row.get("kind")?,
            namespace: row.get("namespace")?,
            name: row.get("name")?,
            uid: row.get("uid")?,
            field_path: String::new(),
        },
        created: row.get("created")?,
        first_seen: row.get("first_seen")?,
        deleted: row.get("deleted")?,
        deleted_after: row.get("deleted_after")?,
        ..RecordedObject::default()
    })
}

fn json_ids(ids: &[i64]) -> String {
    serde_json::to_string(ids).unwrap_or_else(|_| "[]".into())
}

/// A version, from the columns at, state, writers, seen, generation,
/// observed_generation and diff.
fn version(row: &Row<'_>, provenance_unkept: bool) -> rusqlite::Result<Version> {
    // `provenance_unkept`: the object's cluster is one of [`Recording`]'s.
    let mut seen = StoredSeen::read(row.get("seen")?);
    if provenance_unkept {
        seen.provenance = crate::model::Provenance::Unknown;
    }
    Ok(Version {
        at: row.get("at")?,
        state: state(
            &row.get::<_, String>("state")?,
            row.get("generation")?,
            row.get("observed_generation")?,
        ),
        writers: writers(&row.get::<_, String>("writers")?),
        listed: seen.listed(),
        diff: crate::specdiff::decode(&row.get::<_, Option<String>>("diff")?.unwrap_or_default()),
        provenance: seen.provenance,
    })
}

impl Recording {
    /// The provenance a stored `versions.seen` says, as this recording can
    /// tell it (see [`Recording`]'s `provenance_unkept`).
    pub(super) fn provenance(&self, cluster: i64, stored_seen: i64) -> crate::model::Provenance {
        if self.provenance_unkept.contains(&cluster) {
            crate::model::Provenance::Unknown
        } else {
            StoredSeen::read(stored_seen).provenance
        }
    }

    /// Whether the versions of object `id` do not say their provenance (see
    /// [`Recording`]); one lookup, only in a recording read unmigrated.
    fn provenance_unkept_of(&self, id: i64) -> Result<bool, StoreError> {
        if self.provenance_unkept.is_empty() {
            return Ok(false);
        }
        let cluster = self.cluster_of(id)?;
        Ok(cluster.is_some_and(|c| self.provenance_unkept.contains(&c)))
    }

    /// The cluster of object `id`.
    fn cluster_of(&self, id: i64) -> Result<Option<i64>, StoreError> {
        self.conn
            .prepare_cached(SQL_OBJECT_CLUSTER)
            .and_then(|mut st| {
                st.query_row(named_params! {":id": id}, |r| r.get(0))
                    .optional()
            })
            .map_err(self.q("object's cluster"))
    }

    /// Every watched object that existed at `t`, with its state then.
    pub fn states_at(&self, cluster: i64, t: i64) -> Result<Vec<RecordedObject>, StoreError> {
        let mut all = Vec::new();
        self.for_each_state_at(cluster, t, |o| all.push(o))?;
        Ok(all)
    }

    /// Like [`Recording::states_at`], one object at a time (Namespaces
    /// first), so a caller can keep only what it needs: memory then does not
    /// grow with the cluster.
    pub fn for_each_state_at(
        &self,
        cluster: i64,
        t: i64,
        mut each: impl FnMut(RecordedObject),
    ) -> Result<(), StoreError> {
        let mut st = self
            .conn
            .prepare_cached(SQL_STATES_AT)
            .map_err(self.q("time travel"))?;
        let rows = st
            .query_map(named_params! {":cluster": cluster, ":t": t}, |row| {
                let mut o = identity(row)?;
                o.state_at = row.get("state_at")?;
                o.state = state(
                    &row.get::<_, String>("state")?,
                    row.get("generation")?,
                    row.get("observed_generation")?,
                );
                o.writers = writers(&row.get::<_, String>("writers")?);
                // NB: a state first seen as its object's creation, unchanged
                // since, has had its spec since the creation: what a live
                // reader reads from managedFields (issue 43: a Service's
                // L001 said when its spec last changed live, not recorded).
                if StoredSeen::read(row.get("seen")?).added() {
                    o.generation_since = o.created;
                }
                Ok(o)
            })
            .map_err(self.q("time travel"))?;
        for row in rows {
            each(row.map_err(self.q("time travel"))?);
        }
        Ok(())
    }

    /// One object by its row id, without state.
    pub fn object(&self, id: i64) -> Result<Option<RecordedObject>, StoreError> {
        Ok(self.objects_many(&[id])?.into_iter().next())
    }

    /// Every version of one object, oldest first.
    pub fn versions(&self, id: i64) -> Result<Vec<Version>, StoreError> {
        let unkept = self.provenance_unkept_of(id)?;
        let mut st = self
            .conn
            .prepare_cached(SQL_VERSIONS)
            .map_err(self.q("versions"))?;
        let rows = st
            .query_map(named_params! {":object": id}, |row| version(row, unkept))
            .map_err(self.q("versions"))?;
        rows.collect::<Result<_, _>>().map_err(self.q("versions"))
    }

    /// The id of a stored string, if it is stored.
    pub fn string_id(&self, s: &str) -> Result<Option<i64>, StoreError> {
        self.conn
            .prepare_cached(SQL_STRING_ID)
            .and_then(|mut st| {
                st.query_row(named_params! {":h": fnv1a(s), ":s": s}, |r| r.get(0))
                    .optional()
            })
            .map_err(self.q("string lookup"))
    }

    /// Every incarnation of kind/namespace/name, newest first (deleted ones included).
    pub fn named(
        &self,
        cluster: i64,
        kind: &str,
        namespace: &str,
        name: &str,
    ) -> Result<Vec<RecordedObject>, StoreError> {
        let (Some(kind), Some(namespace), Some(name)) = (
            self.string_id(kind)?,
            self.string_id(namespace)?,
            self.string_id(name)?,
        ) else {
            return Ok(Vec::new());
        };
        let ids: Vec<i64> = self
            .conn
            .prepare_cached(SQL_OBJECTS_NAMED)
            .and_then(|mut st| {
                st.query_map(
                    named_params! {":cluster": cluster, ":kind": kind, ":namespace": namespace, ":name": name},
                    |r| r.get("id"),
                )?
                .collect()
            })
            .map_err(self.q("object lookup"))?;
        let mut found = Vec::new();
        for id in ids {
            if let Some(o) = self.object(id)? {
                found.push(o);
            }
        }
        Ok(found)
    }

    /// Objects pointing at `parent` (owned by it, or Pods on that Node / using that claim): (row id, relation).
    pub fn children(
        &self,
        cluster: i64,
        parent: &ObjectRef,
    ) -> Result<Vec<(i64, String)>, StoreError> {
        let (Some(kind), Some(namespace), Some(name)) = (
            self.string_id(&parent.kind)?,
            self.string_id(&parent.namespace)?,
            self.string_id(&parent.name)?,
        ) else {
            return Ok(Vec::new());
        };
        self.conn
            .prepare_cached(SQL_CHILDREN)
            .and_then(|mut st| {
                st.query_map(
                    named_params! {
                        ":cluster": cluster, ":kind": kind, ":namespace": namespace,
                        ":name": name, ":uid": parent.uid,
                    },
                    |r| Ok((r.get("child_id")?, r.get("rel")?)),
                )?
                .collect()
            })
            .map_err(self.q("relations"))
    }

    /// Update counters of one cluster between two times (epoch ms; whole minutes).
    pub fn update_counts(
        &self,
        cluster: i64,
        from: i64,
        to: i64,
    ) -> Result<Vec<UpdateCount>, StoreError> {
        let mut st = self
            .conn
            .prepare_cached(SQL_COUNTS)
            .map_err(self.q("update counters"))?;
        let rows = st
            .query_map(
                named_params! {
                    ":cluster": cluster, ":from": from.div_euclid(60_000), ":to": to.div_euclid(60_000) + 1,
                },
                |row| {
                    Ok(UpdateCount {
                        object_id: row.get("object_id")?,
                        minute: row.get("minute")?,
                        manager: row.get("manager")?,
                        updates: row.get("updates")?,
                        versions: row.get("versions")?,
                        generation: row.get("generation")?,
                        field: row.get("field")?,
                    })
                },
            )
            .map_err(self.q("update counters"))?;
        rows.collect::<Result<_, _>>()
            .map_err(self.q("update counters"))
    }

    /// Every version of several objects, in one query: object id -> versions, oldest first.
    pub fn versions_many(
        &self,
        ids: &[i64],
    ) -> Result<std::collections::HashMap<i64, Vec<Version>>, StoreError> {
        let mut st = self
            .conn
            .prepare_cached(SQL_VERSIONS_MANY)
            .map_err(self.q("versions"))?;
        let rows = st
            .query_map(named_params! {":ids": json_ids(ids)}, |row| {
                Ok((row.get::<_, i64>("object_id")?, version(row, false)?))
            })
            .map_err(self.q("versions"))?;
        let mut out: std::collections::HashMap<i64, Vec<Version>> =
            std::collections::HashMap::new();
        for row in rows {
            let (id, v) = row.map_err(self.q("versions"))?;
            out.entry(id).or_default().push(v);
        }
        for (&id, versions) in out.iter_mut() {
            if self.provenance_unkept_of(id)? {
                versions
                    .iter_mut()
                    .for_each(|v| v.provenance = crate::model::Provenance::Unknown);
            }
        }
        Ok(out)
    }

    /// Several objects by row id, in one query (without state).
    pub fn objects_many(&self, ids: &[i64]) -> Result<Vec<RecordedObject>, StoreError> {
        let mut st = self
            .conn
            .prepare_cached(SQL_OBJECTS_MANY)
            .map_err(self.q("object lookup"))?;
        let rows = st
            .query_map(named_params! {":ids": json_ids(ids)}, identity)
            .map_err(self.q("object lookup"))?;
        rows.collect::<Result<_, _>>()
            .map_err(self.q("object lookup"))
    }

    /// Objects of one kind and namespace with any of `names`, in one query,
    /// newest incarnation first.
    /// Every recorded object of `kind` in `namespace`, each incarnation,
    /// newest first within a name.
    pub fn of_kind_in(
        &self,
        cluster: i64,
        kind: &str,
        namespace: &str,
    ) -> Result<Vec<RecordedObject>, StoreError> {
        let mut st = self
            .conn
            .prepare_cached(SQL_OF_KIND_IN)
            .map_err(self.q("object lookup"))?;
        let rows = st
            .query_map(
                named_params! {
                    ":cluster": cluster, ":kind": kind, ":kh": fnv1a(kind),
                    ":namespace": namespace, ":nsh": fnv1a(namespace),
                },
                identity,
            )
            .map_err(self.q("object lookup"))?;
        rows.collect::<Result<_, _>>()
            .map_err(self.q("object lookup"))
    }

    pub fn named_many(
        &self,
        cluster: i64,
        kind: &str,
        namespace: &str,
        names: &[&str],
    ) -> Result<Vec<RecordedObject>, StoreError> {
        let hashes: Vec<i64> = names.iter().map(|n| fnv1a(n)).collect();
        let mut st = self
            .conn
            .prepare_cached(SQL_NAMED_MANY)
            .map_err(self.q("object lookup"))?;
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
            .map_err(self.q("object lookup"))?;
        rows.collect::<Result<_, _>>()
            .map_err(self.q("object lookup"))
    }
}
