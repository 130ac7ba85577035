//! The recorded path of `check`: one [`Snapshot`] of a recorded cluster at
//! any past moment, built from object history, Events and update counters.

use rusqlite::named_params;
use std::collections::HashMap;

use super::{Recording, StoreError};
use crate::checks::{ObjectUpdates, Snapshot};
use crate::model::EventSummary;
use crate::model::Which;
use crate::model::cluster::NoChoice;
use crate::model::{ObjectRef, RecordedObject};

const SQL_CHECK_EVENTS: &str = include_str!("../../queries/store/check_events.sql");
const SQL_CLUSTER_FIND: &str = include_str!("../../queries/store/cluster_find.sql");
const SQL_LATEST_TIME: &str = include_str!("../../queries/store/latest_time.sql");
const SQL_HAS_HISTORY: &str = include_str!("../../queries/store/has_history.sql");
const SQL_PODS_SCOPE: &str = include_str!("../../queries/store/pods_scope.sql");
const SQL_WATCHED_TYPES: &str = include_str!("../../queries/store/watched_types.sql");
const SQL_CLUSTER_WINDOW: &str = include_str!("../../queries/store/cluster_window.sql");

/// What a cluster's recording covers (epoch ms): the recorder's sessions
/// and the imports' spans.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct ClusterWindow {
    pub recorded_from: Option<i64>,
    pub recorded_until: Option<i64>,
    pub sessions: i64,
    pub imported_from: Option<i64>,
    pub imported_until: Option<i64>,
}

/// A recorded cluster: (row id, uid, label).
pub type ClusterRow = (i64, String, String);

impl Recording {
    /// Recorded clusters matching `--cluster` (uid or label), or all of them.
    pub fn clusters(&self, wanted: Option<&str>) -> Result<Vec<ClusterRow>, StoreError> {
        let mut st = self
            .conn
            .prepare_cached(SQL_CLUSTER_FIND)
            .map_err(self.q("clusters"))?;
        let rows = st
            .query_map(named_params! {":cluster": wanted}, |r| {
                Ok((r.get("id")?, r.get("uid")?, r.get("label")?))
            })
            .map_err(self.q("clusters"))?;
        rows.collect::<Result<_, _>>().map_err(self.q("clusters"))
    }

    /// The recorded clusters `which` picks (`--cluster`, the only one, or
    /// `--all-clusters`); an error lists what the recording holds.
    pub fn choose_clusters(&self, which: &Which) -> Result<Vec<ClusterRow>, StoreError> {
        let held = self.clusters(None)?;
        let holds = || crate::model::cluster::listed(&held);
        match which.choose(&held) {
            Ok(chosen) => Ok(chosen.into_iter().cloned().collect()),
            Err(NoChoice::Empty) => Err(StoreError::NoCluster {
                path: self.path().to_path_buf(),
            }),
            Err(NoChoice::NoSuch(wanted)) => Err(StoreError::NoSuchCluster {
                wanted,
                holds: holds(),
            }),
            Err(NoChoice::Ambiguous(_) | NoChoice::Several) => {
                Err(StoreError::SeveralClusters { holds: holds() })
            }
        }
    }

    /// The one recorded cluster a reader reads: `--cluster` (uid or label),
    /// else the only one.
    pub fn choose_cluster(&self, wanted: Option<&str>) -> Result<ClusterRow, StoreError> {
        let mut chosen = self.choose_clusters(&Which::One(wanted.map(str::to_string)))?;
        Ok(chosen.remove(0))
    }

    /// The latest moment recorded for a cluster (epoch ms; 0 when nothing is).
    pub fn latest_time(&self, cluster: i64) -> Result<i64, StoreError> {
        self.conn
            .prepare_cached(SQL_LATEST_TIME)
            .and_then(|mut st| st.query_row(named_params! {":cluster": cluster}, |r| r.get(0)))
            .map_err(self.q("latest time"))
    }

    /// What the recording of `cluster` covers.
    pub fn cluster_window(&self, cluster: i64) -> Result<ClusterWindow, StoreError> {
        self.conn
            .prepare_cached(SQL_CLUSTER_WINDOW)
            .and_then(|mut st| {
                st.query_row(named_params! {":cluster": cluster}, |r| {
                    Ok(ClusterWindow {
                        recorded_from: r.get("recorded_from")?,
                        recorded_until: r.get("recorded_until")?,
                        sessions: r.get("sessions")?,
                        imported_from: r.get("imported_from")?,
                        imported_until: r.get("imported_until")?,
                    })
                })
            })
            .map_err(self.q("cluster window"))
    }

    /// The types the recorder watched in `cluster`, by full plural name.
    pub fn watched_types(&self, cluster: i64) -> Result<Vec<String>, StoreError> {
        let mut st = self
            .conn
            .prepare_cached(SQL_WATCHED_TYPES)
            .map_err(self.q("watched types"))?;
        let rows = st
            .query_map(named_params! {":cluster": cluster}, |r| r.get(0))
            .map_err(self.q("watched types"))?;
        rows.collect::<Result<_, _>>()
            .map_err(self.q("watched types"))
    }

    /// The snapshot of `cluster` at `at`; `window_ms` is the span for update rates and storms.
    pub fn snapshot(&self, cluster: i64, at: i64, window_ms: i64) -> Result<Snapshot, StoreError> {
        let mut objects = Vec::new();
        let mut relevance = crate::checks::Relevance::default();
        let mut usage = crate::checks::scheduling_causes::Usage::default();
        let mut index = crate::checks::relations::Index::default();
        self.for_each_state_at(cluster, at, |o| {
            usage.add(&o);
            index.add(&o);
            if relevance.keep(&o) {
                objects.push(o);
            }
        })?;
        for t in self.watched_types(cluster)? {
            index.mark_read(&t);
        }
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
                o.generation_since = generation_since(self, o, at)?;
            }
        }

        let origins = node_origins(self, &objects, at)?;

        let from = at - window_ms;
        let events = self.check_events(cluster, from, at)?;

        let updates = self.updates(cluster, from, at)?;

        // NB: a recorder run with -n saw only its namespaces' Pods; what others
        // hold on each Node is unknown, and the sentences say so.
        let pods_scope: Option<i64> = self
            .conn
            .prepare_cached(SQL_PODS_SCOPE)
            .and_then(|mut st| st.query_row(named_params! {":cluster": cluster}, |r| r.get(0)))
            .map_err(self.q("pods scope"))?;
        if pods_scope == Some(0) {
            usage.only_namespace = Some(String::new());
        }
        let has_objects = self
            .conn
            .prepare_cached(SQL_HAS_HISTORY)
            .and_then(|mut st| {
                st.query_row(named_params! {":cluster": cluster, ":at": at}, |r| r.get(0))
            })
            .map_err(self.q("history lookup"))?;
        let refusals = self.refusals(cluster, from, at, None)?;
        let kinds = if refusals.is_empty() {
            std::collections::HashMap::new()
        } else {
            self.kinds_by_resource(cluster)?
        };
        // NB: the recorder watches a type whole, so a recording that holds
        // Nodes holds every Node it saw; one gone by `at` is not in `objects`.
        let all_nodes = has_objects && objects.iter().any(|o| o.object.kind == "Node");
        let mut snapshot = Snapshot {
            at,
            all_nodes,
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
            refusals,
            kinds,
            absent: Vec::new(),
            index,
        };
        snapshot.settle();
        Ok(snapshot)
    }

    /// The Events `check` reads at `at`: the troubling ones of the window
    /// and the scheduler's of the lookback.
    fn check_events(
        &self,
        cluster: i64,
        from: i64,
        at: i64,
    ) -> Result<Vec<EventSummary>, StoreError> {
        let mut st = self
            .conn
            .prepare_cached(SQL_CHECK_EVENTS)
            .map_err(self.q("events"))?;
        st.query_map(
            named_params! {
                ":cluster": cluster, ":at": at, ":from": from,
                ":scheduling": serde_json::json!(crate::model::event::SCHEDULING).to_string(),
                ":lookback": crate::model::event::LOOKBACK_MS,
            },
            |r| {
                Ok(EventSummary {
                    involved: ObjectRef {
                        api_version: r.get("api_version")?,
                        kind: r.get("kind")?,
                        namespace: r.get("namespace")?,
                        name: r.get("name")?,
                        uid: r.get("uid")?,
                        field_path: String::new(),
                    },
                    reason: r.get("reason")?,
                    type_: r.get("type")?,
                    reporting: r.get("reporting")?,
                    host: r.get("host")?,
                    first: r.get("first")?,
                    last: r.get("last")?,
                    count: r.get("count")?,
                    in_window: r.get("in_window")?,
                    message: r.get::<_, Option<String>>("message")?.unwrap_or_default(),
                })
            },
        )
        .map_err(self.q("events"))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(self.q("events"))
    }

    /// The objects updated twice or more in `[from, at]`: per minute, per
    /// writer, and the fields writers took from each other (hot loops).
    fn updates(&self, cluster: i64, from: i64, at: i64) -> Result<Vec<ObjectUpdates>, StoreError> {
        // Update counters over the window, per object.
        let mut per_object: HashMap<i64, ObjectUpdates> = HashMap::new();
        let mut managers: HashMap<(i64, String), i64> = HashMap::new();
        let mut minutes: HashMap<i64, std::collections::BTreeMap<i64, i64>> = HashMap::new();
        // Per object, each field a writer took over and in how many (minute, writer) rows.
        let mut contested: HashMap<i64, HashMap<String, i64>> = HashMap::new();
        for c in self.update_counts(cluster, from, at)? {
            if let Some(field) = c.field {
                *contested
                    .entry(c.object_id)
                    .or_default()
                    .entry(field)
                    .or_default() += 1;
            }
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
            let Some(o) = self.object(id)? else {
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
            u.contested = contested
                .remove(&id)
                .unwrap_or_default()
                .into_iter()
                .collect();
            u.contested
                .sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            updates.push(u);
        }
        updates.sort_by_key(|u| std::cmp::Reverse(u.updates));
        Ok(updates)
    }

    /// Each recorded type's kind by its full resource name (`deployments.apps`).
    fn kinds_by_resource(
        &self,
        cluster: i64,
    ) -> Result<std::collections::HashMap<String, String>, StoreError> {
        Ok(self
            .resource_types(cluster)?
            .types
            .into_iter()
            .map(|t| {
                let full = if t.group.is_empty() {
                    t.plural
                } else {
                    format!("{}.{}", t.plural, t.group)
                };
                (full, t.kind)
            })
            .collect())
    }
}

/// Since when an object's generation has been what it is at `at`, from its versions.
fn generation_since(
    recording: &Recording,
    o: &RecordedObject,
    at: i64,
) -> Result<Option<i64>, StoreError> {
    let versions = recording.versions(o.id)?;
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

/// Since when, and by whom, each tainted or cordoned Node has been so at `at`.
fn node_origins(
    recording: &Recording,
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
    let mut versions = recording.versions_many(&ids)?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{
        Change, EventChange, EventObservation, ObjectChange, ObjectObservation, ObjectState, Seen,
    };

    const MESSAGE: &str = "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.";

    /// Regression (flake of `at_on_a_recording_finds_what_was_true_then_and_is_not_now`):
    /// a check early in a recording, before any object watch had stored an
    /// object, read the scheduling Events alone and found the Pod; the same
    /// moment asked again once object history existed read it as a recording
    /// with history, in which the Pod did not exist yet, and found nothing.
    #[test]
    fn a_moment_before_object_history_is_read_from_events_alone_later_too() {
        let (_dir, mut w) = crate::store::testing::recording();
        let cluster = w.cluster();
        let pod = ObjectRef {
            api_version: "v1".into(),
            kind: "Pod".into(),
            namespace: "shop".into(),
            name: "too-big".into(),
            uid: "pod-uid".into(),
            field_path: String::new(),
        };
        let mut b = w.begin().unwrap();
        b.apply_change(&Change::Event(EventChange::Upsert(Box::new(
            EventObservation {
                uid: "00000000-0000-4000-8000-000000000001".into(),
                namespace: "shop".into(),
                name: "too-big.187c000000000001".into(),
                involved: pod.clone(),
                reason: "FailedScheduling".into(),
                type_: "Warning".into(),
                message: MESSAGE.into(),
                first: 1_000,
                last: 1_000,
                count: 1,
                ..EventObservation::default()
            },
        ))))
        .unwrap();
        b.commit().unwrap();
        let s001 = |w: &crate::store::writer::Writer, at: i64| {
            let snap = w.recording().snapshot(cluster, at, 600_000).unwrap();
            let report = crate::checks::run(
                &snap,
                &[crate::checks::Check::Scheduling],
                &crate::checks::Options::default(),
            );
            report
                .findings
                .iter()
                .filter(|f| f.code == crate::checks::Code::S001)
                .count()
        };
        assert_eq!(s001(&w, 1_500), 1, "Events alone: the Pod is unschedulable");
        // The object watches store their first objects after that moment.
        let mut b = w.begin().unwrap();
        b.apply_change(&Change::Object(ObjectChange {
            seen: Seen::Listed,
            at: 2_000,
            blind_since: None,
            writer: None,
            provenance: crate::model::Provenance::Recorded,
            observation: Box::new(ObjectObservation {
                object: ObjectRef {
                    api_version: "v1".into(),
                    kind: "Namespace".into(),
                    name: "shop".into(),
                    uid: "ns-uid".into(),
                    ..ObjectRef::default()
                },
                state: ObjectState {
                    phase: "Active".into(),
                    ..ObjectState::default()
                },
                ..ObjectObservation::default()
            }),
        }))
        .unwrap();
        b.commit().unwrap();
        assert_eq!(
            s001(&w, 1_500),
            1,
            "the same moment reads the same way later"
        );
    }
}
