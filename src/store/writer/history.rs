//! Object history in the writer: a version only when the compact state
//! changes, every update counted per minute and writer, relations, deletions,
//! and the reconciliation of a relist after a blind interval.
//!
//! The writer keeps, per live object, only the hash of its last stored state,
//! its generation and its managedFields times: enough to diff, a few dozen
//! bytes an object. After a restart the first observation of an object reads
//! its last version from the recording instead.

use std::collections::{HashMap, HashSet};

use rusqlite::{OptionalExtension, named_params};

use super::{Applied, Writer};
use crate::model::provenance::stored_seen;
use crate::model::{
    ListedSet, ManagerEntry, ManagerMark, ObjectChange, ObjectObservation, ObjectState, Seen,
    TypeChange, manager_marks, writers,
};
use crate::store::{StoreError, fnv1a};

const SQL_VERSION_BY_RV: &str = include_str!("../../../queries/store/version_by_rv.sql");
const SQL_VERSION_SET_WRITERS: &str =
    include_str!("../../../queries/store/version_set_writers.sql");

/// What the writer remembers of one live object.
#[derive(Debug, Clone)]
pub(super) struct Tracked {
    id: i64,
    state_h: i64,
    generation: i64,
    /// (hash of the manager's label and operation, time, fields owned) per managedFields entry.
    managers: Vec<ManagerMark>,
    /// Digest of the document its next spec diff compares against; None: none stored.
    doc_h: Option<i64>,
    /// [`crate::model::outside_status_digest`] of the state last seen; 0
    /// when read back from the file (then `managers` is empty too).
    outside_h: i64,
    /// The state last seen had a deletion mark.
    deleting: bool,
    /// When its last version is dated: a version dated by its write is never
    /// dated before it.
    last_at: i64,
}

/// An object's last stored version as `version_last.sql` reads it: the state
/// text's hash, generation, observedGeneration, the text, and the digest of
/// the document its next spec diff compares against, and the version's time.
type LastVersion = (i64, i64, Option<i64>, String, Option<i64>, i64);

/// Per-minute update counters not yet written: (object, minute, manager) -> counts.
pub(super) type Counters = HashMap<(i64, i64, i64), Count>;

/// One writer's updates of one object in one minute.
#[derive(Debug, Default)]
pub(super) struct Count {
    updates: i64,
    versions: i64,
    generation: i64,
    /// The field (string id) this writer took over from another, if seen.
    field: Option<i64>,
}

/// Updates of an object within one minute before its field owners are
/// followed: a fight makes tens, and following every object would hold a
/// map of every field of everything that changed.
const HOT_AFTER: i64 = 2;

/// What the writer follows of an object updated often: its updates in the
/// current minute and, once hot, who owned which field at its last update.
#[derive(Debug, Default)]
pub(super) struct Contest {
    minute: i64,
    updates: i64,
    owners: Option<crate::specdiff::FieldOwners>,
}

/// What identifies a version: its state text's hash and its generations.
fn version_hash(text_h: i64, generation: i64, observed: Option<i64>) -> i64 {
    fnv1a(&format!("{text_h}/{generation}/{observed:?}"))
}

impl Writer {
    fn tracked(&mut self, o: &ObjectObservation, id: i64) -> Result<Option<Tracked>, StoreError> {
        if let Some(t) = self.tracked.get(&o.object.uid) {
            return Ok(Some(t.clone()));
        }
        let last: Option<LastVersion> = self.hot("last version lookup", |conn, hot| {
            hot.version_last
                .on(conn)?
                .first(named_params! {":object": id}, |row| {
                    Ok((
                        row.get(0)?,
                        row.get(1)?,
                        row.get(2)?,
                        row.get(3)?,
                        row.get(4)?,
                        row.get(5)?,
                    ))
                })
        })?;
        Ok(
            last.map(|(text_h, generation, observed, text, doc_h, last_at)| {
                let generation = if generation != 0 {
                    generation
                } else {
                    // Written before migration 3: the generation is inside the text.
                    serde_json::from_str::<ObjectState>(&text)
                        .map(|s| s.generation)
                        .unwrap_or(0)
                };
                Tracked {
                    id,
                    state_h: version_hash(text_h, generation, observed),
                    generation,
                    managers: Vec::new(),
                    doc_h,
                    outside_h: 0,
                    deleting: false,
                    last_at,
                }
            }),
        )
    }

    /// Names `by` as the writer of the version of object `uid` stored at
    /// resourceVersion `rv`, if one is: an audit entry of a write the
    /// recorder saw. Returns whether there was one (then nothing else of the
    /// entry is stored: see docs/schema.md, "Imports of audit logs").
    pub(super) fn merge_writer(
        &mut self,
        uid: &str,
        rv: &str,
        by: &str,
    ) -> Result<bool, StoreError> {
        let cluster = self.cluster;
        let found: Option<(i64, String)> = self
            .connection()
            .prepare_cached(SQL_VERSION_BY_RV)
            .and_then(|mut st| {
                st.query_row(
                    named_params! {":cluster": cluster, ":uid": uid, ":rv": rv},
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()
            })
            .map_err(self.err("version by resourceVersion"))?;
        let Some((id, writers)) = found else {
            return Ok(false);
        };
        // The person is what the audit log adds; a merge done before stays.
        if writers != by {
            let w = self.intern(by)?;
            self.connection()
                .prepare_cached(SQL_VERSION_SET_WRITERS)
                .and_then(|mut st| st.execute(named_params! {":writers": w, ":id": id}))
                .map_err(self.err("version writers"))?;
        }
        Ok(true)
    }

    /// Stores one object observation: a version when its compact state
    /// changed, an update count when it was an update. Idempotent for replays:
    /// an unchanged state stores no version. The writer is the change's own
    /// when its source names one (an audit log), else managedFields tell.
    pub(super) fn apply_object(&mut self, change: &ObjectChange) -> Result<Applied, StoreError> {
        let by = change.writer.as_deref();
        let o = &change.observation;
        let id = match self.tracked.get(&o.object.uid) {
            Some(t) => t.id,
            None => self.object(&o.object)?,
        };
        let previous = self.tracked(o, id)?;
        if previous.is_none() || !self.tracked.contains_key(&o.object.uid) {
            self.hot("object update", |conn, hot| {
                hot.object_seen
                    .on(conn)?
                    .execute(named_params! {":at": change.at, ":created": o.created, ":id": id})
            })?;
        }
        // NB: generation and observedGeneration are stored in columns, out of the
        // interned text: in a spec fight both rise on every write, and in the text
        // they would make every state unique.
        let text = serde_json::to_string(&ObjectState {
            generation: 0,
            observed_generation: None,
            ..o.state.clone()
        })
        .unwrap_or_default();
        let state_h = version_hash(
            fnv1a(&text),
            o.state.generation,
            o.state.observed_generation,
        );
        let outside_h = crate::model::outside_status_digest(&o.state);
        let who = writers(
            previous
                .as_ref()
                .filter(|p| !p.managers.is_empty())
                .map(|p| p.managers.as_slice()),
            &o.managers,
        );
        let doc_h = o.diff_doc.as_deref().map(fnv1a);
        let configmap = o.object.kind == "ConfigMap" && group_of(&o.object.api_version).is_empty();
        let (diff, owners) = match (&o.diff_doc, previous.as_ref().and_then(|p| p.doc_h)) {
            (Some(doc), Some(before)) if Some(before) != doc_h => {
                self.spec_diff(id, doc, configmap, &o.managers)?
            }
            _ => (String::new(), Vec::new()),
        };
        let who = version_writers(
            previous.as_ref(),
            o,
            owners,
            diff.is_empty(),
            who,
            outside_h,
        );
        let who = match by {
            Some(by) => vec![by.to_string()],
            None => who,
        };
        if let (Some(doc), Some(h)) = (&o.diff_doc, doc_h)
            && previous.as_ref().and_then(|p| p.doc_h) != Some(h)
        {
            self.save_doc(id, doc, h, configmap)?;
        }
        let new_version =
            !diff.is_empty() || previous.as_ref().is_none_or(|p| p.state_h != state_h);
        let generation_moved = previous
            .as_ref()
            .is_some_and(|p| p.generation != o.state.generation);
        let mut applied = Applied::default();
        let mut last_at = previous.as_ref().map(|p| p.last_at);
        if new_version {
            let spec_write = generation_moved || !diff.is_empty();
            let at = if by.is_none() && change.seen == Seen::Modified && spec_write {
                written_at(change.at, &o.managers, &who, last_at)
            } else {
                change.at
            };
            last_at = Some(at);
            let state = self.intern(&text)?;
            let writers = self.intern(&who.join(","))?;
            let diff = if diff.is_empty() {
                None
            } else {
                Some(self.intern(&diff)?)
            };
            self.hot("version insert", |conn, hot| {
                hot.version_insert.on(conn)?.execute(named_params! {
                    ":object": id, ":at": at, ":state": state,
                    ":writers": writers, ":seen": stored_seen(change.seen, change.provenance),
                    ":generation": o.state.generation, ":observed": o.state.observed_generation,
                    ":diff": diff,
                    ":rv": (!o.resource_version.is_empty()).then_some(o.resource_version.as_str()),
                })
            })?;
            applied.versions = 1;
            self.relations(id, o, change.at)?;
        }
        if change.seen == Seen::Modified {
            let moved = (new_version, generation_moved);
            self.count_update(id, change.at, &o.managers, who, moved)?;
        }
        if change.seen == Seen::Deleted {
            self.mark_deleted(id, change.at, change.blind_since)?;
            self.tracked.remove(&o.object.uid);
        } else {
            self.tracked.insert(
                o.object.uid.clone(),
                Tracked {
                    id,
                    state_h,
                    generation: o.state.generation,
                    managers: manager_marks(&o.managers),
                    doc_h: doc_h.or(previous.and_then(|p| p.doc_h)),
                    outside_h,
                    deleting: o.state.deletion.is_some(),
                    last_at: last_at.unwrap_or(change.at),
                },
            );
        }
        Ok(applied)
    }

    /// A spec document kept for the next diff. NB: a CRD's spec holds its
    /// whole OpenAPI schema (hundreds of KiB for some operators): past
    /// MAX_DOC only the digest is kept, and a change of it is said, not
    /// diffed. A ConfigMap's values (--configmap-values) past it: its keys
    /// with a digest of each value, as without the flag, so that the next
    /// diff still names the keys.
    fn save_doc(&mut self, id: i64, doc: &str, h: i64, configmap: bool) -> Result<(), StoreError> {
        let hidden = (configmap && doc.len() > crate::specdiff::MAX_DOC)
            .then(|| crate::specdiff::values_hidden(doc))
            .flatten();
        let kept = match &hidden {
            _ if doc.len() <= crate::specdiff::MAX_DOC => doc,
            Some(h) if h.len() <= crate::specdiff::MAX_DOC => h.as_str(),
            _ => "",
        };
        self.hot("spec document save", |conn, hot| {
            hot.spec_doc_save
                .on(conn)?
                .execute(named_params! {":object": id, ":digest": h, ":doc": kept})
        })?;
        Ok(())
    }

    /// An update counted per minute and writer (hot loops), with whether it
    /// made a version, moved the generation, and which field it took.
    fn count_update(
        &mut self,
        id: i64,
        at: i64,
        managers: &[crate::model::ManagerEntry],
        who: Vec<String>,
        (new_version, generation_moved): (bool, bool),
    ) -> Result<(), StoreError> {
        let minute = at.div_euclid(60_000);
        let taken = self.taken_field(id, minute, managers);
        let field = match taken {
            Some(path) => Some(self.intern(&path)?),
            None => None,
        };
        let labels = if who.is_empty() {
            vec![String::new()]
        } else {
            who
        };
        for label in labels {
            let manager = self.intern(&label)?;
            let entry = self.counters.entry((id, minute, manager)).or_default();
            entry.updates += 1;
            entry.versions += i64::from(new_version);
            entry.generation += i64::from(generation_moved);
            entry.field = field.or(entry.field);
        }
        Ok(())
    }

    fn relations(&mut self, child: i64, o: &ObjectObservation, at: i64) -> Result<(), StoreError> {
        let mut edges: Vec<(&str, &str, &str, &str, &str)> = o
            .state
            .owners
            .iter()
            .map(|r| {
                (
                    "owner",
                    r.kind.as_str(),
                    o.object.namespace.as_str(),
                    r.name.as_str(),
                    r.uid.as_str(),
                )
            })
            .collect();
        if !o.state.node_name.is_empty() {
            edges.push(("node", "Node", "", o.state.node_name.as_str(), ""));
        }
        for claim in &o.state.claims {
            edges.push((
                "claim",
                "PersistentVolumeClaim",
                o.object.namespace.as_str(),
                claim.as_str(),
                "",
            ));
        }
        for (rel, kind, namespace, name, uid) in edges {
            let (kind, namespace, name) = (
                self.intern(kind)?,
                self.intern(namespace)?,
                self.intern(name)?,
            );
            self.hot("relation insert", |conn, hot| {
                hot.relation_insert.on(conn)?.execute(named_params! {
                    ":child": child, ":rel": rel, ":kind": kind, ":namespace": namespace,
                    ":name": name, ":uid": uid, ":since": at,
                })
            })?;
        }
        Ok(())
    }

    fn mark_deleted(&mut self, id: i64, at: i64, after: Option<i64>) -> Result<(), StoreError> {
        self.hot("object deletion", |conn, hot| {
            hot.object_deleted
                .on(conn)?
                .execute(named_params! {":at": at, ":after": after, ":id": id})
        })?;
        self.hot("spec document deletion", |conn, hot| {
            hot.spec_doc_delete
                .on(conn)?
                .execute(named_params! {":object": id})
        })?;
        Ok(())
    }

    /// The stored diff (see [`crate::specdiff`]) from the object's last
    /// document to `doc`, and the managers that own a changed field now;
    /// empty when there is nothing to compare with.
    fn spec_diff(
        &mut self,
        id: i64,
        doc: &str,
        configmap: bool,
        managers: &[crate::model::ManagerEntry],
    ) -> Result<(String, Vec<String>), StoreError> {
        let before: Option<String> = self.hot("spec document lookup", |conn, hot| {
            hot.spec_doc_find
                .on(conn)?
                .first(named_params! {":object": id}, |r| r.get(1))
        })?;
        let owners: Vec<(String, String)> = managers
            .iter()
            .filter(|m| m.subresource != "status" && !m.fields_v1.is_empty())
            .map(|m| (m.label(), m.fields_v1.clone()))
            .collect();
        Ok(before
            .map(|b| {
                // NB: a ConfigMap over MAX_DOC (its values kept) is diffed by its
                // keys, as without --configmap-values: its key names were lost.
                // So is one whose baseline hides its values (kept past the
                // limit, or recorded without the flag): a hidden value against
                // a shown one would read as a change of every key.
                let keys_only = configmap
                    && !b.is_empty()
                    && (doc.len() > crate::specdiff::MAX_DOC || crate::specdiff::hides_values(&b));
                let hidden = keys_only
                    .then(|| {
                        Some((
                            crate::specdiff::values_hidden(&b)?,
                            crate::specdiff::values_hidden(doc)?,
                        ))
                    })
                    .flatten()
                    .filter(|(_, d)| d.len() <= crate::specdiff::MAX_DOC);
                let (changes, writers) = match hidden {
                    Some((b, d)) => crate::specdiff::diff_with_writers(&b, &d, &owners),
                    None if b.is_empty() || doc.len() > crate::specdiff::MAX_DOC => {
                        let path = if configmap { "data" } else { "spec" };
                        (
                            crate::specdiff::too_large(path, b.len(), doc.len()),
                            Vec::new(),
                        )
                    }
                    None => crate::specdiff::diff_with_writers(&b, doc, &owners),
                };
                (crate::specdiff::encode(&changes), writers)
            })
            .unwrap_or_default())
    }

    /// After a complete list: every tracked object of that type the list lacks
    /// was deleted while the recorder was not looking, so some time inside the
    /// blind interval, not at the time of the list.
    pub(super) fn apply_listed(&mut self, listed: &ListedSet) -> Result<Applied, StoreError> {
        let kind = self.intern(&listed.kind)?;
        let group = group_of(&listed.api_version);
        let namespace = if listed.namespace.is_empty() {
            None
        } else {
            Some(self.intern(&listed.namespace)?)
        };
        let cluster = self.cluster;
        let live: Vec<(i64, String)> = self.hot("live objects lookup", |conn, hot| {
            hot.objects_live.on(conn)?.all(
                named_params! {
                    ":cluster": cluster, ":kind": kind,
                    ":grp": group, ":namespace": namespace,
                },
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
        })?;
        let present: HashSet<&str> = listed.uids.iter().map(String::as_str).collect();
        let mut applied = Applied::default();
        for (id, uid) in live {
            if !present.contains(uid.as_str()) {
                let after = listed.blind_since.unwrap_or(listed.at);
                self.mark_deleted(id, listed.at, Some(after))?;
                self.tracked.remove(&uid);
                applied.versions += 1;
            }
        }
        Ok(applied)
    }

    /// A type appeared or went. When it went, its objects went with it at
    /// that moment (the apiserver deletes a CRD's objects before the CRD),
    /// and its watch positions are forgotten.
    pub(super) fn apply_type_change(&mut self, t: &TypeChange) -> Result<Applied, StoreError> {
        let cluster = self.cluster;
        self.hot("type change", |conn, hot| {
            hot.type_change_insert.on(conn)?.execute(named_params! {
                ":cluster": cluster, ":at": t.at, ":resource": t.resource,
                ":api_version": t.api_version, ":kind": t.kind,
                ":change": if t.removed { "removed" } else { "appeared" },
            })
        })?;
        if !t.removed {
            return Ok(Applied::default());
        }
        self.hot("watch position", |conn, hot| {
            hot.position_delete
                .on(conn)?
                .execute(named_params! {":cluster": cluster, ":resource": t.resource})
        })?;
        let (kind, group) = (self.intern(&t.kind)?, group_of(&t.api_version));
        let live: Vec<(i64, String)> = self.hot("live objects lookup", |conn, hot| {
            hot.objects_live.on(conn)?.all(
                named_params! {
                    ":cluster": cluster, ":kind": kind,
                    ":grp": group, ":namespace": None::<i64>,
                },
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
        })?;
        let mut applied = Applied::default();
        for (id, uid) in live {
            self.mark_deleted(id, t.at, None)?;
            self.tracked.remove(&uid);
            applied.versions += 1;
        }
        Ok(applied)
    }

    /// The field whose owner changed since the object's last update, for an
    /// object updated more than [`HOT_AFTER`] times this minute (and whose
    /// field sets are read: the diffed types); the first in path order when
    /// several did.
    fn taken_field(
        &mut self,
        id: i64,
        minute: i64,
        managers: &[crate::model::ManagerEntry],
    ) -> Option<String> {
        let c = self.contests.entry(id).or_default();
        if c.minute != minute {
            c.minute = minute;
            c.updates = 0;
        }
        c.updates += 1;
        if c.updates <= HOT_AFTER || managers.iter().all(|m| m.fields_v1.is_empty()) {
            return None;
        }
        let now = crate::specdiff::FieldOwners::from_sets(
            managers
                .iter()
                .filter(|m| !m.fields_v1.is_empty())
                .map(|m| (m.label(), m.fields_v1.as_str())),
        );
        let before = c.owners.replace(now)?;
        let taken = c.owners.as_ref()?.taken_since(&before);
        taken.first().map(|p| p.to_string())
    }

    /// Writes the update counters gathered since the last flush (inside the open batch).
    pub(super) fn flush_counters(&mut self) -> Result<(), StoreError> {
        let counters = std::mem::take(&mut self.counters);
        let mut newest = None;
        for ((object, minute, manager), c) in counters {
            newest = newest.max(Some(minute));
            self.hot("update counter", |conn, hot| {
                hot.counts_add.on(conn)?.execute(named_params! {
                    ":object": object, ":minute": minute, ":manager": manager,
                    ":updates": c.updates, ":versions": c.versions, ":generation": c.generation,
                    ":field": c.field,
                })
            })?;
        }
        // NB: objects not updated for a minute leave the contests, so the
        // map holds what changes now, not everything that ever changed.
        if let Some(newest) = newest {
            self.contests.retain(|_, c| c.minute + 1 >= newest);
        }
        Ok(())
    }
}

/// The group of an `apiVersion` (`""` for the core group's `v1`).
fn group_of(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(group, _)| group)
}

/// Who wrote a new version.
/// Who owns a changed field now wrote it: better than whose managedFields
/// entry moved, which cannot tell two writes within one second apart.
/// A spec change is never written through /status: when no owner is left
/// (a field removed), a status writer that moved meanwhile is not it.
/// When a spec write was made, for a version the watch saw at `seen_at`:
/// its writers' managedFields time when that lies in an earlier second (a
/// lagging watch, a loaded apiserver), else `seen_at`. Never before the
/// version it follows (`after`), never after it was seen.
///
/// NB: the observation is only an upper bound of the write (regression: CI
/// on 689056b told a Deployment's spec change, seen at .035 of the next
/// second, after the ReplicaSet it made).
fn written_at(seen_at: i64, managers: &[ManagerEntry], who: &[String], after: Option<i64>) -> i64 {
    let wrote = managers
        .iter()
        .filter(|m| m.subresource != "status" && who.contains(&m.label()))
        .filter_map(|m| m.time)
        .max();
    match wrote {
        Some(t) if t.div_euclid(1_000) < seen_at.div_euclid(1_000) => {
            t.max(after.map_or(i64::MIN, |a| a + 1)).min(seen_at)
        }
        _ => seen_at,
    }
}

/// NB: nor is a writer whose entry did not move (issue 47: a scale to 0
/// through the scale subresource leaves no entry and owns nothing; the
/// latest entry, an earlier `kubectl` write, was named as its writer):
/// with no owner and no moved entry, the writer is unknown.
fn version_writers(
    previous: Option<&Tracked>,
    o: &ObjectObservation,
    owners: Vec<String>,
    diff_empty: bool,
    who: Vec<String>,
    outside_h: i64,
) -> Vec<String> {
    match (owners.is_empty(), diff_empty) {
        (false, _) => owners,
        (true, false) => previous
            .filter(|p| !p.managers.is_empty())
            .map(|p| crate::model::moved_writers(&p.managers, &o.managers))
            .unwrap_or(who)
            .into_iter()
            .filter(|w| !w.ends_with("/status"))
            .collect(),
        // NB: nothing moved, so `who` is every entry of the latest second
        // (regression: a Deployment's status writes in the second of its
        // creation were "by kube-controller-manager/status, kubectl-create";
        // a Pod's deletion mark was by whoever wrote it last).
        (true, true) => match previous.filter(|p| !p.managers.is_empty()) {
            Some(p) if crate::model::moved_writers(&p.managers, &o.managers).is_empty() => {
                crate::model::unmoved_writers(
                    who,
                    p.outside_h == outside_h,
                    o.state.deletion.is_some() && !p.deleting,
                )
            }
            _ => who,
        },
    }
}

#[cfg(test)]
mod tests {
    use crate::model::{Change, ObjectChange, ObjectObservation, ObjectRef, ObjectState, Seen};

    fn change(generation: i64, digest: &str, at: i64) -> Change {
        Change::Object(ObjectChange {
            seen: Seen::Modified,
            at,
            blind_since: None,
            writer: None,
            provenance: crate::model::Provenance::Recorded,
            observation: Box::new(ObjectObservation {
                object: ObjectRef {
                    api_version: "apps/v1".into(),
                    kind: "Deployment".into(),
                    name: "web".into(),
                    uid: "u".into(),
                    ..ObjectRef::default()
                },
                state: ObjectState {
                    generation,
                    observed_generation: Some(generation),
                    spec_digest: digest.into(),
                    ..ObjectState::default()
                },
                ..ObjectObservation::default()
            }),
        })
    }

    fn with_rv(mut c: Change, rv: &str, provenance: crate::model::Provenance) -> Change {
        if let Change::Object(o) = &mut c {
            o.observation.resource_version = rv.into();
            o.provenance = provenance;
            if provenance == crate::model::Provenance::AuditLog {
                o.writer = Some("alice (kubectl-edit)".into());
            }
        }
        c
    }

    /// Issue 43: a version keeps where it comes from, through the writer's
    /// merge of an audit log's writer, and a recording from before that was
    /// kept says "unknown" where an audit log was imported, not "recorded".
    #[test]
    fn a_version_keeps_its_provenance_and_an_old_one_after_an_import_is_unknown() {
        use crate::model::Provenance::{AuditLog, Recorded, RecordedWriterFromAudit, Unknown};
        let (dir, mut w) = crate::store::testing::recording();
        let mut b = w.begin().unwrap();
        b.apply_change(&with_rv(change(1, "a", 1_000), "11", Recorded))
            .unwrap();
        b.apply_change(&with_rv(change(2, "b", 2_000), "12", Recorded))
            .unwrap();
        b.apply_change(&with_rv(change(3, "c", 3_000), "13", AuditLog))
            .unwrap();
        assert!(b.merge_writer("u", "12", "bob (kubectl-scale)").unwrap());
        b.commit().unwrap();
        let provenance = |w: &crate::store::writer::Writer| -> Vec<_> {
            let v = w.recording().versions(1).unwrap();
            v.iter().map(|v| (v.at, v.provenance)).collect()
        };
        assert_eq!(
            provenance(&w),
            [
                (1_000, Recorded),
                (2_000, RecordedWriterFromAudit),
                (3_000, AuditLog)
            ]
        );
        assert_eq!(
            w.recording().versions(1).unwrap()[1].writers,
            ["bob (kubectl-scale)"]
        );
        // The same file as a recording of schema 12, once an audit log was
        // imported into it: provenance was not kept, so none is told.
        w.connection()
            .execute_batch(
                "UPDATE versions SET seen = seen & 3;
                 INSERT INTO audit_ids (cluster_id, audit_id, at) VALUES (1, 'a-1', 3000);
                 PRAGMA user_version = 12;",
            )
            .unwrap();
        drop(w);
        let path = dir.path().join("diag.db");
        let read = crate::store::Recording::open(&path, crate::store::Mode::ReadOnly).unwrap();
        let told: Vec<_> = read
            .versions(1)
            .unwrap()
            .iter()
            .map(|v| v.provenance)
            .collect();
        assert_eq!(told, [Unknown, Unknown, Unknown], "read as it is");
        drop(read);
        let migrated = crate::store::Recording::open(&path, crate::store::Mode::Write).unwrap();
        let told: Vec<_> = migrated
            .versions(1)
            .unwrap()
            .iter()
            .map(|v| v.provenance)
            .collect();
        assert_eq!(told, [Unknown, Unknown, Unknown], "migrated");
    }

    /// Migration 13 in a cluster no audit log was imported into (another
    /// cluster of the file had one): what it stored was recorded, and says
    /// so, read as it is or migrated.
    #[test]
    fn an_old_recording_without_an_import_stays_recorded() {
        let (dir, mut w) = crate::store::testing::recording();
        let mut b = w.begin().unwrap();
        b.apply_change(&change(1, "a", 1_000)).unwrap();
        b.commit().unwrap();
        let other = w
            .recording()
            .register_cluster("uid-2", "ctx-2", "", 0)
            .unwrap();
        w.connection()
            .execute(
                "INSERT INTO audit_ids (cluster_id, audit_id, at) VALUES (?1, 'a-1', 3000)",
                [other],
            )
            .unwrap();
        w.connection()
            .execute_batch("PRAGMA user_version = 12;")
            .unwrap();
        drop(w);
        let path = dir.path().join("diag.db");
        for mode in [crate::store::Mode::ReadOnly, crate::store::Mode::Write] {
            let r = crate::store::Recording::open(&path, mode).unwrap();
            let v = r.versions(1).unwrap();
            assert_eq!(
                v[0].provenance,
                crate::model::Provenance::Recorded,
                "{mode:?}"
            );
        }
    }

    /// Regression: with the generations inside the state text, every write of
    /// a spec fight stored a new ~150-byte state.
    #[test]
    fn a_spec_fight_stores_its_two_states_once_and_every_generation() {
        let (_dir, mut w) = crate::store::testing::recording();
        let mut b = w.begin().unwrap();
        for i in 1..=100 {
            let digest = if i % 2 == 0 { "a" } else { "b" };
            b.apply_change(&change(i, digest, i * 1000)).unwrap();
        }
        // The same observation again (a replay) stores nothing.
        b.apply_change(&change(100, "a", 200_000)).unwrap();
        b.commit().unwrap();
        let count = |sql: &str| -> i64 { w.connection().query_row(sql, [], |r| r.get(0)).unwrap() };
        assert_eq!(count("SELECT count(*) FROM versions"), 100);
        assert_eq!(count("SELECT count(DISTINCT state) FROM versions"), 2);
        let versions = w.recording().versions(1).unwrap();
        assert_eq!(versions[41].state.generation, 42);
        assert_eq!(versions[41].state.observed_generation, Some(42));
    }

    /// A ConfigMap whose label `owner` `writer` set last (an Update takes the
    /// field), its data owned by its creator, field sets as the apiserver keeps them.
    fn labelled(at: i64, writer: &str) -> Change {
        let entry = |manager: &str, time: i64, fields: &str| crate::model::ManagerEntry {
            manager: manager.into(),
            operation: "Update".into(),
            time: Some(time),
            fields_v1: fields.into(),
            ..crate::model::ManagerEntry::default()
        };
        Change::Object(ObjectChange {
            seen: Seen::Modified,
            at,
            blind_since: None,
            writer: None,
            provenance: crate::model::Provenance::Recorded,
            observation: Box::new(ObjectObservation {
                object: ObjectRef {
                    api_version: "v1".into(),
                    kind: "ConfigMap".into(),
                    namespace: "shop".into(),
                    name: "contested".into(),
                    uid: "cm".into(),
                    ..ObjectRef::default()
                },
                diff_doc: Some(r#"{"data":{}}"#.into()),
                managers: vec![
                    entry(writer, at, r#"{"f:metadata":{"f:labels":{"f:owner":{}}}}"#),
                    entry("kubectl-create", 0, r#"{"f:data":{"f:k":{}}}"#),
                ],
                ..ObjectObservation::default()
            }),
        })
    }

    /// A fight over a label made no version, and the recording knew who fought
    /// but not over what: `check --db` said "fight between a and b" only.
    #[test]
    fn a_label_fight_records_the_field_that_changes_hands() {
        let (_dir, mut w) = crate::store::testing::recording();
        let mut b = w.begin().unwrap();
        for i in 0..40 {
            let writer = if i % 2 == 0 { "team-a" } else { "team-b" };
            b.apply_change(&labelled(60_000 + i * 1_000, writer))
                .unwrap();
        }
        b.commit().unwrap();
        let fields: Vec<String> = w
            .connection()
            .prepare("SELECT DISTINCT s.s FROM update_counts c JOIN strings s ON s.id = c.field")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(fields, vec!["metadata.labels.owner"]);
        let snap = w
            .recording()
            .snapshot(w.cluster(), 119_000, 60_000)
            .unwrap();
        let findings = crate::checks::run(&snap, &[], &crate::checks::Options::default());
        let hot = findings
            .findings
            .iter()
            .find(|f| f.object.name == "contested")
            .expect("a hot-loop finding");
        assert!(
            hot.summary
                .ends_with("fight between team-a and team-b over metadata.labels.owner"),
            "{}",
            hot.summary
        );
    }

    fn widget(api_version: &str, uid: &str, seen: Seen, at: i64) -> Change {
        Change::Object(ObjectChange {
            seen,
            at,
            blind_since: None,
            writer: None,
            provenance: crate::model::Provenance::Recorded,
            observation: Box::new(ObjectObservation {
                object: ObjectRef {
                    api_version: api_version.into(),
                    kind: "Widget".into(),
                    namespace: "shop".into(),
                    name: uid.into(),
                    uid: uid.into(),
                    ..ObjectRef::default()
                },
                ..ObjectObservation::default()
            }),
        })
    }

    /// Issue 27.5: objects stored through v1 were never marked deleted by a
    /// relist through v2, since the live objects were looked up by version.
    #[test]
    fn a_relist_through_another_version_marks_objects_stored_through_the_first_deleted() {
        let (_dir, mut w) = crate::store::testing::recording();
        let mut b = w.begin().unwrap();
        for uid in ["a", "b", "c"] {
            b.apply_change(&widget("example.com/v1", uid, Seen::Listed, 1_000))
                .unwrap();
        }
        // Same kind in another group: not this type's object.
        b.apply_change(&widget("other.example.org/v1", "z", Seen::Listed, 1_000))
            .unwrap();
        b.apply_change(&Change::Listed(crate::model::ListedSet {
            api_version: "example.com/v2".into(),
            kind: "Widget".into(),
            namespace: String::new(),
            uids: vec!["a".into(), "c".into()],
            blind_since: Some(5_000),
            at: 9_000,
        }))
        .unwrap();
        b.commit().unwrap();
        let deleted: Vec<(String, i64, i64)> = w
            .connection()
            .prepare("SELECT uid, deleted, deleted_after FROM objects WHERE deleted IS NOT NULL")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(deleted, vec![("b".to_string(), 9_000, 5_000)]);
    }

    fn crd(doc: String, at: i64) -> Change {
        Change::Object(ObjectChange {
            seen: Seen::Modified,
            at,
            blind_since: None,
            writer: None,
            provenance: crate::model::Provenance::Recorded,
            observation: Box::new(ObjectObservation {
                object: ObjectRef {
                    api_version: "apiextensions.k8s.io/v1".into(),
                    kind: "CustomResourceDefinition".into(),
                    name: "databases.drill.example.com".into(),
                    uid: "crd".into(),
                    ..ObjectRef::default()
                },
                state: ObjectState {
                    spec_digest: format!("{:x}", crate::units::fnv1a(&doc)),
                    ..ObjectState::default()
                },
                diff_doc: Some(doc),
                ..ObjectObservation::default()
            }),
        })
    }

    /// A CRD's spec carries its whole schema: past MAX_DOC the recording keeps
    /// its digest only, and a change says so instead of a diff.
    #[test]
    fn a_spec_too_large_to_keep_is_not_stored_and_its_change_is_said() {
        let (_dir, mut w) = crate::store::testing::recording();
        let schema = |v: &str| {
            format!(
                r#"{{"spec":{{"schema":"{}","v":"{v}"}}}}"#,
                "x".repeat(100_000)
            )
        };
        let mut b = w.begin().unwrap();
        b.apply_change(&crd(schema("1"), 1_000)).unwrap();
        b.apply_change(&crd(schema("2"), 2_000)).unwrap();
        b.commit().unwrap();
        let kept: i64 = w
            .connection()
            .query_row("SELECT sum(length(doc)) FROM spec_docs", [], |r| r.get(0))
            .unwrap();
        assert_eq!(kept, 0, "only the digest of a document over 64 KiB is kept");
        let versions = w.recording().versions(1).unwrap();
        let diff: Vec<String> = versions[1].diff.iter().map(|c| c.text()).collect();
        assert_eq!(
            diff,
            ["spec (not kept: over 64 KiB) → (100030 bytes, too large to diff)"]
        );
    }

    fn configmap(doc: String, at: i64) -> Change {
        let Change::Object(mut c) = crd(doc, at) else {
            unreachable!()
        };
        c.observation.object = ObjectRef {
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
            namespace: "shop".into(),
            name: "big".into(),
            uid: "cm".into(),
            ..ObjectRef::default()
        };
        Change::Object(c)
    }

    /// Regression (issue 27.13): with --configmap-values, a ConfigMap over
    /// 64 KiB read "spec (not kept: over 64 KiB) → (… bytes, too large to
    /// diff)": it lost the names of its keys (and a ConfigMap has no spec).
    /// They are kept past the limit, as without the flag; values omitted.
    #[test]
    fn a_configmap_over_64_kib_with_its_values_still_names_its_keys() {
        let (_dir, mut w) = crate::store::testing::recording();
        let doc = |pairs: &[(&str, &str)]| {
            let data: serde_json::Map<String, serde_json::Value> = pairs
                .iter()
                .map(|(k, v)| (k.to_string(), serde_json::Value::String(v.to_string())))
                .collect();
            serde_json::json!({ "data": data }).to_string()
        };
        let big = "x".repeat(200_000);
        let before = doc(&[("k1", "a"), ("k5", &big), ("k6", "gone")]);
        let after = doc(&[("k1", "a"), ("k5", &format!("{big}y")), ("new", "n")]);
        let small = doc(&[("k1", "b"), ("new", "n")]);
        let mut b = w.begin().unwrap();
        b.apply_change(&configmap(before, 1_000)).unwrap();
        b.apply_change(&configmap(after, 2_000)).unwrap();
        b.apply_change(&configmap(small, 3_000)).unwrap();
        b.commit().unwrap();
        let kept: i64 = w
            .connection()
            .query_row("SELECT max(length(doc)) FROM spec_docs", [], |r| r.get(0))
            .unwrap();
        assert!(
            kept < 1_000,
            "values over 64 KiB are not kept: {kept} bytes"
        );
        let versions = w.recording().versions(1).unwrap();
        let diff =
            |i: usize| -> Vec<String> { versions[i].diff.iter().map(|c| c.text()).collect() };
        assert_eq!(
            diff(1),
            ["data.k5 changed", "data.k6 removed", "data.new added"]
        );
        // Back under the limit, from a baseline whose values were not kept:
        // the keys that changed, not every key.
        assert_eq!(diff(2), ["data.k1 changed", "data.k5 removed"]);
    }

    /// After a restart the writer knows nothing of an object until its first
    /// observation: the baseline's digest comes back with its last version,
    /// so the first change after the restart is still diffed.
    #[test]
    fn a_restarted_writer_diffs_against_the_stored_baseline() {
        let (dir, mut w) = crate::store::testing::recording();
        let small = |v: &str| format!(r#"{{"spec":{{"v":"{v}"}}}}"#);
        let mut b = w.begin().unwrap();
        b.apply_change(&crd(small("1"), 1_000)).unwrap();
        b.commit().unwrap();
        drop(w);
        let path = dir.path().join("diag.db");
        let conn = crate::store::Recording::open(&path, crate::store::Mode::Write).unwrap();
        let mut w = crate::store::writer::Writer::new(conn, 1);
        let mut b = w.begin().unwrap();
        b.apply_change(&crd(small("2"), 2_000)).unwrap();
        b.commit().unwrap();
        let versions = w.recording().versions(1).unwrap();
        let diff: Vec<String> = versions[1].diff.iter().map(|c| c.text()).collect();
        assert_eq!(diff, ["spec.v 1 → 2"]);
    }

    /// Regression (issue 47, played on the local cluster): a Deployment
    /// scaled to 0 through the scale subresource by `cost-bot` was told as
    /// `kubectl`'s change. That write leaves no managedFields entry of its
    /// own and `spec.replicas` no owner; the latest entry (an earlier
    /// `kubectl` write) was taken as its writer. Nothing moved, so the
    /// writer is unknown; a write whose entry moved is still named.
    #[test]
    fn a_scale_through_the_subresource_is_not_told_as_the_last_writers_change() {
        let (_dir, mut w) = crate::store::testing::recording();
        let entry = |manager: &str, sub: &str, time: i64, fields: u32, set: &str| {
            crate::model::ManagerEntry {
                manager: manager.into(),
                operation: "Update".into(),
                subresource: sub.into(),
                time: Some(time),
                fields,
                fields_v1: set.into(),
            }
        };
        let apply = r#"{"f:spec":{"f:replicas":{},"f:template":{}}}"#;
        let image = r#"{"f:spec":{"f:template":{"f:spec":{}}}}"#;
        let deployment = |doc: &str, at: i64, managers: Vec<crate::model::ManagerEntry>| {
            let Change::Object(mut c) = crd(doc.to_string(), at) else {
                unreachable!()
            };
            c.observation.object = ObjectRef {
                api_version: "apps/v1".into(),
                kind: "Deployment".into(),
                namespace: "shop".into(),
                name: "api".into(),
                uid: "d".into(),
                ..ObjectRef::default()
            };
            c.observation.managers = managers;
            Change::Object(c)
        };
        let mut b = w.begin().unwrap();
        b.apply_change(&deployment(
            r#"{"spec":{"replicas":3,"image":"api:1"}}"#,
            1_000,
            vec![entry("kubectl-client-side-apply", "", 1_000, 4, apply)],
        ))
        .unwrap();
        // kubectl sets the image: its entry is new.
        b.apply_change(&deployment(
            r#"{"spec":{"replicas":3,"image":"api:2"}}"#,
            2_000,
            vec![
                entry("kubectl-client-side-apply", "", 1_000, 3, apply),
                entry("kubectl", "", 2_000, 1, image),
            ],
        ))
        .unwrap();
        // cost-bot scales to 0 through /scale: replicas loses its owner, no entry moves.
        b.apply_change(&deployment(
            r#"{"spec":{"replicas":0,"image":"api:2"}}"#,
            3_000,
            vec![
                entry(
                    "kubectl-client-side-apply",
                    "",
                    1_000,
                    2,
                    r#"{"f:spec":{"f:template":{}}}"#,
                ),
                entry("kubectl", "", 2_000, 1, image),
            ],
        ))
        .unwrap();
        b.commit().unwrap();
        let versions = w.recording().versions(1).unwrap();
        let diff: Vec<String> = versions[2].diff.iter().map(|c| c.text()).collect();
        assert_eq!(diff, ["spec.replicas 3 → 0"]);
        assert!(
            versions[2].writers.is_empty(),
            "no entry moved: the writer is unknown, not {:?}",
            versions[2].writers
        );
        assert_eq!(versions[1].writers, ["kubectl"]);
    }

    /// Regression (CI on 689056b): a Deployment's spec change seen by a
    /// lagging watch at 32.035 was dated then, after the ReplicaSet it made
    /// (created at 31). Its writer's managedFields entry says 31: the
    /// version is dated by the write, to the second; a write seen within
    /// its own second keeps the watch's milliseconds; and a write is never
    /// dated before the version it follows.
    #[test]
    fn a_spec_write_seen_in_a_later_second_is_dated_by_its_writers_entry() {
        let (_dir, mut w) = crate::store::testing::recording();
        let entry = |manager: &str, time: i64| crate::model::ManagerEntry {
            manager: manager.into(),
            operation: "Update".into(),
            time: Some(time),
            fields: 1,
            ..Default::default()
        };
        let version = |doc: &str, at: i64, managers: Vec<crate::model::ManagerEntry>| {
            let Change::Object(mut c) = crd(doc.to_string(), at) else {
                unreachable!()
            };
            c.observation.managers = managers;
            Change::Object(c)
        };
        let mut b = w.begin().unwrap();
        b.apply_change(&version(r#"{"v":1}"#, 29_500, vec![entry("a", 29_000)]))
            .unwrap();
        // Written in second 31, seen at 32.035.
        b.apply_change(&version(
            r#"{"v":2}"#,
            32_035,
            vec![entry("a", 29_000), entry("rollout", 31_000)],
        ))
        .unwrap();
        // Written and seen in second 33.
        b.apply_change(&version(
            r#"{"v":3}"#,
            33_700,
            vec![entry("a", 29_000), entry("rollout", 33_000)],
        ))
        .unwrap();
        // Another writer's entry says 33 too, seen at 34.2: not before the
        // version it follows.
        b.apply_change(&version(
            r#"{"v":4}"#,
            34_200,
            vec![
                entry("a", 29_000),
                entry("rollout", 33_000),
                entry("b", 33_000),
            ],
        ))
        .unwrap();
        b.commit().unwrap();
        let at: Vec<i64> = w
            .recording()
            .versions(1)
            .unwrap()
            .iter()
            .map(|v| v.at)
            .collect();
        assert_eq!(at, [29_500, 31_000, 33_700, 33_701]);
    }
}
