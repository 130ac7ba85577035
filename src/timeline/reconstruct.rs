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
//!   change is dated by its ReplicaSet's creation, a rollback's by the
//!   reused ReplicaSet's scale-up from 0; its writer is the manager of
//!   `spec.template` who wrote within 2 s of it; a write through the scale
//!   subresource, which keeps no time, by the controller's scaling Event).
//! - `gap`: what is provably missing, and why (pruned revisions, restarts of
//!   which only the last is visible, Events before the apiserver's hour).
//!
//! docs/timeline.md lists every rule.

use crate::model::{Certainty, ManagerEntry, ObjectState, RecordedObject, Version};

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
    /// Per condition type: its `lastUpdateTime` (a Deployment's), when its
    /// reason and message were last set. Its `lastTransitionTime` dates only
    /// the status: today's message (`ReplicaSet "web-5d8f" has successfully
    /// progressed`) is not what it said then.
    pub condition_updates: Vec<(String, i64)>,
    /// The Events the cluster still holds about it (the target's only): its
    /// controller's `ScalingReplicaSet` date a rollback and a scale that
    /// managedFields keep no time for.
    pub events: Vec<crate::model::EventSummary>,
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
    certainty: Certainty,
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
    e.provenance = crate::model::Provenance::Reconstructed(certainty);
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
    // NB: a condition updated since its transition had another reason and
    // message then: they are dated by the update, not by the transition.
    let updated = |c: &crate::model::Condition| {
        o.condition_updates
            .iter()
            .find(|(t, _)| *t == c.type_)
            .map(|(_, u)| *u)
            .filter(|u| c.last_transition.is_some_and(|lt| *u > lt))
    };
    times.extend(s.conditions.iter().filter_map(updated));
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
    // NB: no `spec.replicas`: today's spec says nothing of the value at
    // creation (regression: "created: replicas 0", exact, for a Deployment
    // created with 3 and scaled to 0 since). The present version has it, `last`.
    let at_creation = ObjectState {
        images: s.images.clone(),
        owners: s.owners.clone(),
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
            .map(|c| {
                let mut c = c.clone();
                if updated(&c).is_some_and(|u| t < u) {
                    c.reason.clear();
                    c.message.clear();
                }
                c
            })
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

/// The revisions of a Deployment from its ReplicaSets, in revision order:
/// each kept revision is a version of the Deployment with that template
/// (images, restart), dated by its ReplicaSet's creation, written by the
/// manager of `spec.template` whose last write is closest to it, within
/// [`WRITE_TOLERANCE_MS`], for the newest revision only (a manager's time is
/// its last write, so an older revision's writer is unknown).
///
/// A rollback reuses an older ReplicaSet (its revision annotation moves up,
/// `revision-history` keeps the old numbers): its creation dates the old
/// revision, never the rollback, which is dated by [`rollback_time`]. No
/// revision is dated before the one below it.
fn revisions(
    target: &LiveObject,
    sets: &[&LiveObject],
    pods: &[&LiveObject],
    r: &mut Reconstruction,
) {
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
            Certainty::Gap,
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
    // (ReplicaSet, the date of its revision)
    let mut previous: Option<(&LiveObject, i64)> = None;
    let newest = kept.last().map(|rs| rs.object.object.uid.clone());
    for rs in kept {
        let created = rs.object.created.unwrap_or(o.state_at);
        let is_newest = newest.as_deref() == Some(rs.object.object.uid.as_str());
        // NB: made before the revision below it: an older ReplicaSet (or
        // ControllerRevision) a rollback made current again.
        let reused = !rs.revision_history.is_empty()
            || previous.is_some_and(|(p, _)| p.object.created.is_some_and(|pc| created < pc));
        let after = previous.map(|(_, at)| at);
        let (at, dated, writer) = if reused {
            let (at, how, writer) =
                rollback_time(target, rs, pods, after, &template_writes, is_newest);
            (at, Some(how), writer)
        } else {
            // NB: only the newest revision can be attributed: a manager's time is
            // its last write, so it says nothing of the revisions before that write.
            let writer = template_writes
                .iter()
                .filter_map(|(m, _)| m.time.map(|t| ((t - created).abs(), m)))
                .filter(|(d, _)| *d <= WRITE_TOLERANCE_MS)
                .min_by_key(|(d, _)| *d)
                .map(|(_, m)| m.label())
                .filter(|_| is_newest);
            (created.max(after.unwrap_or(created)), None, writer)
        };
        let what = revision_text(rs, previous.map(|(p, _)| p), reused, dated.as_ref());
        let rule = match &dated {
            Some((_, rule)) => rule.to_string(),
            None => "revision: the ReplicaSet's (or ControllerRevision's) creationTimestamp dates its template".to_string(),
        };
        let mut e = entry(
            at,
            o,
            "Normal",
            "Revision",
            what,
            Certainty::Inferred,
            &rule,
        );
        if let Some(w) = writer {
            e.writers = vec![w];
            if dated.is_none() {
                e.rule = Some(format!(
                    "revision: the ReplicaSet's (or ControllerRevision's) creationTimestamp dates its template; writer (newest revision only): the spec.template manager whose last write is closest to it, within {} s",
                    WRITE_TOLERANCE_MS / 1000
                ));
            }
        }
        r.extra.push(e);
        previous = Some((rs, at));
    }
    if let Some((newest, newest_at)) = previous {
        unacted_template(o, newest, newest_at, &template_writes, r);
    }
}

/// What a revision line says: its number, object and images (or what
/// changed from the revision below), a restart, a rollback, how it was
/// dated, and its change-cause.
fn revision_text(
    rs: &LiveObject,
    previous: Option<&LiveObject>,
    reused: bool,
    dated: Option<&(String, &'static str)>,
) -> String {
    let revision = rs.revision.unwrap_or(0);
    let images = rs.object.state.images.join(", ");
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
    } else if reused {
        what.push_str("; a rollback: this template was an older revision before");
    }
    if let Some((how, _)) = dated {
        what.push_str(&format!("; {how}"));
    }
    if !rs.change_cause.is_empty() {
        what.push_str(&format!("; change-cause: {}", rs.change_cause));
    }
    what
}

/// A template no ReplicaSet carries yet: written, and not acted on (the
/// controller is gone, or the rollout is refused before its first step).
fn unacted_template(
    o: &RecordedObject,
    newest: &LiveObject,
    newest_at: i64,
    template_writes: &[&(ManagerEntry, Vec<String>)],
    r: &mut Reconstruction,
) {
    let state = &o.state;
    let last_write = template_writes
        .iter()
        .filter_map(|(m, _)| m.time.map(|t| (t, m)))
        .max_by_key(|(t, _)| *t);
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
            Certainty::Last,
            "managedFields: the spec.template manager's latest write, after the newest revision's creation",
        );
        e.writers = vec![m.label()];
        r.extra.push(e);
    }
}

/// A `ScalingReplicaSet` Event's message, as the deployment controller
/// writes it: "Scaled up replica set web-5d8f from 0 to 3" (older
/// controllers: "… web-5d8f to 3"). `(up, ReplicaSet, from, to)`.
fn scaling(message: &str) -> Option<(bool, &str, Option<i64>, i64)> {
    let (up, rest) = match (
        message.strip_prefix("Scaled up replica set "),
        message.strip_prefix("Scaled down replica set "),
    ) {
        (Some(rest), _) => (true, rest),
        (_, Some(rest)) => (false, rest),
        _ => return None,
    };
    let words: Vec<&str> = rest.split_whitespace().collect();
    match words.as_slice() {
        [name, "from", from, "to", to] => Some((up, name, from.parse().ok(), to.parse().ok()?)),
        [name, "to", to] => Some((up, name, None, to.parse().ok()?)),
        _ => None,
    }
}

/// The known occurrences of the deployment controller's scalings of `rs`
/// (an Event folds repeats into its first and last time): `(at, up, from, to)`.
fn scalings<'a>(
    events: &'a [crate::model::EventSummary],
    rs: &'a str,
) -> impl Iterator<Item = (i64, bool, Option<i64>, i64)> + 'a {
    events
        .iter()
        .filter(|e| e.reason == "ScalingReplicaSet")
        .filter_map(move |e| {
            let (up, name, from, to) = scaling(&e.message)?;
            (name == rs).then_some((e, up, from, to))
        })
        .flat_map(|(e, up, from, to)| {
            let again = (e.count > 1 || e.last > e.first).then_some(e.last);
            std::iter::once(e.first)
                .chain(again)
                .map(move |at| (at, up, from, to))
        })
}

/// When a rollback made the older ReplicaSet `rs` current again, never its
/// creation (that dates the revision it was first): the deployment
/// controller's scale-up of it from 0 after it was made (its
/// `ScalingReplicaSet` Event), else (newest revision) the last `spec.template`
/// write after the revision before, else its oldest Pod's creation, else
/// not known: after the revision before. `(at, (what, rule), writer)`.
fn rollback_time(
    target: &LiveObject,
    rs: &LiveObject,
    pods: &[&LiveObject],
    after: Option<i64>,
    template_writes: &[&(ManagerEntry, Vec<String>)],
    is_newest: bool,
) -> (i64, (String, &'static str), Option<String>) {
    let created = rs.object.created.unwrap_or(rs.object.state_at);
    let name = &rs.object.object.name;
    // Later than its own first scale-up, and than the revision before it.
    let since = after.unwrap_or(i64::MIN).max(created + WRITE_TOLERANCE_MS);
    let before = match after {
        Some(at) => format!(
            "after the revision before it ({})",
            crate::units::rfc3339(at)
        ),
        None => format!(
            "after {} {name} was made ({})",
            rs.object.object.kind,
            crate::units::rfc3339(created)
        ),
    };
    // The write that asked for it: the template's last write after the
    // revision before (a manager's time is its last write: newest only).
    let write = |until: i64| {
        template_writes
            .iter()
            .filter_map(|(m, _)| m.time.map(|t| (t, m)))
            .filter(|(t, _)| {
                *t > after.unwrap_or(created) && *t <= until.saturating_add(WRITE_TOLERANCE_MS)
            })
            .max_by_key(|(t, _)| *t)
            .filter(|_| is_newest)
    };
    let scaled_up = scalings(&target.events, name)
        .filter(|(at, up, from, _)| *up && *from == Some(0) && *at >= since)
        .map(|(at, ..)| at)
        .min();
    if let Some(at) = scaled_up {
        return (
            at,
            (
                format!(
                    "dated by the deployment controller scaling it up from 0 at {} (Event ScalingReplicaSet), not by its creation ({})",
                    crate::units::rfc3339(at),
                    crate::units::rfc3339(created)
                ),
                "revision (a rollback): the reused ReplicaSet's scale-up from 0 after its creation (the deployment controller's ScalingReplicaSet Event); writer (newest revision only): the spec.template manager whose last write is between the revision before and it",
            ),
            write(at).map(|(_, m)| m.label()),
        );
    }
    if let Some((at, m)) = write(i64::MAX) {
        return (
            at,
            (
                format!(
                    "dated by the last spec.template write (by {} at {}), {before}; its creation ({}) dates an older revision",
                    m.label(),
                    crate::units::rfc3339(at),
                    crate::units::rfc3339(created)
                ),
                "revision (a rollback): the spec.template manager's last write after the revision before it (newest revision only; no scale-up Event is left)",
            ),
            Some(m.label()),
        );
    }
    let oldest_pod = pods
        .iter()
        .filter(|p| {
            p.object
                .state
                .owners
                .iter()
                .any(|w| w.uid == rs.object.object.uid)
        })
        .filter_map(|p| p.object.created)
        .filter(|at| *at >= since)
        .min();
    if let Some(at) = oldest_pod {
        return (
            at,
            (
                format!(
                    "at or before {}, when its oldest Pod was made, and {before}; no scale-up Event is left",
                    crate::units::rfc3339(at)
                ),
                "revision (a rollback): its oldest Pod's creationTimestamp (no scale-up Event is left)",
            ),
            None,
        );
    }
    (
        after.unwrap_or(created),
        (
            format!("when is not known: {before}; no scale-up Event is left"),
            "revision (a rollback): no trace of when is left; dated by the revision before it, never by the reused ReplicaSet's creation",
        ),
        None,
    )
}

/// The revision number and the ReplicaSet (or ControllerRevision) a
/// reconstructed `Revision` entry tells of.
pub(crate) fn revision_of(e: &Entry) -> Option<(i64, &str)> {
    if e.reason != "Revision" {
        return None;
    }
    let rest = e.message.strip_prefix("revision ")?;
    let (n, rest) = rest.split_once(" (")?;
    let (_kind, rest) = rest.split_once(' ')?;
    let (name, _) = rest.split_once(')')?;
    Some((n.parse().ok()?, name))
}

/// The kinds with a `scale` subresource.
const SCALABLE: &[&str] = &[
    "Deployment",
    "ReplicaSet",
    "StatefulSet",
    "ReplicationController",
];

/// A write through the `scale` subresource (`kubectl scale`, an autoscaler,
/// a bot): who, from its managedFields entry (subresource `scale`), and when:
/// that entry's time, else (the apiserver stamps none on it) the deployment
/// controller's last scaling of the current ReplicaSet to that number (its
/// Event), else not kept (`ScaleUndated`, a gap, never a time it was not
/// done at). A scale to 0 leaves no managedFields entry at all (the Scale
/// omits `replicas: 0`): `spec.replicas` 0 that no manager owns was written
/// there, by someone unknown.
fn scale_write(target: &LiveObject, current: Option<&LiveObject>, r: &mut Reconstruction) {
    let o = &target.object;
    if !SCALABLE.contains(&o.object.kind.as_str()) {
        return;
    }
    let Some(&want) = o.state.replicas.get("spec.replicas") else {
        return;
    };
    let owns = |paths: &Vec<String>| paths.iter().any(|p| p == "spec.replicas");
    let scaler = target
        .managers
        .iter()
        .find(|(m, paths)| m.subresource == "scale" && owns(paths))
        .map(|(m, _)| m);
    let unowned = !target.managers.iter().any(|(_, paths)| owns(paths))
        && target
            .managers
            .iter()
            .any(|(m, _)| m.subresource.is_empty());
    if scaler.is_none() && !(unowned && want == 0) {
        return;
    }
    let who = match scaler {
        Some(m) => format!(
            "scaled to {want} by {} via the scale subresource",
            m.manager
        ),
        None => format!(
            "scaled to {want} via the scale subresource, by whom is not kept (no field manager owns spec.replicas: a write of 0 there leaves none)"
        ),
    };
    let reaction = current.and_then(|rs| {
        scalings(&target.events, &rs.object.object.name)
            .filter(|(_, _, _, to)| *to == want)
            .max_by_key(|(at, ..)| *at)
            .map(|(at, up, from, _)| (at, up, from, &rs.object.object.name))
    });
    // NB: a scale whose time is not kept is no `LastScale` at the moment it
    // was read (`changes --since` would list it as just done): `ScaleUndated`.
    let (at, reason, certainty, when, rule) = match (scaler.and_then(|m| m.time), reaction) {
        (Some(at), _) => (
            at,
            "LastScale",
            Certainty::Last,
            format!(", last write at {}", crate::units::rfc3339(at)),
            "managedFields: the scale subresource's manager and its latest write",
        ),
        (None, Some((at, up, from, rs))) => (
            at,
            "LastScale",
            Certainty::Inferred,
            format!(
                "; {}the deployment controller scaled ReplicaSet {rs} {}{} to {want} at {} (Event ScalingReplicaSet)",
                if scaler.is_some() {
                    "the apiserver keeps no time for it: "
                } else {
                    ""
                },
                if up { "up" } else { "down" },
                from.map(|f| format!(" from {f}")).unwrap_or_default(),
                crate::units::rfc3339(at)
            ),
            "managedFields: the scale subresource's manager (no time kept); dated by the deployment controller's last scaling of the current ReplicaSet to that number",
        ),
        (None, None) => (
            o.state_at,
            "ScaleUndated",
            Certainty::Gap,
            "; when is not kept (the apiserver stamps no time on it and no Event is left)"
                .to_string(),
            "managedFields: the scale subresource's manager; no time kept: shown when it was read",
        ),
    };
    let mut e = entry(
        at,
        o,
        "Normal",
        reason,
        format!("{who}{when}; earlier scales are not kept"),
        certainty,
        rule,
    );
    e.writers = scaler.map(|m| vec![m.label()]).unwrap_or_default();
    r.extra.push(e);
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
        last_writes(o, &mut r.extra);
        kept_last(o, &mut r.extra);
        node_facts(o, &mut r.extra);
        terminations(o, &mut r.extra);
    }
    revisions_and_scale(objects, &mut r);
    r
}

/// Who wrote what: only each manager's last write survives.
fn last_writes(o: &LiveObject, extra: &mut Vec<Entry>) {
    // Of the target and its owners only (a controller writes what it owns all
    // day), and not to status.
    // NB: and of a ConfigMap or Secret the chain uses, and a Service or
    // budget that selects its Pods: people edit those.
    let people = matches!(
        o.relation,
        Some(
            super::Relation::Target
                | super::Relation::Owner
                | super::Relation::Uses
                | super::Relation::Selects
        )
    );
    for (m, paths) in o.managers.iter().filter(|_| people) {
        let Some(at) = m.time else { continue };
        // NB: a write through the scale subresource is a `LastScale` ([`scale_write`]).
        if m.subresource == "status" || m.subresource == "scale" {
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
            Certainty::Last,
            "managedFields: each manager's time is its latest write",
        );
        e.writers = vec![m.label()];
        extra.push(e);
    }
}

/// What an HPA and a CronJob keep of their last act.
fn kept_last(o: &LiveObject, extra: &mut Vec<Entry>) {
    // An HPA keeps only its last scale.
    if let Some((at, desired)) = o.last_scale {
        let to = desired
            .map(|d| format!(" (desired replicas now {d})"))
            .unwrap_or_default();
        extra.push(entry(
            at,
            &o.object,
            "Normal",
            "LastScale",
            format!(
                "last scaled its target at {}{to}; earlier scales are not kept",
                crate::units::rfc3339(at)
            ),
            Certainty::Last,
            "status.lastScaleTime",
        ));
    }
    // A CronJob keeps only its last schedule (its Jobs tell the kept runs).
    if let Some(at) = o.object.state.last_schedule {
        extra.push(entry(
            at,
            &o.object,
            "Normal",
            "LastSchedule",
            format!(
                "last scheduled a Job at {}; earlier schedules are not kept",
                crate::units::rfc3339(at)
            ),
            Certainty::Last,
            "status.lastScheduleTime",
        ));
    }
}

/// A Node's taints and a heartbeat that stopped.
fn node_facts(o: &LiveObject, extra: &mut Vec<Entry>) {
    // A Node: when its NoExecute taints came (the apiserver stamps
    // timeAdded), and a heartbeat that stopped.
    for t in o.object.state.taints.iter() {
        let Some(at) = t.added else { continue };
        let value = if t.value.is_empty() {
            String::new()
        } else {
            format!("={}", t.value)
        };
        extra.push(entry(
            at,
            &o.object,
            "Warning",
            "Tainted",
            format!(
                "taint {}{value}:{} added: Pods that do not tolerate it are evicted",
                t.key, t.effect
            ),
            Certainty::Exact,
            "the taint's timeAdded",
        ));
    }
    if let Some((renewed, duration_s)) = o.heartbeat
        && o.object.state_at - renewed
            > (2 * duration_s.max(1) * 1000).max(crate::checks::leases::MIN_STALE_MS)
    {
        extra.push(entry(
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
            Certainty::Last,
            "the Node Lease's renewTime",
        ));
    }
}

/// A container's last termination, and the restarts before it no one kept.
fn terminations(o: &LiveObject, extra: &mut Vec<Entry>) {
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
        extra.push(entry(
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
            Certainty::Exact,
            "lastState.terminated.finishedAt",
        ));
    }
    // Restarts: only the last termination is visible.
    for c in &o.object.state.containers {
        if c.restarts > 1 {
            extra.push(entry(
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
                Certainty::Gap,
                "lastState: the kubelet keeps one termination",
            ));
        }
    }
}

/// The target's revisions, and its last write through the scale subresource.
fn revisions_and_scale(objects: &[LiveObject], r: &mut Reconstruction) {
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
        let pods: Vec<&LiveObject> = objects
            .iter()
            .filter(|o| o.object.object.kind == "Pod")
            .collect();
        revisions(target, &sets, &pods, r);
    }
    if let Some(target) = objects
        .iter()
        .find(|o| o.relation == Some(super::Relation::Target))
    {
        // The Deployment's current ReplicaSet: its highest revision.
        let current = objects
            .iter()
            .filter(|o| {
                o.object.object.kind == "ReplicaSet"
                    && o.object
                        .state
                        .owners
                        .iter()
                        .any(|w| w.uid == target.object.object.uid)
            })
            .filter(|o| o.revision.is_some())
            .max_by_key(|o| o.revision);
        scale_write(target, current, r);
    }
}

/// Marks the entries a recording-free assembly derived: Events and
/// creations and condition transitions are `exact`; what the present state
/// alone says (a container's state, counters) is `last`.
pub fn mark(entries: &mut [Entry]) {
    for e in entries.iter_mut().filter(|e| e.certainty.is_none()) {
        let (certainty, rule) = match (e.entry, e.reason.as_str()) {
            (EntryKind::Event, _) => (
                Certainty::Exact,
                "Event: its first and last time, and its count",
            ),
            (_, "Created") => (Certainty::Exact, "creationTimestamp"),
            (_, "Condition") => (Certainty::Exact, "the condition's lastTransitionTime"),
            (_, "Bound") => (Certainty::Exact, "PodScheduled's lastTransitionTime"),
            (_, "DeletionStarted") => {
                (Certainty::Exact, "deletionTimestamp minus the grace period")
            }
            _ => (
                Certainty::Last,
                "the present state: when it began is not kept",
            ),
        };
        e.certainty = Some(certainty);
        e.provenance = crate::model::Provenance::Reconstructed(certainty);
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

    fn scaling_event(
        message: &str,
        first: i64,
        last: i64,
        count: i64,
    ) -> crate::model::EventSummary {
        crate::model::EventSummary {
            involved: ObjectRef {
                api_version: "apps/v1".into(),
                kind: "Deployment".into(),
                namespace: "shop".into(),
                name: "checkout".into(),
                uid: "uid-checkout".into(),
                field_path: String::new(),
            },
            type_: "Normal".into(),
            reason: "ScalingReplicaSet".into(),
            message: message.into(),
            count,
            in_window: count,
            first,
            last,
            reporting: "deployment-controller".into(),
            host: String::new(),
        }
    }

    /// The Deployment `checkout` with today's `spec.replicas`.
    fn deployment(replicas: i64) -> LiveObject {
        let mut d = live("Deployment", "checkout", 1_000);
        d.relation = Some(super::super::Relation::Target);
        d.object
            .state
            .replicas
            .insert("spec.replicas".into(), replicas);
        d.object.state.replicas.insert("readyReplicas".into(), 0);
        d
    }

    /// Its entries as `timeline` shows them with no recording: assembled,
    /// with the reconstruction's own, each marked.
    fn story(objects: &[LiveObject]) -> Vec<Entry> {
        let r = reconstruct(objects);
        let t = super::super::assemble(&r.subjects, &[], &[], &[], 0, 100_000);
        let mut entries = t.entries;
        entries.extend(r.extra);
        super::super::sort_entries(&mut entries, &t.objects);
        mark(&mut entries);
        entries
    }

    #[test]
    fn a_creation_value_read_from_todays_spec_is_not_exact() {
        // Created with 3 replicas at 1 s, scaled to 0 since: today's spec says 0.
        let mut d = deployment(0);
        d.managers = vec![manager(
            "kubectl-client-side-apply",
            1_000,
            &["spec.selector", "spec.template.spec.containers[web].image"],
        )];
        let mut rs = replica_set("checkout-a", 1, 1_000, "shop:1");
        rs.object.state.replicas.insert("spec.replicas".into(), 0);
        let entries = story(&[d, rs]);
        for e in &entries {
            assert!(
                !(e.certainty == Some(Certainty::Exact) && e.message.contains("replicas")),
                "today's replicas stated as exact: {} {} {}",
                e.object.name,
                e.reason,
                e.message
            );
        }
        let created = entries
            .iter()
            .find(|e| e.reason == "Created" && e.object.kind == "Deployment")
            .unwrap();
        assert_eq!(
            (created.at_ms, created.certainty, created.message.as_str()),
            (1_000, Some(Certainty::Exact), "created")
        );
        // Today's value is still told, as today's.
        let now = entries
            .iter()
            .find(|e| e.reason == "Replicas" && e.object.kind == "Deployment")
            .unwrap();
        assert_eq!(now.certainty, Some(Certainty::Last));
        assert!(now.message.ends_with("of 0"), "{}", now.message);
    }

    #[test]
    fn a_scale_through_the_scale_subresource_names_its_manager_and_when() {
        let scaler = |time: Option<i64>| {
            let mut m = manager("cost-bot", 0, &["spec.replicas"]);
            m.0.subresource = "scale".into();
            m.0.time = time;
            m
        };
        let rs = replica_set("checkout-a", 1, 1_000, "shop:1");
        // The manager's time, when the apiserver kept one: its last write.
        let mut d = deployment(0);
        d.managers = vec![scaler(Some(50_000))];
        let r = reconstruct(&[d.clone(), rs.clone()]);
        let e = extra(&r, "LastScale");
        assert_eq!((e.at_ms, e.certainty), (50_000, Some(Certainty::Last)));
        assert_eq!(e.writers, ["cost-bot/scale"]);
        assert_eq!(
            e.message,
            "scaled to 0 by cost-bot via the scale subresource, last write at 1970-01-01T00:00:50Z; earlier scales are not kept"
        );
        // It is no `LastWrite` of its own.
        assert!(!r.extra.iter().any(|e| e.reason == "LastWrite"));
        // No time on it (the apiserver stamps none) and no Event left: who,
        // and that when is not kept; never the moment it was read as its time.
        d.managers = vec![scaler(None)];
        let r = reconstruct(&[d.clone(), rs.clone()]);
        assert!(!r.extra.iter().any(|e| e.reason == "LastScale"));
        let e = extra(&r, "ScaleUndated");
        assert_eq!(
            (e.certainty, e.writers.as_slice()),
            (Some(Certainty::Gap), &["cost-bot/scale".to_string()][..])
        );
        assert_eq!(
            e.message,
            "scaled to 0 by cost-bot via the scale subresource; when is not kept (the apiserver stamps no time on it and no Event is left); earlier scales are not kept"
        );
        // The controller's scale-down dates it.
        d.events = vec![
            scaling_event(
                "Scaled up replica set checkout-a from 0 to 3",
                1_000,
                1_000,
                1,
            ),
            scaling_event(
                "Scaled down replica set checkout-a from 3 to 0",
                60_000,
                60_000,
                1,
            ),
        ];
        let r = reconstruct(&[d.clone(), rs.clone()]);
        let e = extra(&r, "LastScale");
        assert_eq!((e.at_ms, e.certainty), (60_000, Some(Certainty::Inferred)));
        assert_eq!(
            e.message,
            "scaled to 0 by cost-bot via the scale subresource; the apiserver keeps no time for it: the deployment controller scaled ReplicaSet checkout-a down from 3 to 0 at 1970-01-01T00:01:00Z (Event ScalingReplicaSet); earlier scales are not kept"
        );
        // A scale to 0 leaves no manager at all: said so, never a guess of who.
        d.managers = vec![manager(
            "kubectl-client-side-apply",
            1_000,
            &["spec.selector", "spec.template.spec.containers[web].image"],
        )];
        let r = reconstruct(&[d, rs]);
        let e = extra(&r, "LastScale");
        assert_eq!((e.at_ms, e.certainty), (60_000, Some(Certainty::Inferred)));
        assert!(e.writers.is_empty());
        assert_eq!(
            e.message,
            "scaled to 0 via the scale subresource, by whom is not kept (no field manager owns spec.replicas: a write of 0 there leaves none); the deployment controller scaled ReplicaSet checkout-a down from 3 to 0 at 1970-01-01T00:01:00Z (Event ScalingReplicaSet); earlier scales are not kept"
        );
    }

    #[test]
    fn replicas_a_manager_owns_are_no_scale_through_the_subresource() {
        let mut d = deployment(0);
        d.managers = vec![manager("bob", 40_000, &["spec.replicas"])];
        let r = reconstruct(&[d]);
        assert!(
            !r.extra.iter().any(|e| e.reason == "LastScale"),
            "{:?}",
            r.extra
        );
    }

    /// Two `set image` and a `rollout undo`: revision 4 is the ReplicaSet of
    /// revision 2, made at 10 s and scaled up from 0 again at 70 s.
    fn undone() -> Vec<LiveObject> {
        let mut d = deployment(1);
        d.managers = vec![
            manager("kubectl-client-side-apply", 1_000, &["spec.selector"]),
            manager(
                "kubectl",
                69_600,
                &["spec.template.spec.containers[web].image"],
            ),
        ];
        let mut reused = replica_set("checkout-b", 4, 10_000, "shop:2");
        reused.revision_history = vec![2];
        vec![
            d,
            replica_set("checkout-a", 1, 1_000, "shop:1"),
            reused,
            replica_set("checkout-c", 3, 40_000, "shop:3"),
        ]
    }

    fn revision_lines(r: &Reconstruction) -> Vec<String> {
        let mut revisions: Vec<&Entry> =
            r.extra.iter().filter(|e| e.reason == "Revision").collect();
        revisions.sort_by_key(|e| e.at_ms);
        revisions
            .iter()
            .map(|e| format!("{} {:?} {}", e.at_ms, e.writers, e.message))
            .collect()
    }

    #[test]
    fn a_rollback_is_dated_by_its_scale_up_not_the_reused_replicasets_creation() {
        let mut objects = undone();
        objects[0].events = vec![
            scaling_event(
                "Scaled up replica set checkout-a from 0 to 1",
                1_000,
                1_000,
                1,
            ),
            // Made at 10 s, scaled up again by the undo at 70 s: one Event, twice.
            scaling_event(
                "Scaled up replica set checkout-b from 0 to 1",
                10_000,
                70_000,
                2,
            ),
            scaling_event(
                "Scaled up replica set checkout-c from 0 to 1",
                40_000,
                40_000,
                1,
            ),
        ];
        let r = reconstruct(&objects);
        let lines = revision_lines(&r);
        assert_eq!(lines.len(), 3, "{lines:#?}");
        assert!(
            lines[0].starts_with("1000 [] revision 1 (ReplicaSet checkout-a)"),
            "{lines:#?}"
        );
        assert!(
            lines[1].starts_with("40000 [] revision 3 (ReplicaSet checkout-c)"),
            "{lines:#?}"
        );
        assert!(
            lines[2].starts_with(
                "70000 [\"kubectl\"] revision 4 (ReplicaSet checkout-b): image shop:3 → shop:2; a rollback: this template was revision 2 before; dated by the deployment controller scaling it up from 0 at 1970-01-01T00:01:10Z"
            ),
            "{lines:#?}"
        );
        assert!(
            !r.extra
                .iter()
                .any(|e| e.reason == "Revision" && e.at_ms == 10_000)
        );
        // Revision 2 is gone (renumbered): its time is not the rollback's.
        assert_eq!(r.revisions, vec![1, 3, 4]);
    }

    #[test]
    fn a_rollback_with_no_scale_up_left_is_dated_by_its_template_write_else_after_the_revision_before()
     {
        // The Events are gone: the undo's write (kubectl at 69.6 s) dates it.
        let r = reconstruct(&undone());
        let lines = revision_lines(&r);
        assert!(
            lines[2].starts_with("69600 [\"kubectl\"] revision 4 (ReplicaSet checkout-b)"),
            "{lines:#?}"
        );
        // Nor a write after revision 3: after revision 3, when not known; never at 10 s.
        let mut objects = undone();
        objects[0].managers.truncate(1);
        let r = reconstruct(&objects);
        let lines = revision_lines(&r);
        assert!(lines[1].starts_with("40000 [] revision 3 "), "{lines:#?}");
        assert!(
            lines[2].starts_with("40000 [] revision 4 (ReplicaSet checkout-b)")
                && lines[2].contains(
                    "when is not known: after the revision before it (1970-01-01T00:00:40Z)"
                ),
            "{lines:#?}"
        );
        let four = r
            .extra
            .iter()
            .find(|e| e.reason == "Revision" && e.message.starts_with("revision 4"))
            .unwrap();
        assert_eq!(four.certainty, Some(Certainty::Inferred));
        assert_eq!(revision_of(four), Some((4, "checkout-b")));
        // Its Pods made after revision 3 bound it from above.
        let mut pod = live("Pod", "checkout-b-x", 75_000);
        pod.object.state.owners = vec![crate::model::OwnerRef {
            kind: "ReplicaSet".into(),
            name: "checkout-b".into(),
            uid: "uid-checkout-b".into(),
            controller: true,
            ..Default::default()
        }];
        objects.push(pod);
        let lines = revision_lines(&reconstruct(&objects));
        assert!(
            lines[2].starts_with("75000 [] revision 4 (ReplicaSet checkout-b)")
                && lines[2]
                    .contains("at or before 1970-01-01T00:01:15Z, when its oldest Pod was made"),
            "{lines:#?}"
        );
    }

    /// The summary lines of a reconstruction, as `timeline` prints them.
    fn summary_lines(objects: &[LiveObject]) -> Vec<String> {
        let r = reconstruct(objects);
        let mut t = super::super::assemble(&r.subjects, &[], &[], &[], 0, 100_000);
        t.entries.extend(r.extra.iter().cloned());
        super::super::sort_entries(&mut t.entries, &t.objects);
        mark(&mut t.entries);
        let s = super::super::summary::summarize(&r.subjects, &t, 1, Vec::new());
        super::super::summary::lines(&s)
            .into_iter()
            .map(|(label, text)| format!("{label}: {text}"))
            .collect()
    }

    #[test]
    fn a_rollback_with_no_recording_is_told_in_revision_order_and_rolls_out_the_reused_replicaset()
    {
        let mut objects = undone();
        objects[0].events = vec![scaling_event(
            "Scaled up replica set checkout-b from 0 to 1",
            10_000,
            70_000,
            2,
        )];
        for (i, ready) in [(1, 0), (2, 1), (3, 0)] {
            let want = ready;
            objects[i]
                .object
                .state
                .replicas
                .insert("spec.replicas".into(), want);
            objects[i]
                .object
                .state
                .replicas
                .insert("readyReplicas".into(), ready);
        }
        let lines = summary_lines(&objects);
        let changes: Vec<&String> = lines.iter().filter(|l| l.starts_with("Change:")).collect();
        assert_eq!(changes.len(), 3, "{lines:#?}");
        assert!(
            changes[0].contains("revision 1 (ReplicaSet checkout-a)"),
            "{lines:#?}"
        );
        assert!(
            changes[1].contains("revision 3 (ReplicaSet checkout-c)"),
            "{lines:#?}"
        );
        assert!(
            changes[2]
                .starts_with("Change: 1970-01-01 00:01:10 revision 4 (ReplicaSet checkout-b)"),
            "{lines:#?}"
        );
        let rollout = lines.iter().find(|l| l.starts_with("Rollout:")).unwrap();
        assert_eq!(
            rollout,
            "Rollout: ReplicaSet checkout-b (shop:2) ready 1/1 after 30s"
        );
    }

    #[test]
    fn a_deployment_scaled_to_zero_with_no_recording_says_by_whom_and_when() {
        let mut d = deployment(0);
        let mut scaler = manager("cost-bot", 0, &["spec.replicas"]);
        scaler.0.subresource = "scale".into();
        scaler.0.time = None;
        d.managers = vec![
            manager("kubectl-client-side-apply", 1_000, &["spec.selector"]),
            scaler,
        ];
        d.events = vec![scaling_event(
            "Scaled down replica set checkout-a from 3 to 0",
            60_000,
            60_000,
            1,
        )];
        let lines = summary_lines(&[d, replica_set("checkout-a", 1, 1_000, "shop:1")]);
        let stopped = lines.iter().find(|l| l.starts_with("Stopped:")).unwrap();
        assert_eq!(
            stopped,
            "Stopped: scaled to 0 (spec.replicas: 0) by cost-bot via the scale subresource; the apiserver keeps no time for it: the deployment controller scaled ReplicaSet checkout-a down from 3 to 0 at 1970-01-01T00:01:00Z (Event ScalingReplicaSet)"
        );
    }

    #[test]
    fn a_conditions_message_is_dated_by_its_last_update_not_its_transition() {
        // Progressing=True since 1 s; its message names the rollback's
        // ReplicaSet, set at 70 s: not what it said at 1 s.
        let mut d = deployment(1);
        d.object.state.conditions = vec![Condition {
            type_: "Progressing".into(),
            status: "True".into(),
            reason: "NewReplicaSetAvailable".into(),
            message: "ReplicaSet \"checkout-b\" has successfully progressed.".into(),
            last_transition: Some(1_000),
            ..Condition::default()
        }];
        d.condition_updates = vec![("Progressing".into(), 70_000)];
        let lines: Vec<(i64, Certainty, String)> = story(&[d])
            .into_iter()
            .filter(|e| e.reason == "Condition")
            .map(|e| (e.at_ms, e.certainty.unwrap(), e.message))
            .collect();
        assert_eq!(
            lines,
            vec![
                (1_000, Certainty::Exact, "Progressing none → True".to_string()),
                (
                    70_000,
                    Certainty::Exact,
                    "Progressing True → True (NewReplicaSetAvailable): ReplicaSet \"checkout-b\" has successfully progressed.".to_string()
                ),
            ]
        );
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
        assert_eq!(last.certainty, Some(Certainty::Last));
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
        assert_eq!((e.at_ms, e.certainty), (60_000, Some(Certainty::Last)));
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
            (40_000, Certainty::Last, "last scaled its target at 1970-01-01T00:00:40Z (desired replicas now 7); earlier scales are not kept".to_string())
        );
        assert_eq!(line("Tainted").0, 70_000);
        assert_eq!(line("Tainted").1, Certainty::Exact);
        let (at, certainty, message) = line("HeartbeatStopped");
        assert_eq!((at, certainty), (10_000, Certainty::Last));
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
        assert_eq!((e.at_ms, e.certainty), (60_000, Some(Certainty::Last)));
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
        assert_eq!(
            (bound.at_ms, bound.certainty),
            (40_000, Some(Certainty::Exact))
        );
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
        assert_eq!(
            (last.at_ms, last.certainty),
            (90_000, Some(Certainty::Exact))
        );
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
        assert_eq!(
            (asked.at_ms, asked.certainty),
            (65_000, Some(Certainty::Exact))
        );
        assert_eq!(
            entries
                .iter()
                .filter(|e| e.reason == "DeletionStarted")
                .count(),
            1
        );
    }
}
