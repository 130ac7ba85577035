//! The timeline with no recording: what the cluster still holds, turned into
//! the same plain facts a recording gives (objects with versions, Events), so
//! that one assembly, one summary and one set of checks tell the story. Pure:
//! the live objects come in as plain data ([`LiveObject`], built in
//! `k8s::reconstruct`), and every entry says how certain it is:
//!
//! - `exact`: the field means that instant (`creationTimestamp`, a
//!   condition's `lastTransitionTime`, an Event's first and last time).
//! - `last`: only the latest occurrence survives (a field manager's last
//!   write, a container's current state, a restart count).
//! - `inferred`: a named rule joins two traces (a revision's template
//!   change is dated by its ReplicaSet's creation; its writer is the
//!   manager of `spec.template` who wrote within 2 s of it).
//! - `gap`: what is provably missing, and why (pruned revisions, restarts of
//!   which only the last is visible, Events before the apiserver's hour).
//!
//! docs/timeline.md lists every rule.

use crate::model::{ManagerEntry, ObjectState, RecordedObject, Version};

use super::{Entry, EntryKind, Subject};

/// How far a manager's write may be from a ReplicaSet's creation to be
/// taken for the write that made that revision.
pub const WRITE_TOLERANCE_MS: i64 = 2_000;

/// One live object as the reconstruction needs it.
#[derive(Debug, Clone, Default)]
pub struct LiveObject {
    pub object: RecordedObject,
    pub relation: Option<super::Relation>,
    pub depth: u32,
    /// managedFields, with the paths each entry owns.
    pub managers: Vec<(ManagerEntry, Vec<String>)>,
    /// `deployment.kubernetes.io/revision` (a ReplicaSet's).
    pub revision: Option<i64>,
    /// `deployment.kubernetes.io/revision-history`: the revisions this
    /// ReplicaSet had before a rollback made it current again.
    pub revision_history: Vec<i64>,
    /// `kubernetes.io/change-cause`.
    pub change_cause: String,
    /// The template's `kubectl.kubernetes.io/restartedAt` (epoch ms).
    pub restarted_at: Option<i64>,
    /// Per container: (name, running since, last termination's end).
    pub container_times: Vec<(String, Option<i64>, Option<i64>)>,
    /// Per container: its last termination's start (`lastState.terminated.startedAt`).
    pub last_started: Vec<(String, Option<i64>)>,
    /// `metadata.deletionGracePeriodSeconds`: the deletion was asked for
    /// this long before `deletionTimestamp`.
    pub deletion_grace_s: Option<i64>,
    /// An HPA's `status.lastScaleTime` and `status.desiredReplicas`.
    pub last_scale: Option<(i64, Option<i64>)>,
    /// A Node's heartbeat: its Lease's (`kube-node-lease`) last renewal and duration (s).
    pub heartbeat: Option<(i64, i64)>,
}

/// The plain facts, ready for [`super::assemble`], and what only a
/// reconstruction says.
#[derive(Debug, Default)]
pub struct Reconstruction {
    pub subjects: Vec<Subject>,
    /// Entries no version diff yields: managers' last writes, gaps.
    pub extra: Vec<Entry>,
    /// Kept revisions, oldest first.
    pub revisions: Vec<i64>,
}

fn entry(
    at: i64,
    o: &RecordedObject,
    type_: &str,
    reason: &str,
    message: String,
    certainty: &'static str,
    rule: &str,
) -> Entry {
    let mut e = super::entry(
        at,
        None,
        EntryKind::Transition,
        &o.object,
        type_,
        reason.to_string(),
        message,
    );
    e.certainty = Some(certainty);
    e.rule = (!rule.is_empty()).then(|| rule.to_string());
    e
}

/// The versions an object's present state implies: one at its creation
/// (nothing observed yet), one at each condition's last transition (the
/// conditions that had moved by then), and its present state at the last
/// known instant (container states and counters are `last`).
fn versions(o: &LiveObject) -> Vec<Version> {
    // NB: the spec's story is the revisions' (a Deployment's) or unknown: no
    // synthesized version may claim a spec change, so every version carries
    // no generation, and only a Pod's or a ReplicaSet's images (which the
    // object had all its life).
    let mut present = o.object.state.clone();
    present.generation = 0;
    present.observed_generation = None;
    for c in &mut present.conditions {
        c.observed_generation = None;
    }
    if !matches!(o.object.object.kind.as_str(), "Pod" | "ReplicaSet" | "Job") {
        present.images.clear();
    }
    let s = &present;
    let created = o.object.created.unwrap_or(o.object.state_at);
    let mut times: Vec<i64> = s
        .conditions
        .iter()
        .filter_map(|c| c.last_transition)
        .collect();
    times.extend(o.container_times.iter().filter_map(|(_, start, _)| *start));
    // NB: deletionTimestamp is when the grace period ends; the deletion was
    // asked for that grace period before.
    let requested = s
        .deletion
        .map(|d| d - o.deletion_grace_s.unwrap_or(0).max(0) * 1000);
    times.extend(requested);
    times.retain(|t| *t >= created);
    times.sort_unstable();
    times.dedup();
    let at_creation = ObjectState {
        images: s.images.clone(),
        owners: s.owners.clone(),
        replicas: s
            .replicas
            .iter()
            .filter(|(k, _)| k.starts_with("spec."))
            .map(|(k, v)| (k.clone(), *v))
            .collect(),
        spec_digest: s.spec_digest.clone(),
        phase: if o.object.object.kind == "Pod" {
            "Pending".into()
        } else {
            String::new()
        },
        ..ObjectState::default()
    };
    let mut out = vec![Version {
        at: created,
        state: at_creation.clone(),
        ..Version::default()
    }];
    for t in times {
        let mut state = at_creation.clone();
        state.conditions = s
            .conditions
            .iter()
            .filter(|c| c.last_transition.is_some_and(|ct| ct <= t))
            .cloned()
            .collect();
        if requested.is_some_and(|r| t >= r) {
            state.deletion = s.deletion;
            state.finalizers = s.finalizers.clone();
        }
        // A Pod is on its Node from the moment it was scheduled.
        if o.object.object.kind == "Pod"
            && state
                .conditions
                .iter()
                .any(|c| c.type_ == "PodScheduled" && c.status == "True")
        {
            state.node_name = s.node_name.clone();
        }
        out.push(Version {
            at: t,
            state,
            ..Version::default()
        });
    }
    // The present state, as of now: what it says beyond its conditions
    // (container states, counters, phase) is `last`, dated when it was read.
    out.push(Version {
        at: o.object.state_at.max(out.last().map_or(created, |v| v.at)),
        state: s.clone(),
        ..Version::default()
    });
    out
}

/// The revisions of a Deployment from its ReplicaSets: each kept revision is
/// a version of the Deployment at its ReplicaSet's creation with that
/// template (images, restart), written by the manager of `spec.template`
/// whose last write is closest to it, within [`WRITE_TOLERANCE_MS`], for the
/// newest revision only (a manager's time is its last write, so an older
/// revision's writer is unknown).
fn revisions(target: &LiveObject, sets: &[&LiveObject], r: &mut Reconstruction) {
    let mut kept: Vec<&&LiveObject> = sets.iter().filter(|s| s.revision.is_some()).collect();
    kept.sort_by_key(|s| s.revision);
    r.revisions = kept.iter().filter_map(|s| s.revision).collect();
    let Some(first) = r.revisions.first().copied() else {
        return;
    };
    let o = &target.object;
    if first > 1 {
        let at = kept[0].object.created.unwrap_or(o.state_at);
        r.extra.push(entry(
            at,
            o,
            "Normal",
            "RevisionsPruned",
            format!(
                "revisions 1–{} are gone (revisionHistoryLimit): what they ran and when is not known",
                first - 1
            ),
            "gap",
            "revisions",
        ));
    }
    let template_writes: Vec<&(ManagerEntry, Vec<String>)> = target
        .managers
        .iter()
        .filter(|(m, paths)| {
            m.subresource.is_empty() && paths.iter().any(|p| p.starts_with("spec.template"))
        })
        .collect();
    let mut previous: Option<&LiveObject> = None;
    let newest = kept.last().map(|rs| rs.object.object.uid.clone());
    for rs in kept {
        let at = rs.object.created.unwrap_or(o.state_at);
        let images = rs.object.state.images.join(", ");
        // NB: only the newest revision can be attributed: a manager's time is
        // its last write, so it says nothing of the revisions before that write.
        let writer = template_writes
            .iter()
            .filter_map(|(m, _)| m.time.map(|t| ((t - at).abs(), m)))
            .filter(|(d, _)| *d <= WRITE_TOLERANCE_MS)
            .min_by_key(|(d, _)| *d)
            .map(|(_, m)| m.label())
            .filter(|_| newest.as_deref() == Some(rs.object.object.uid.as_str()));
        let revision = rs.revision.unwrap_or(0);
        let mut what = match previous {
            None => format!(
                "revision {revision} ({} {}): {images}",
                rs.object.object.kind, rs.object.object.name
            ),
            Some(p) if p.object.state.images != rs.object.state.images => format!(
                "revision {revision} ({} {}): image {} → {images}",
                rs.object.object.kind,
                rs.object.object.name,
                p.object.state.images.join(", ")
            ),
            Some(_) => format!(
                "revision {revision} ({} {}): template changed, images unchanged ({images})",
                rs.object.object.kind, rs.object.object.name
            ),
        };
        if let Some(r) = rs.restarted_at {
            what.push_str(&format!(
                "; rollout restart at {}",
                crate::units::rfc3339(r)
            ));
        }
        if !rs.revision_history.is_empty() {
            let was: Vec<String> = rs.revision_history.iter().map(i64::to_string).collect();
            what.push_str(&format!(
                "; a rollback: this template was revision {} before",
                was.join(", ")
            ));
        }
        if !rs.change_cause.is_empty() {
            what.push_str(&format!("; change-cause: {}", rs.change_cause));
        }
        let mut e = entry(
            at,
            o,
            "Normal",
            "Revision",
            what,
            "inferred",
            "revision: the ReplicaSet's (or ControllerRevision's) creationTimestamp dates its template",
        );
        if let Some(w) = writer {
            e.writers = vec![w];
            e.rule = Some(format!(
                "revision: the ReplicaSet's (or ControllerRevision's) creationTimestamp dates its template; writer (newest revision only): the spec.template manager whose last write is closest to it, within {} s",
                WRITE_TOLERANCE_MS / 1000
            ));
        }
        r.extra.push(e);
        previous = Some(rs);
    }
    // A template no ReplicaSet carries yet: written, and not acted on (the
    // controller is gone, or the rollout is refused before its first step).
    let Some(newest) = previous else { return };
    let state = &o.state;
    let last_write = template_writes
        .iter()
        .filter_map(|(m, _)| m.time.map(|t| (t, m)))
        .max_by_key(|(t, _)| *t);
    let newest_at = newest.object.created.unwrap_or(0);
    let unobserved = state
        .observed_generation
        .is_some_and(|og| og < state.generation);
    let images_differ = !state.images.is_empty() && state.images != newest.object.state.images;
    // NB: a write within the tolerance of the newest ReplicaSet may be the
    // one that made it; with other images than it has, it cannot be.
    if let Some((at, m)) = last_write.filter(|(t, _)| {
        (images_differ && *t >= newest_at) || (unobserved && *t > newest_at + WRITE_TOLERANCE_MS)
    }) {
        let what = if images_differ {
            format!(
                "image {} → {}",
                newest.object.state.images.join(", "),
                state.images.join(", ")
            )
        } else {
            "the template".to_string()
        };
        let mut observed = match state.observed_generation {
            Some(og) if og < state.generation => format!(
                "; generation {} not observed (status of generation {og})",
                state.generation
            ),
            _ => String::new(),
        };
        // NB: a paused Deployment observes its generation and makes no ReplicaSet.
        if let Some(c) = state
            .conditions
            .iter()
            .find(|c| c.type_ == "Progressing" && c.reason == "DeploymentPaused")
        {
            observed.push_str(&format!("; paused ({}): {}", c.reason, c.message));
        }
        let mut e = entry(
            at,
            o,
            "Normal",
            "TemplateChanged",
            format!(
                "{what}: no {} has this template yet (newest: revision {}, {} {}){observed}",
                newest.object.object.kind,
                newest.revision.unwrap_or(0),
                newest.object.object.kind,
                newest.object.object.name
            ),
            "last",
            "managedFields: the spec.template manager's latest write, after the newest revision's creation",
        );
        e.writers = vec![m.label()];
        r.extra.push(e);
    }
}

/// The kind whose objects are the revisions of a `kind`.
fn revision_kind(kind: &str) -> Option<&'static str> {
    match kind {
        "Deployment" => Some("ReplicaSet"),
        "StatefulSet" | "DaemonSet" => Some("ControllerRevision"),
        _ => None,
    }
}

/// What the cluster's live objects still say, as plain facts.
pub fn reconstruct(objects: &[LiveObject]) -> Reconstruction {
    let mut r = Reconstruction::default();
    for o in objects {
        // NB: a ControllerRevision is a revision of its owner's story, not a lane of its own.
        if o.object.object.kind == "ControllerRevision" {
            continue;
        }
        r.subjects.push(Subject {
            object: o.object.clone(),
            relation: o.relation,
            depth: o.depth,
            versions: versions(o),
        });
        // Who wrote what: only each manager's last write survives. Of the
        // target and its owners only (a controller writes what it owns all
        // day), and not to status.
        let people = matches!(
            o.relation,
            Some(super::Relation::Target | super::Relation::Owner)
        );
        for (m, paths) in o.managers.iter().filter(|_| people) {
            let Some(at) = m.time else { continue };
            if m.subresource == "status" {
                continue;
            }
            let shown: Vec<&str> = paths
                .iter()
                .map(String::as_str)
                .filter(|p| !p.starts_with("metadata.") && !p.starts_with("status."))
                .take(4)
                .collect();
            if shown.is_empty() {
                continue;
            }
            let more = paths.len().saturating_sub(shown.len());
            let more = if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            };
            let mut e = entry(
                at,
                &o.object,
                "Normal",
                "LastWrite",
                format!(
                    "last write by {} ({}) at {}: owns {}{more}; earlier writes are not kept",
                    m.label(),
                    m.operation,
                    crate::units::rfc3339(at),
                    shown.join(", ")
                ),
                "last",
                "managedFields: each manager's time is its latest write",
            );
            e.writers = vec![m.label()];
            r.extra.push(e);
        }
        // An HPA keeps only its last scale.
        if let Some((at, desired)) = o.last_scale {
            let to = desired
                .map(|d| format!(" (desired replicas now {d})"))
                .unwrap_or_default();
            r.extra.push(entry(
                at,
                &o.object,
                "Normal",
                "LastScale",
                format!(
                    "last scaled its target at {}{to}; earlier scales are not kept",
                    crate::units::rfc3339(at)
                ),
                "last",
                "status.lastScaleTime",
            ));
        }
        // A CronJob keeps only its last schedule (its Jobs tell the kept runs).
        if let Some(at) = o.object.state.last_schedule {
            r.extra.push(entry(
                at,
                &o.object,
                "Normal",
                "LastSchedule",
                format!(
                    "last scheduled a Job at {}; earlier schedules are not kept",
                    crate::units::rfc3339(at)
                ),
                "last",
                "status.lastScheduleTime",
            ));
        }
        // A Node: when its NoExecute taints came (the apiserver stamps
        // timeAdded), and a heartbeat that stopped.
        for t in o.object.state.taints.iter() {
            let Some(at) = t.added else { continue };
            let value = if t.value.is_empty() {
                String::new()
            } else {
                format!("={}", t.value)
            };
            r.extra.push(entry(
                at,
                &o.object,
                "Warning",
                "Tainted",
                format!(
                    "taint {}{value}:{} added: Pods that do not tolerate it are evicted",
                    t.key, t.effect
                ),
                "exact",
                "the taint's timeAdded",
            ));
        }
        if let Some((renewed, duration_s)) = o.heartbeat
            && o.object.state_at - renewed
                > (2 * duration_s.max(1) * 1000).max(crate::checks::leases::MIN_STALE_MS)
        {
            r.extra.push(entry(
                renewed,
                &o.object,
                "Warning",
                "HeartbeatStopped",
                format!(
                    "the kubelet last renewed this Node's Lease (kube-node-lease/{}) at {}, {} before now: it is not running, or cannot reach the apiserver",
                    o.object.object.name,
                    crate::units::rfc3339(renewed),
                    crate::units::human_duration(o.object.state_at - renewed)
                ),
                "last",
                "the Node Lease's renewTime",
            ));
        }
        // The last termination: its end is exact, what came before it is not kept.
        for c in o
            .object
            .state
            .containers
            .iter()
            .filter(|c| c.restarts > 0 || !c.last_reason.is_empty())
        {
            let Some(finished) = o
                .container_times
                .iter()
                .find(|(n, _, _)| *n == c.name)
                .and_then(|(_, _, last)| *last)
            else {
                continue;
            };
            let started = o
                .last_started
                .iter()
                .find(|(n, _)| *n == c.name)
                .and_then(|(_, s)| *s)
                .map(|s| format!(", ran {}", crate::units::human_duration(finished - s)))
                .unwrap_or_default();
            let exit = c
                .last_exit_code
                .map(|x| format!(", exit code {x}"))
                .unwrap_or_default();
            r.extra.push(entry(
                finished,
                &o.object,
                if c.last_exit_code.unwrap_or(0) != 0 || c.last_reason == "OOMKilled" {
                    "Warning"
                } else {
                    "Normal"
                },
                "Terminated",
                format!(
                    "container {} terminated: {}{exit}{started}",
                    c.name,
                    if c.last_reason.is_empty() {
                        "no reason"
                    } else {
                        &c.last_reason
                    }
                ),
                "exact",
                "lastState.terminated.finishedAt",
            ));
        }
        // Restarts: only the last termination is visible.
        for c in &o.object.state.containers {
            if c.restarts > 1 {
                r.extra.push(entry(
                    o.container_times
                        .iter()
                        .find(|(n, _, _)| *n == c.name)
                        .and_then(|(_, _, last)| *last)
                        .unwrap_or(o.object.state_at),
                    &o.object,
                    "Warning",
                    "RestartsNotVisible",
                    format!(
                        "container {} restarted {} times; only the last termination ({}) is visible: {} restarts not visible",
                        c.name,
                        c.restarts,
                        if c.last_reason.is_empty() { "no reason" } else { &c.last_reason },
                        c.restarts - 1
                    ),
                    "gap",
                    "lastState: the kubelet keeps one termination",
                ));
            }
        }
    }
    if let Some(target) = objects
        .iter()
        .find(|o| o.relation == Some(super::Relation::Target))
        && let Some(kind) = revision_kind(&target.object.object.kind)
    {
        let sets: Vec<&LiveObject> = objects
            .iter()
            .filter(|o| {
                o.object.object.kind == kind
                    && o.object
                        .state
                        .owners
                        .iter()
                        .any(|w| w.uid == target.object.object.uid)
            })
            .collect();
        revisions(target, &sets, &mut r);
    }
    r
}

/// Marks the entries a recording-free assembly derived: Events and
/// creations and condition transitions are `exact`; what the present state
/// alone says (a container's state, counters) is `last`.
pub fn mark(entries: &mut [Entry]) {
    for e in entries.iter_mut().filter(|e| e.certainty.is_none()) {
        let (certainty, rule) = match (e.entry, e.reason.as_str()) {
            (EntryKind::Event, _) => ("exact", "Event: its first and last time, and its count"),
            (_, "Created") => ("exact", "creationTimestamp"),
            (_, "Condition") => ("exact", "the condition's lastTransitionTime"),
            (_, "Bound") => ("exact", "PodScheduled's lastTransitionTime"),
            (_, "DeletionStarted") => ("exact", "deletionTimestamp minus the grace period"),
            _ => ("last", "the present state: when it began is not kept"),
        };
        e.certainty = Some(certainty);
        e.rule = Some(rule.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Condition, ObjectRef, OwnerRef};

    /// The first extra entry of `reason`; panics naming it when there is none.
    fn extra<'a>(r: &'a Reconstruction, reason: &str) -> &'a Entry {
        r.extra
            .iter()
            .find(|e| e.reason == reason)
            .unwrap_or_else(|| panic!("no {reason} entry in {:?}", r.extra))
    }

    fn live(kind: &str, name: &str, created: i64) -> LiveObject {
        LiveObject {
            object: RecordedObject {
                object: ObjectRef {
                    api_version: "apps/v1".into(),
                    kind: kind.into(),
                    namespace: "shop".into(),
                    name: name.into(),
                    uid: format!("uid-{name}"),
                    field_path: String::new(),
                },
                created: Some(created),
                state_at: 100_000,
                ..RecordedObject::default()
            },
            ..LiveObject::default()
        }
    }

    fn manager(name: &str, time: i64, paths: &[&str]) -> (ManagerEntry, Vec<String>) {
        (
            ManagerEntry {
                manager: name.into(),
                operation: "Update".into(),
                time: Some(time),
                ..ManagerEntry::default()
            },
            paths.iter().map(|p| p.to_string()).collect(),
        )
    }

    fn replica_set(name: &str, revision: i64, created: i64, image: &str) -> LiveObject {
        let mut rs = live("ReplicaSet", name, created);
        rs.relation = Some(super::super::Relation::Owned);
        rs.revision = Some(revision);
        rs.object.state.images = vec![image.into()];
        rs.object.state.owners = vec![OwnerRef {
            kind: "Deployment".into(),
            name: "checkout".into(),
            uid: "uid-checkout".into(),
            controller: true,
            ..OwnerRef::default()
        }];
        rs
    }

    #[test]
    fn revisions_are_dated_by_their_replicasets_and_the_last_one_by_its_writer() {
        let mut d = live("Deployment", "checkout", 1_000);
        d.relation = Some(super::super::Relation::Target);
        d.managers = vec![
            manager(
                "kubectl-create",
                1_000,
                &["spec.replicas", "spec.template.spec.containers[app].image"],
            ),
            manager(
                "ci-bot",
                60_500,
                &["spec.template.spec.containers[app].image"],
            ),
        ];
        let objects = vec![
            d,
            replica_set("checkout-a", 3, 30_000, "shop:2"),
            replica_set("checkout-b", 4, 60_000, "shop:3"),
        ];
        let r = reconstruct(&objects);
        assert_eq!(r.revisions, vec![3, 4]);
        let lines: Vec<String> = r
            .extra
            .iter()
            .filter(|e| matches!(e.reason.as_str(), "Revision" | "RevisionsPruned"))
            .map(|e| {
                format!(
                    "{} {} {} {:?} {}",
                    e.at_ms,
                    e.reason,
                    e.certainty.unwrap(),
                    e.writers,
                    e.message
                )
            })
            .collect();
        assert_eq!(
            lines,
            vec![
                "30000 RevisionsPruned gap [] revisions 1–2 are gone (revisionHistoryLimit): what they ran and when is not known",
                "30000 Revision inferred [] revision 3 (ReplicaSet checkout-a): shop:2",
                "60000 Revision inferred [\"ci-bot\"] revision 4 (ReplicaSet checkout-b): image shop:2 → shop:3",
            ]
        );
        let last = r
            .extra
            .iter()
            .find(|e| e.reason == "LastWrite" && e.writers == ["ci-bot"])
            .unwrap();
        assert_eq!(last.certainty, Some("last"));
        assert!(
            last.message.contains("earlier writes are not kept"),
            "{}",
            last.message
        );
    }

    #[test]
    fn a_cronjobs_last_schedule_is_a_last_entry() {
        let mut cron = live("CronJob", "nightly", 1_000);
        cron.object.state.last_schedule = Some(60_000);
        let r = reconstruct(&[cron]);
        let e = extra(&r, "LastSchedule");
        assert_eq!((e.at_ms, e.certainty), (60_000, Some("last")));
        assert_eq!(
            e.message,
            "last scheduled a Job at 1970-01-01T00:01:00Z; earlier schedules are not kept"
        );
    }

    #[test]
    fn an_hpas_last_scale_a_nodes_noexecute_taint_and_its_stopped_heartbeat_are_entries() {
        let mut hpa = live("HorizontalPodAutoscaler", "web", 1_000);
        hpa.relation = Some(super::super::Relation::Owner);
        hpa.last_scale = Some((40_000, Some(7)));
        let mut node = live("Node", "n1", 1_000);
        node.relation = Some(super::super::Relation::Node);
        node.object.state.taints = vec![crate::model::Taint {
            key: "node.kubernetes.io/unreachable".into(),
            effect: "NoExecute".into(),
            added: Some(70_000),
            ..Default::default()
        }];
        // state_at 100 s; renewed at 10 s with a 40 s Lease: silent 90 s, over twice 40.
        node.heartbeat = Some((10_000, 40));
        let r = reconstruct(&[hpa, node]);
        let line = |reason: &str| {
            let e = extra(&r, reason);
            (e.at_ms, e.certainty.unwrap(), e.message.clone())
        };
        assert_eq!(
            line("LastScale"),
            (40_000, "last", "last scaled its target at 1970-01-01T00:00:40Z (desired replicas now 7); earlier scales are not kept".to_string())
        );
        assert_eq!(line("Tainted").0, 70_000);
        assert_eq!(line("Tainted").1, "exact");
        let (at, certainty, message) = line("HeartbeatStopped");
        assert_eq!((at, certainty), (10_000, "last"));
        assert!(message.contains("kube-node-lease/n1"), "{message}");
        // A heartbeat within twice its duration is no entry.
        let mut fresh = live("Node", "n2", 1_000);
        fresh.heartbeat = Some((95_000, 40));
        assert!(reconstruct(&[fresh]).extra.is_empty());
    }

    #[test]
    fn a_statefulsets_revisions_are_its_controller_revisions() {
        let mut sts = live("StatefulSet", "db", 1_000);
        sts.relation = Some(super::super::Relation::Target);
        sts.object.state.images = vec!["pg:2".into()];
        let revision = |name: &str, n: i64, at: i64, image: &str| {
            let mut cr = replica_set(name, n, at, image);
            cr.object.object.kind = "ControllerRevision".into();
            cr.object.state.owners[0].kind = "StatefulSet".into();
            cr.object.state.owners[0].uid = "uid-db".into();
            cr
        };
        let objects = vec![
            sts,
            revision("db-7c9f", 1, 1_000, "pg:1"),
            revision("db-5d4b", 2, 50_000, "pg:2"),
        ];
        let r = reconstruct(&objects);
        assert_eq!(r.revisions, vec![1, 2]);
        let last = r.extra.iter().rfind(|e| e.reason == "Revision").unwrap();
        assert_eq!(last.at_ms, 50_000);
        assert_eq!(
            last.message,
            "revision 2 (ControllerRevision db-5d4b): image pg:1 → pg:2"
        );
        // Revisions are the owner's story, not lanes of their own.
        assert!(
            r.subjects
                .iter()
                .all(|s| s.object.object.kind != "ControllerRevision")
        );
    }

    #[test]
    fn a_template_no_replicaset_carries_yet_is_a_change_by_its_writer() {
        let mut d = live("Deployment", "checkout", 1_000);
        d.relation = Some(super::super::Relation::Target);
        d.object.state.images = vec!["shop:2".into()];
        d.object.state.generation = 2;
        d.object.state.observed_generation = Some(1);
        d.managers = vec![manager(
            "ci-bot",
            60_000,
            &["spec.template.spec.containers[app].image"],
        )];
        let objects = vec![d, replica_set("checkout-a", 1, 1_000, "shop:1")];
        let r = reconstruct(&objects);
        let e = extra(&r, "TemplateChanged");
        assert_eq!((e.at_ms, e.certainty), (60_000, Some("last")));
        assert_eq!(e.writers, vec!["ci-bot".to_string()]);
        assert_eq!(
            e.message,
            "image shop:1 → shop:2: no ReplicaSet has this template yet (newest: revision 1, ReplicaSet checkout-a); generation 2 not observed (status of generation 1)"
        );
        // Once a ReplicaSet carries it, it is that revision's story.
        let mut caught_up = objects.clone();
        caught_up[0].object.state.observed_generation = Some(2);
        caught_up.push(replica_set("checkout-b", 2, 60_500, "shop:2"));
        assert!(
            !reconstruct(&caught_up)
                .extra
                .iter()
                .any(|e| e.reason == "TemplateChanged")
        );
    }

    #[test]
    fn conditions_become_exact_transitions_and_restarts_not_seen_a_gap() {
        let mut pod = live("Pod", "checkout-b-x", 10_000);
        pod.object.object.api_version = "v1".into();
        pod.relation = Some(super::super::Relation::Owned);
        let cond = |t: &str, s: &str, at: i64| Condition {
            type_: t.into(),
            status: s.into(),
            last_transition: Some(at),
            ..Condition::default()
        };
        pod.object.state.node_name = "n1".into();
        pod.object.state.conditions = vec![
            cond("PodScheduled", "True", 40_000),
            cond("Ready", "False", 41_000),
        ];
        pod.object.state.containers = vec![crate::model::ContainerState {
            name: "app".into(),
            state: "waiting".into(),
            reason: "CrashLoopBackOff".into(),
            restarts: 6,
            last_reason: "OOMKilled".into(),
            last_exit_code: Some(137),
            ..Default::default()
        }];
        pod.container_times = vec![("app".into(), None, Some(90_000))];
        let r = reconstruct(std::slice::from_ref(&pod));
        let t = super::super::assemble(&r.subjects, &[], &[], &[], 0, 100_000);
        let mut entries = t.entries;
        mark(&mut entries);
        let bound = entries.iter().find(|e| e.reason == "Bound").unwrap();
        assert_eq!((bound.at_ms, bound.certainty), (40_000, Some("exact")));
        let gap = r
            .extra
            .iter()
            .find(|e| e.reason == "RestartsNotVisible")
            .unwrap();
        assert_eq!(gap.at_ms, 90_000);
        assert!(
            gap.message.contains("5 restarts not visible"),
            "{}",
            gap.message
        );
        let last = extra(&r, "Terminated");
        assert_eq!((last.at_ms, last.certainty), (90_000, Some("exact")));
        assert_eq!(
            last.message,
            "container app terminated: OOMKilled, exit code 137"
        );
    }

    #[test]
    fn a_deletion_is_dated_when_it_was_asked_for_not_when_its_grace_ends() {
        let mut pod = live("Pod", "checkout-b-y", 10_000);
        pod.object.object.api_version = "v1".into();
        pod.relation = Some(super::super::Relation::Target);
        pod.object.state.deletion = Some(95_000);
        pod.deletion_grace_s = Some(30);
        let r = reconstruct(std::slice::from_ref(&pod));
        let t = super::super::assemble(&r.subjects, &[], &[], &[], 0, 100_000);
        let mut entries = t.entries;
        mark(&mut entries);
        let asked = entries
            .iter()
            .find(|e| e.reason == "DeletionStarted")
            .unwrap();
        assert_eq!((asked.at_ms, asked.certainty), (65_000, Some("exact")));
        assert_eq!(
            entries
                .iter()
                .filter(|e| e.reason == "DeletionStarted")
                .count(),
            1
        );
    }
}
