//! `progress`: "why isn't it ready?" Every object whose desired state is not
//! reached for longer than `--stuck-after`, with the cause the cluster already
//! states one level down.
//!
//! Codes: R001 a workload (Deployment, ReplicaSet, StatefulSet, DaemonSet)
//! with fewer ready (or updated) replicas than it asks for; R002 a Job that
//! failed or runs nothing; R003 any other object (custom resources, HPAs,
//! Nodes) whose Ready-like condition is False or Unknown (or whose
//! Stalled/Degraded-like condition is True).
//!
//! The cause is joined, not guessed: the Warning Events of the object and of
//! everything it owns (its ReplicaSets, their Pods, the Pods' claims; Pods
//! known only from Events are tied to their owner by name), its own and its
//! children's conditions (`ReplicaFailure` quotes the apiserver's refusal
//! even after the Events are gone), and the `scheduling` and `pods` findings
//! of its Pods. Each is read for its meaning ([`causes`]), ranked by how
//! close it is to the cause ([`causes::rank`]: Pods not created before Pods
//! not scheduled before containers that do not start), and quoted; a reason
//! no rule knows is quoted too, so an unknown incident still gets its line.

use std::collections::{HashMap, HashSet};

use serde_json::json;

use super::causes::{self, cut};
use super::{Code, Finding, Options, Severity, Snapshot};
use crate::model::{CONNECTION_STATE, Condition, ObjectState, RecordedObject};
use crate::units::human_duration;

/// Condition types whose False or Unknown means "not there yet".
const POSITIVE: &[&str] = &[
    "Ready",
    "Available",
    "Synced",
    "Healthy",
    "Reconciled",
    "Established",
    "Accepted",
    "Programmed",
    "AbleToScale",
    "ScalingActive",
    // A Gateway API route's, per parent Gateway: its backends exist.
    "ResolvedRefs",
    // OLM v1: a ClusterCatalog serves its content; a ClusterExtension is
    // installed. OLM v0: an InstallPlan installed its steps, and resolved
    // (`Installed`/`Resolved` False: `InstallComponentFailed`,
    // `DependenciesConflict`).
    "Serving",
    "Installed",
    "Resolved",
];

/// Condition types whose True means trouble.
const NEGATIVE: &[&str] = &[
    "Stalled",
    "Degraded",
    "Failed",
    "ReplicaFailure",
    // OLM v0's Subscription (operator-framework/api, subscription_types.go):
    // what it cannot resolve, install or unpack.
    "ResolutionFailed",
    "CatalogSourcesUnhealthy",
    "InstallPlanFailed",
    "InstallPlanMissing",
    "BundleUnpackFailed",
];

/// NEGATIVE types a controller sets once it has given up on that attempt:
/// reported at once (issue 47), as a Job's `Failed` is.
const GAVE_UP: &[&str] = &[
    "ResolutionFailed",
    "InstallPlanFailed",
    "BundleUnpackFailed",
];
/// Kinds with replica counters, judged by them (R001), and Jobs (R002).
pub(super) const WORKLOADS: &[&str] = &["Deployment", "ReplicaSet", "StatefulSet", "DaemonSet"];

/// Kinds no R003 is about: the workloads have their own codes, a Pod's
/// trouble is S001/P001's and its owner's, a Namespace's F002's.
const NOT_R003: &[&str] = &[
    "Deployment",
    "ReplicaSet",
    "StatefulSet",
    "DaemonSet",
    "Job",
    "Pod",
    "Namespace",
    "PersistentVolumeClaim",
];

/// Causes listed under a finding besides its headline (table; JSON has all).
pub const MAX_CAUSES: usize = 3;

fn counter(s: &ObjectState, name: &str) -> Option<i64> {
    s.replicas.get(name).copied()
}

fn condition<'a>(s: &'a ObjectState, t: &str) -> Option<&'a Condition> {
    s.conditions.iter().find(|c| c.type_ == t)
}

/// The condition that says an object is not where it should be, if one does.
pub fn bad_condition(s: &ObjectState) -> Option<&Condition> {
    s.conditions.iter().find(|c| {
        (POSITIVE.contains(&c.type_.as_str()) && c.status != "True")
            || (NEGATIVE.contains(&c.type_.as_str()) && c.status == "True")
            // NB: an HPA pinned at its maximum wants more than it may have;
            // at its minimum (`TooFewReplicas`) it is only idle.
            || (c.type_ == "ScalingLimited" && c.status == "True" && c.reason == "TooManyReplicas")
            // NB: IDLE is a channel nobody used lately, not a fault.
            || (c.type_ == CONNECTION_STATE
                && matches!(c.status.as_str(), "CONNECTING" | "TRANSIENT_FAILURE" | "SHUTDOWN"))
    })
}

/// A Node condition that names a problem it has: any type but `Ready` that
/// is True. The kubelet's pressures and `NetworkUnavailable`, and what
/// node-problem-detector and the clouds add (`KernelDeadlock`,
/// `ReadonlyFilesystem`, `FrequentKubeletRestart`, AKS's `KubeletProblem`,
/// `RebootScheduled`…), are all named for the problem and True while it lasts.
pub fn node_problem(s: &ObjectState) -> Option<&Condition> {
    s.conditions
        .iter()
        .find(|c| c.type_ != "Ready" && c.status == "True")
}

/// Whether a CronJob is suspended (`spec.suspend: true`): it creates no Job.
fn suspended_cron(o: &RecordedObject) -> bool {
    o.object.kind == "CronJob" && o.state.halted == "spec.suspend"
}

/// Whether a check may need `o` to explain a stall (see `Relevance`).
pub fn relevant(o: &RecordedObject) -> bool {
    let s = &o.state;
    match o.object.kind.as_str() {
        "ReplicaSet" => {
            counter(s, "readyReplicas").unwrap_or(0) < counter(s, "spec.replicas").unwrap_or(0)
                || condition(s, "ReplicaFailure").is_some_and(|c| c.status == "True")
        }
        "Job" => !finished(s) || condition(s, "Failed").is_some_and(|c| c.status == "True"),
        "CronJob" => suspended_cron(o),
        "Node" => bad_condition(s).is_some() || node_problem(s).is_some(),
        "PersistentVolumeClaim" => s.phase == "Pending",
        "Pod" => {
            matches!(s.phase.as_str(), "Pending" | "Failed")
                || condition(s, "Ready").is_some_and(|c| c.status != "True")
        }
        _ => bad_condition(s).is_some() || failed_phase(o),
    }
}

/// Whether an object R003 is about stands in its own `Failed` phase
/// (issue 47: an OLM ClusterServiceVersion, a backup, a workflow), whatever
/// its conditions say: a phase the controller sets once it has given up.
/// NB: a PersistentVolume's is L006's; Pods, Jobs and claims have codes of
/// their own (`NOT_R003`).
fn failed_phase(o: &RecordedObject) -> bool {
    o.state.phase == "Failed"
        && o.state.deletion.is_none()
        && !NOT_R003.contains(&o.object.kind.as_str())
        && o.object.kind != "PersistentVolume"
}

fn finished(s: &ObjectState) -> bool {
    ["Complete", "Failed", "SuccessCriteriaMet", "FailureTarget"]
        .iter()
        .any(|t| condition(s, t).is_some_and(|c| c.status == "True"))
}

/// An object short of what it asks for.
struct Stall<'a> {
    object: &'a RecordedObject,
    code: Code,
    /// "2 of 5 ready", "failed: BackoffLimitExceeded", "Ready=False".
    what: String,
    wanted: i64,
    ready: i64,
    /// Pods it should have that do not exist at all.
    missing: i64,
    /// Since when, as far as its conditions tell.
    since: Option<i64>,
    /// The condition an R003 is about.
    condition: Option<&'a Condition>,
}

fn earliest(times: impl IntoIterator<Item = Option<i64>>) -> Option<i64> {
    times.into_iter().flatten().min()
}

/// Since when the object's conditions say it has been in trouble.
fn trouble_since(s: &ObjectState) -> Option<i64> {
    earliest(s.conditions.iter().map(|c| {
        let bad = match c.type_.as_str() {
            "Available" | "Ready" => c.status != "True",
            "Progressing" => c.status == "False",
            "ReplicaFailure" | "Failed" | "FailureTarget" => c.status == "True",
            _ => false,
        };
        if bad { c.last_transition } else { None }
    }))
}

fn stall(o: &RecordedObject) -> Option<Stall<'_>> {
    let s = &o.state;
    if s.deletion.is_some() {
        return None;
    }
    let kind = o.object.kind.as_str();
    if WORKLOADS.contains(&kind) {
        let (wanted, ready, current) = if kind == "DaemonSet" {
            (
                counter(s, "desiredNumberScheduled")?,
                counter(s, "numberReady").unwrap_or(0),
                counter(s, "currentNumberScheduled").unwrap_or(0),
            )
        } else {
            (
                counter(s, "spec.replicas").unwrap_or(1),
                counter(s, "readyReplicas").unwrap_or(0),
                counter(s, "replicas").unwrap_or(0),
            )
        };
        let updated = match kind {
            "Deployment" | "StatefulSet" => counter(s, "updatedReplicas").unwrap_or(0),
            "DaemonSet" => counter(s, "updatedNumberScheduled").unwrap_or(0),
            _ => wanted,
        };
        if wanted <= 0 || (ready >= wanted && updated >= wanted) {
            return None;
        }
        let what = if ready >= wanted {
            // The old Pods still serve; the new ones do not come.
            format!("rollout stuck: {updated} of {wanted} updated ({ready} ready)")
        } else if updated < wanted && updated != ready {
            format!("{ready} of {wanted} ready, {updated} updated")
        } else {
            format!("{ready} of {wanted} ready")
        };
        return Some(Stall {
            object: o,
            code: Code::R001,
            what,
            wanted,
            ready,
            missing: (wanted - current).max(0),
            since: trouble_since(s),
            condition: None,
        });
    }
    if kind == "Job" {
        let wanted = counter(s, "spec.completions").unwrap_or(1);
        let done = counter(s, "succeeded").unwrap_or(0);
        if let Some(c) = ["Failed", "FailureTarget"]
            .iter()
            .find_map(|t| condition(s, t).filter(|c| c.status == "True"))
        {
            let failed = counter(s, "failed").unwrap_or(0);
            return Some(Stall {
                object: o,
                code: Code::R002,
                what: format!(
                    "failed ({}): {}; {failed} Pod(s) failed, {done} of {wanted} done",
                    c.reason,
                    cut(&c.message)
                ),
                wanted,
                ready: done,
                missing: 0,
                since: c.last_transition,
                condition: Some(c),
            });
        }
        let active = counter(s, "active").unwrap_or(0);
        if finished(s) || active > 0 || done >= wanted {
            return None;
        }
        return Some(Stall {
            object: o,
            code: Code::R002,
            what: format!("runs no Pod: 0 active, {done} of {wanted} done"),
            wanted,
            ready: done,
            missing: counter(s, "spec.parallelism")
                .unwrap_or(1)
                .min(wanted - done),
            since: o.created,
            condition: None,
        });
    }
    // NB: a suspension someone chose (issue 47: k8sgpt flags it, and a
    // CronJob that has stopped creating Jobs says nothing else).
    if suspended_cron(o) {
        return Some(Stall {
            object: o,
            code: Code::R002,
            what: "creates no Job".to_string(),
            wanted: 0,
            ready: 0,
            missing: 0,
            since: o.generation_since.or(o.created),
            condition: None,
        });
    }
    if NOT_R003.contains(&kind) {
        return None;
    }
    let Some(c) = bad_condition(s).or_else(|| {
        if kind == "Node" {
            node_problem(s)
        } else {
            None
        }
    }) else {
        // NB: its words are `status.reason: status.message` (`phase_reason`).
        return failed_phase(o).then(|| Stall {
            object: o,
            code: Code::R003,
            what: "phase=Failed".to_string(),
            wanted: 0,
            ready: 0,
            missing: 0,
            since: None,
            condition: None,
        });
    };
    Some(Stall {
        object: o,
        code: Code::R003,
        what: format!("{}={}", c.type_, c.status),
        wanted: 0,
        ready: 0,
        missing: 0,
        since: c.last_transition.or(o.created),
        condition: Some(c),
    })
}

/// One piece of what the cluster states about a stall.
#[derive(Debug, Clone)]
struct Evidence {
    rank: u8,
    /// The object that states it, `Kind/name`.
    via: String,
    reason: String,
    text: String,
    count: i64,
    first: i64,
    last: i64,
    /// Whether it says Pods are not created (a refusal).
    refused: bool,
    /// A Pod's own finding (S001, P001), quoted as it is.
    finding: bool,
    /// The other objects that state the same (folded into this one).
    also: Vec<String>,
}

impl Evidence {
    /// Evidence stated once, `(first, last)`, by `via`: no refusal, no
    /// finding, nothing folded in yet.
    fn said(
        rank: u8,
        via: String,
        reason: String,
        text: String,
        (first, last): (i64, i64),
    ) -> Self {
        Evidence {
            rank,
            via,
            reason,
            text,
            count: 1,
            first,
            last,
            refused: false,
            finding: false,
            also: Vec::new(),
        }
    }
}

type Key<'a> = (&'a str, &'a str, &'a str);

fn key(o: &RecordedObject) -> Key<'_> {
    (&o.object.kind, &o.object.namespace, &o.object.name)
}

/// The objects of the snapshot, by uid and by name, and who controls whom.
struct Index<'a> {
    by_uid: HashMap<&'a str, &'a RecordedObject>,
    by_name: HashMap<Key<'a>, &'a RecordedObject>,
    /// Pods by the claims they mount: (namespace, claim).
    claimants: HashMap<(&'a str, &'a str), Vec<&'a RecordedObject>>,
}

impl<'a> Index<'a> {
    fn new(objects: &'a [RecordedObject]) -> Self {
        let mut index = Index {
            by_uid: HashMap::new(),
            by_name: HashMap::new(),
            claimants: HashMap::new(),
        };
        for o in objects {
            if !o.object.uid.is_empty() {
                index.by_uid.insert(&o.object.uid, o);
            }
            index.by_name.insert(key(o), o);
            if o.object.kind == "Pod" {
                for c in &o.state.claims {
                    index
                        .claimants
                        .entry((&o.object.namespace, c))
                        .or_default()
                        .push(o);
                }
            }
        }
        index
    }

    fn controller(&self, o: &RecordedObject) -> Option<&'a RecordedObject> {
        let owner = o.state.owners.iter().find(|r| r.controller)?;
        let ns = o.object.namespace.as_str();
        self.by_uid
            .get(owner.uid.as_str())
            .or_else(|| {
                self.by_name
                    .get(&(owner.kind.as_str(), ns, owner.name.as_str()))
            })
            // NB: a ReplicaSet not in the snapshot (not recorded, or `--kinds`
            // left it out) is `<deployment>-<pod-template-hash>`: its Pods
            // still explain their Deployment.
            .or_else(|| {
                let (deployment, _) = owner.name.rsplit_once('-')?;
                (owner.kind == "ReplicaSet")
                    .then(|| self.by_name.get(&("Deployment", ns, deployment)))
                    .flatten()
            })
            .copied()
    }

    /// `o` and its controllers, nearest first (bounded: owner cycles exist in the wild).
    fn chain(&self, o: &'a RecordedObject) -> Vec<&'a RecordedObject> {
        let mut chain = vec![o];
        while chain.len() < 8 {
            match self.controller(chain[chain.len() - 1]) {
                Some(up) if !chain.iter().any(|c| std::ptr::eq(*c, up)) => chain.push(up),
                _ => break,
            }
        }
        chain
    }

    /// The objects an Event about `kind/ns/name` (uid) explains: the object
    /// and its controllers. A Pod gone from the snapshot (never created,
    /// deleted, or healthy enough to be dropped) is tied to its owner by the
    /// names controllers give Pods: `<owner>-<suffix>`.
    fn explained(&self, kind: &str, ns: &str, name: &str, uid: &str) -> Vec<&'a RecordedObject> {
        if let Some(o) = self
            .by_uid
            .get(uid)
            .or_else(|| self.by_name.get(&(kind, ns, name)))
        {
            let mut chain = self.chain(o);
            if kind == "PersistentVolumeClaim" {
                for pod in self.claimants.get(&(ns, name)).into_iter().flatten() {
                    chain.extend(self.chain(pod));
                }
            }
            return chain;
        }
        if kind == "PersistentVolumeClaim" {
            return self
                .claimants
                .get(&(ns, name))
                .into_iter()
                .flatten()
                .flat_map(|pod| self.chain(pod))
                .collect();
        }
        if kind != "Pod" {
            return Vec::new();
        }
        let owner = name.rsplit_once('-').and_then(|(prefix, _)| {
            ["ReplicaSet", "StatefulSet", "DaemonSet", "Job"]
                .iter()
                .find_map(|k| self.by_name.get(&(*k, ns, prefix)))
        });
        owner.map(|o| self.chain(o)).unwrap_or_default()
    }
}

/// What a Warning Event says, for the first screen.
pub(super) fn event_text(reason: &str, message: &str) -> (String, bool) {
    // NB: any FailedCreate says the Pods are not created, whatever the words
    // (`pods "x" is invalid: …`, an apiserver timeout): the known refusals are
    // read, the rest quoted.
    if reason == "FailedCreate" {
        return match causes::refusal(message) {
            Some(r) => (r.text, true),
            None => (cut(causes::api_error(message)), true),
        };
    }
    (cut(message), false)
}

/// What a StatefulSet's or DaemonSet's update strategy holds back, when its
/// rollout stopped where the strategy stops it.
fn held_back(o: &RecordedObject) -> Option<String> {
    let s = &o.state;
    let kind = o.object.kind.as_str();
    let (wanted, updated) = match kind {
        "StatefulSet" => (
            counter(s, "spec.replicas").unwrap_or(1),
            counter(s, "updatedReplicas").unwrap_or(0),
        ),
        "DaemonSet" => (
            counter(s, "desiredNumberScheduled")?,
            counter(s, "updatedNumberScheduled").unwrap_or(0),
        ),
        _ => return None,
    };
    if updated >= wanted {
        return None;
    }
    if s.update_strategy == "OnDelete" {
        return Some(format!(
            "OnDelete: a Pod takes the new template only when it is deleted ({updated} of {wanted} updated; delete the old Pods to roll)"
        ));
    }
    let p: i64 = s.update_strategy.strip_prefix("partition=")?.parse().ok()?;
    (kind == "StatefulSet" && updated >= wanted - p).then(|| {
        format!(
            "rollingUpdate.partition {p}: ordinals below {p} keep the old revision ({updated} of {wanted} updated)"
        )
    })
}

/// Why a running Pod is not ready, from its Ready condition and its
/// containers: `running, not ready: web (its readiness probe does not pass)`,
/// or the readiness gate the kubelet names. None when it is ready, or when a
/// container waits or ended (P001 and the exit code tell of those).
pub fn unready_text(s: &ObjectState) -> Option<String> {
    let ready = condition(s, "Ready").filter(|c| c.status != "True")?;
    if s.containers.iter().any(|c| !c.init && c.state != "running") {
        return None;
    }
    let unready: Vec<&str> = s
        .containers
        .iter()
        .filter(|c| !c.init && !c.ready)
        .map(|c| c.name.as_str())
        .collect();
    let said = [ready.reason.as_str(), ready.message.as_str()]
        .into_iter()
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(": ");
    Some(if unready.is_empty() {
        // Every container is ready: a readiness gate (or the kubelet's view) holds it.
        format!("running, not ready: Ready=False ({})", cut(&said))
    } else {
        format!(
            "running, not ready: {} (its readiness or startup probe does not pass){}",
            unready.join(", "),
            // NB: the kubelet's own `ContainersNotReady` only lists the names again.
            if said.is_empty() || ready.reason == "ContainersNotReady" {
                String::new()
            } else {
                format!("; Ready=False ({})", cut(&said))
            }
        )
    })
}

/// Whether waiting cannot mend what leads: the apiserver refused the Pods
/// again and again (or the controller keeps a `ReplicaFailure` condition), or
/// the controller that would act is gone. Such a stall is reported at once,
/// not after `--stuck-after`: in its first minutes it is just as stuck.
fn waiting_cannot_mend(lead: Option<&Evidence>) -> bool {
    lead.is_some_and(|e| {
        e.reason == CONTROLLER_DOWN
            || (e.refused && (e.count >= 2 || e.reason.starts_with("ReplicaFailure")))
            // A Pod's own finding of a failure already seen (a crash loop, a
            // failed pull): reported at once, so is what it holds back.
            || (e.finding
                && e.reason == Code::P001.as_str()
                && super::pods::AT_ONCE
                    .iter()
                    .any(|r| e.text.contains(&format!("({r})"))))
    })
}

/// A failure the object itself declares, which waiting cannot mend: a Job
/// past its backoff limit or deadline (`Failed=True`), a Deployment past
/// its own `progressDeadlineSeconds` (`Progressing=False`,
/// `ProgressDeadlineExceeded`). Reported at once (issue 47).
fn declared_failure(st: &Stall) -> bool {
    let s = &st.object.state;
    match st.object.object.kind.as_str() {
        "Job" => st.condition.is_some_and(|c| c.status == "True"),
        "Deployment" => condition(s, "Progressing")
            .is_some_and(|c| c.status == "False" && c.reason == "ProgressDeadlineExceeded"),
        // An object in its own Failed phase (an OLM InstallPlan), a
        // controller that gave up, a registry that cannot be reached.
        _ if st.code == Code::R003 => {
            s.phase == "Failed"
                || st.condition.is_some_and(|c| {
                    (GAVE_UP.contains(&c.type_.as_str()) && c.status == "True")
                        || (c.type_ == CONNECTION_STATE && c.status == "TRANSIENT_FAILURE")
                })
        }
        _ => false,
    }
}

/// The findings, given the `scheduling` and `pods` findings of the same
/// snapshot (a Pod's own explanation is handed over, not redone).
pub fn check(s: &Snapshot, o: &Options, pod_findings: &[Finding]) -> Vec<Finding> {
    let stalls = stalls(s);
    if stalls.is_empty() {
        return Vec::new();
    }
    let index = Index::new(&s.objects);
    let stalled: HashSet<Key> = stalls.iter().map(|st| key(st.object)).collect();
    let mut evidence: HashMap<Key, Vec<Evidence>> = HashMap::new();
    let sources = [
        scheduler_down(s, &index),
        event_evidence(s, &index),
        object_evidence(s, &index),
        pod_finding_evidence(s, &index, pod_findings),
    ];
    for (objects, e) in sources.into_iter().flatten() {
        for o in objects {
            if stalled.contains(&key(o)) {
                evidence.entry(key(o)).or_default().push(e.clone());
            }
        }
    }
    stalls
        .iter()
        // Reported once, at the top: a Deployment's stalled ReplicaSet is its evidence.
        .filter(|st| {
            !index
                .chain(st.object)
                .iter()
                .skip(1)
                .any(|up| stalled.contains(&key(up)))
        })
        .filter_map(|st| {
            let list = fold(evidence.remove(&key(st.object)).unwrap_or_default());
            finding(s, o, st, list)
        })
        .collect()
}

/// The workloads that do not reach what they want; and, while the
/// controller-manager is gone, a change no controller acts on: the status
/// still tells of the generation before, and looks fine.
fn stalls(s: &Snapshot) -> Vec<Stall<'_>> {
    let mut stalls: Vec<Stall> = s.objects.iter().filter_map(stall).collect();
    let manager_down = super::leases::down(s, "kube-controller-manager").is_some();
    stalls.extend(
        s.objects
            .iter()
            .filter(|o| manager_down && WORKLOADS.contains(&o.object.kind.as_str()))
            .filter(|o| o.state.deletion.is_none() && stall(o).is_none())
            .filter_map(|o| {
                let og = o
                    .state
                    .observed_generation
                    .filter(|og| *og < o.state.generation)?;
                Some(Stall {
                    object: o,
                    code: Code::R001,
                    what: format!(
                        "generation {} not acted on (its status tells of generation {og})",
                        o.state.generation
                    ),
                    wanted: counter(&o.state, "spec.replicas").unwrap_or(0),
                    ready: counter(&o.state, "readyReplicas").unwrap_or(0),
                    missing: 0,
                    since: o.generation_since,
                    condition: None,
                })
            }),
    );
    stalls
}

/// Evidence with the objects it explains (each kept only when stalled).
type Stated<'a> = Vec<(Vec<&'a RecordedObject>, Evidence)>;

/// Pods no scheduler places while the scheduler is gone: nothing else says
/// why (the FailedScheduling Event is the scheduler's own).
fn scheduler_down<'a>(s: &'a Snapshot, index: &Index<'a>) -> Stated<'a> {
    let Some(down) = super::leases::down(s, "kube-scheduler") else {
        return Vec::new();
    };
    s.objects
        .iter()
        .filter(|o| {
            o.object.kind == "Pod" && o.state.node_name.is_empty() && o.state.deletion.is_none()
        })
        .map(|pod| {
            let since = down.1.max(pod.created.unwrap_or(down.1));
            (
                index.chain(pod),
                controller_down(down.0.clone(), since, s.at),
            )
        })
        .collect()
}

/// The troubling Events, each given to the objects it explains.
fn event_evidence<'a>(s: &'a Snapshot, index: &Index<'a>) -> Stated<'a> {
    s.events
        .iter()
        .filter(|e| causes::troubling(&e.type_, &e.reason))
        .filter_map(|e| {
            let i = &e.involved;
            let explained = index.explained(&i.kind, &i.namespace, &i.name, &i.uid);
            if explained.is_empty() {
                return None;
            }
            let (text, refused) = event_text(&e.reason, &e.message);
            let evidence = Evidence {
                count: e.count.max(1),
                refused,
                ..Evidence::said(
                    causes::rank(&e.reason),
                    format!("{}/{}", i.kind, i.name),
                    e.reason.clone(),
                    text,
                    (e.first, e.last),
                )
            };
            Some((explained, evidence))
        })
        .collect()
}

/// What the objects' own conditions, specs and container states say.
fn object_evidence<'a>(s: &'a Snapshot, index: &Index<'a>) -> Stated<'a> {
    let nodes: HashSet<&str> = s
        .objects
        .iter()
        .filter(|o| o.object.kind == "Node")
        .map(|o| o.object.name.as_str())
        .collect();
    let no_such_node = |name: &str| {
        (s.all_nodes && !nodes.contains(name))
            || s.absent.iter().any(|r| r.kind == "Node" && r.name == name)
    };
    let mut out = Vec::new();
    for object in &s.objects {
        let chain = || index.chain(object);
        if let Some(e) = replica_failure(object, s.at) {
            out.push((chain(), e));
        }
        if let Some(e) = not_progressing(object, s.at) {
            out.push((vec![object], e));
        }
        // A rollout its own spec holds back: the new template reaches a Pod
        // only when someone deletes it (OnDelete), or never below a partition.
        if let Some(text) = held_back(object) {
            let since = object.generation_since.or(object.created).unwrap_or(s.at);
            let via = format!("{}/{}", object.object.kind, object.object.name);
            let e = Evidence::said(1, via, "UpdateStrategy".into(), text, (since, s.at));
            out.push((vec![object], e));
        }
        if object.object.kind != "Pod" {
            continue;
        }
        let st = &object.state;
        // NB: a Pod bound to a Node the cluster does not have (its spec.nodeName
        // names it, or the Node was deleted) is never run, and no component
        // says so: the scheduler never saw it, the kubelet does not exist, and
        // the pod garbage collector deletes it without an Event, so its
        // controller makes another, for ever. Only said when the Nodes were
        // all read, or the apiserver said this one is not found.
        if !st.node_name.is_empty()
            && st.deletion.is_none()
            && st.phase == "Pending"
            && no_such_node(&st.node_name)
        {
            let text = format!(
                "bound to Node {}, which does not exist (deleted, or named in spec.nodeName): nothing runs it",
                st.node_name
            );
            let since = object.created.unwrap_or(s.at);
            let via = format!("Pod/{}", object.object.name);
            let e = Evidence::said(2, via, "NodeNotFound".into(), text, (since, s.at));
            out.push((chain(), e));
        }
        if let Some(e) = unready(object, s.at) {
            out.push((chain(), e));
        }
        if let Some(e) = terminated(object, s.at) {
            out.push((chain(), e));
        }
    }
    out
}

/// A ReplicaSet's (or the Deployment's copy of its) refusal: outlives the Events.
fn replica_failure(object: &RecordedObject, at: i64) -> Option<Evidence> {
    let c = condition(&object.state, "ReplicaFailure").filter(|c| c.status == "True")?;
    let (text, refused) = event_text("FailedCreate", &c.message);
    let when = c.last_transition.unwrap_or(at);
    Some(Evidence {
        refused,
        ..Evidence::said(
            0,
            format!("{}/{}", object.object.kind, object.object.name),
            format!("ReplicaFailure ({})", c.reason),
            text,
            (when, when),
        )
    })
}

/// A Deployment's Progressing condition when not True. NB: a paused
/// Deployment says so as Progressing=Unknown (DeploymentPaused): no
/// ReplicaSet for a new template comes, and that is the whole cause.
fn not_progressing(object: &RecordedObject, at: i64) -> Option<Evidence> {
    let c = condition(&object.state, "Progressing")
        .filter(|c| c.status != "True" && object.object.kind == "Deployment")?;
    let paused = c.reason == "DeploymentPaused";
    let when = c.last_transition.unwrap_or(at);
    Some(Evidence::said(
        if paused { 1 } else { 5 },
        format!("Deployment/{}", object.object.name),
        c.reason.clone(),
        cut(&c.message),
        (when, when),
    ))
}

/// A Pod that runs but is not ready: its Ready condition says which
/// containers (or which readiness gate); the probe's own words are in its
/// Unhealthy Events while they last, which rank alike and lead by count.
fn unready(object: &RecordedObject, at: i64) -> Option<Evidence> {
    let st = &object.state;
    if st.deletion.is_some() || st.phase != "Running" {
        return None;
    }
    let text = unready_text(st)?;
    let ready = condition(st, "Ready");
    let since = ready
        .and_then(|c| c.last_transition)
        .or(object.created)
        .unwrap_or(at);
    Some(Evidence::said(
        4,
        format!("Pod/{}", object.object.name),
        ready
            .map(|c| c.reason.clone())
            .filter(|r| !r.is_empty())
            .unwrap_or_else(|| "NotReady".to_string()),
        text,
        (since, at),
    ))
}

/// A Pod's container that failed or never got ready, when nothing better is said.
fn terminated(object: &RecordedObject, at: i64) -> Option<Evidence> {
    let containers = &object.state.containers;
    let c = containers
        .iter()
        .find(|c| c.state == "terminated" && (c.exit_code.unwrap_or(0) != 0))
        .or_else(|| containers.iter().find(|c| !c.last_reason.is_empty()))?;
    let (reason, code) = if c.state == "terminated" {
        (c.reason.as_str(), c.exit_code)
    } else {
        (c.last_reason.as_str(), c.last_exit_code)
    };
    let exit = code.map_or(String::new(), |x| format!(", exit code {x}"));
    Some(Evidence::said(
        5,
        format!("Pod/{}", object.object.name),
        reason.to_string(),
        format!("container {} terminated ({reason}{exit})", c.name),
        (at, at),
    ))
}

/// The Pods' own findings (S001, P001…), quoted as they are.
fn pod_finding_evidence<'a>(
    s: &'a Snapshot,
    index: &Index<'a>,
    pod_findings: &[Finding],
) -> Stated<'a> {
    pod_findings
        .iter()
        .filter_map(|f| {
            let pod = index
                .by_uid
                .get(f.object.uid.as_str())
                .copied()
                .or_else(|| {
                    index
                        .by_name
                        .get(&("Pod", f.object.namespace.as_str(), f.object.name.as_str()))
                        .copied()
                })?;
            let evidence = Evidence {
                finding: true,
                ..Evidence::said(
                    if f.code == Code::S001 { 2 } else { 3 },
                    format!("Pod/{}", f.object.name),
                    f.code.to_string(),
                    f.summary.clone(),
                    (f.since_ms.unwrap_or(s.at), s.at),
                )
            };
            Some((index.chain(pod), evidence))
        })
        .collect()
}

/// One stall's finding with its evidence, or None while it may still
/// converge (younger than `--stuck-after`, and nothing says waiting cannot mend it).
fn finding(s: &Snapshot, o: &Options, st: &Stall, mut list: Vec<Evidence>) -> Option<Finding> {
    // The controller that would make it progress is gone: that leads.
    if let Some(down) =
        super::controllers::for_kind(&st.object.object.api_version, &st.object.object.kind)
            .and_then(super::leases::component_of)
            .and_then(|c| super::leases::down(s, c))
    {
        let since = down.1.max(st.object.created.unwrap_or(down.1));
        list.insert(0, controller_down(down.0, since, s.at));
    }
    let since = st
        .since
        .or_else(|| earliest(list.iter().map(|e| Some(e.first))))
        .or(st.object.generation_since)
        .or(st.object.created);
    if !declared_failure(st)
        && !waiting_cannot_mend(list.first())
        && since.is_some_and(|t| s.at - t < o.stuck_after_ms)
    {
        return None;
    }
    let how_long = since
        .map(|t| format!(" for {}", human_duration(s.at - t)))
        .unwrap_or_default();
    // An R003's own condition is its first cause; a Job's failure reason is in `what`.
    if st.code == Code::R003
        && let Some(text) = condition_text(st).filter(|t| !t.is_empty())
    {
        let via = format!("{}/{}", st.object.object.kind, st.object.object.name);
        let first = since.unwrap_or(s.at);
        list.insert(
            0,
            Evidence::said(0, via, st.what.clone(), text, (first, s.at)),
        );
    }
    // A Job held by `spec.suspend` runs nothing on purpose (issue 47: it
    // read "no cause stated"); said as such, as information.
    let suspended_job = st.object.object.kind == "Job"
        && st.condition.is_none()
        && condition(&st.object.state, "Suspended").is_some_and(|c| c.status == "True");
    let suspended = suspended_job || suspended_cron(st.object);
    let cause = if suspended_job {
        "suspended (Suspended=True: spec.suspend is true): it runs nothing until resumed"
            .to_string()
    } else if suspended {
        "suspended (spec.suspend is true): it creates no Job until resumed".to_string()
    } else {
        cause_text(st, &list)
    };
    let summary = format!("{}{how_long} — {cause}", st.what);
    let severity = match st.code {
        _ if suspended => Severity::Info,
        Code::R001 if st.ready == 0 => Severity::Error,
        code => code.severity(),
    };
    let explains: Vec<String> = list
        .iter()
        .flat_map(|e| std::iter::once(&e.via).chain(&e.also))
        .cloned()
        .collect();
    let details = json!({
        "wanted": st.wanted,
        "ready": st.ready,
        "not_created": st.missing,
        "cause": cause,
        "causes": list.iter().map(|e| json!({
            "object": e.via, "reason": e.reason, "count": e.count,
            "message": e.text, "last": crate::units::rfc3339(e.last),
        })).collect::<Vec<_>>(),
        "explains": explains,
    });
    Some(Finding::new(st.code, &st.object.object, summary, since, details).with_severity(severity))
}

/// The words of the condition an R003 is about (its reason and message), or
/// of its phase when no condition states it.
fn condition_text(st: &Stall) -> Option<String> {
    st.condition
        .map(|c| {
            let words = [c.reason.as_str(), c.message.as_str()]
                .into_iter()
                .filter(|w| !w.is_empty())
                .collect::<Vec<_>>()
                .join(": ");
            cut(&words)
        })
        .or_else(|| {
            (st.code == Code::R003 && st.condition.is_none())
                .then(|| cut(&st.object.state.phase_reason))
        })
}

/// The cause a finding's summary states, from its leading evidence.
fn cause_text(st: &Stall, list: &[Evidence]) -> String {
    match list.first() {
        Some(e) if e.reason == CONTROLLER_DOWN => e.text.clone(),
        // An R003's own condition: its words follow `Ready=False` directly,
        // then what the objects it controls state beneath it (an operator's
        // "waiting for StatefulSet db" ← the StatefulSet's refused Pods).
        Some(e) if st.code == Code::R003 && e.reason == st.what => {
            match list.iter().skip(1).find(|d| d.via != e.via) {
                Some(d) => format!("{} ← {}", e.text, beneath(d)),
                None => e.text.clone(),
            }
        }
        Some(e) if e.refused && st.missing > 0 => {
            format!("{} Pod(s) not created: {}", st.missing, e.text)
        }
        Some(e) if e.refused => format!("Pods refused: {}", e.text),
        Some(e) if e.finding && e.also.is_empty() => format!("{}: {}", e.via, e.text),
        Some(e) if e.finding => format!("{} Pods ({}, …): {}", e.also.len() + 1, e.via, e.text),
        Some(e) if !e.also.is_empty() => format!(
            "{} ×{} on {} objects ({}, …): {}",
            e.reason,
            e.count,
            e.also.len() + 1,
            e.via,
            e.text
        ),
        Some(e) if e.count > 1 => format!("{} ×{} on {}: {}", e.reason, e.count, e.via, e.text),
        Some(e) if e.via.ends_with(&format!("/{}", st.object.object.name)) => {
            format!("{}: {}", e.reason, e.text)
        }
        Some(e) => format!("{} on {}: {}", e.reason, e.via, e.text),
        None => "no cause stated: no Warning Event, condition or container state of it or of what it owns says why".to_string(),
    }
}

/// A cause stated by an object below the one a finding is about, with that object.
fn beneath(e: &Evidence) -> String {
    let who = if e.also.is_empty() {
        e.via.clone()
    } else {
        format!("{} objects ({}, …)", e.also.len() + 1, e.via)
    };
    if e.refused {
        format!("{who}: Pods not created: {}", e.text)
    } else if e.finding {
        format!("{who}: {}", e.text)
    } else if e.count > 1 {
        format!("{} ×{} on {who}: {}", e.reason, e.count, e.text)
    } else {
        format!("{} on {who}: {}", e.reason, e.text)
    }
}

/// The same statement from several objects (each Pod's FailedCreate, the
/// Events and the condition that quote one refusal) is one cause, counted.
/// The reason of the evidence that a control-plane component is gone.
const CONTROLLER_DOWN: &str = "ControllerDown";

fn controller_down(text: String, since: i64, at: i64) -> Evidence {
    Evidence::said(
        0,
        "Lease".to_string(),
        CONTROLLER_DOWN.to_string(),
        text,
        (since, at),
    )
}

fn fold(list: Vec<Evidence>) -> Vec<Evidence> {
    let mut out: Vec<Evidence> = Vec::new();
    for e in list {
        match out
            .iter_mut()
            .find(|x| x.rank == e.rank && x.text == e.text)
        {
            Some(x) => {
                if x.via != e.via && !x.also.contains(&e.via) {
                    x.also.push(e.via);
                }
                x.count += e.count;
                x.first = x.first.min(e.first);
                x.last = x.last.max(e.last);
            }
            None => out.push(e),
        }
    }
    // NB: at one rank a Pod's own finding (S001's explained scheduler message,
    // P001's container state with its image) says more than the raw Event.
    let order = |e: &Evidence| {
        (
            e.rank,
            !e.finding,
            std::cmp::Reverse(e.count),
            std::cmp::Reverse(e.last),
        )
    };
    out.sort_by_key(order);
    out
}

/// The objects whose Warnings a progress finding quotes as its cause, as
/// `Kind/name` in its namespace: their Event storms (H003) are not news.
pub fn explained(findings: &[Finding]) -> HashSet<(String, String)> {
    findings
        .iter()
        .filter(|f| f.check == super::Check::Progress)
        .flat_map(|f| {
            let ns = f.object.namespace.clone();
            f.details["explains"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|v| v.as_str())
                .map(move |via| (ns.clone(), via.to_string()))
                .collect::<Vec<_>>()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{condition, object};
    use super::*;
    use crate::model::EventSummary;
    use crate::model::{ObjectRef, OwnerRef};

    const MIN: i64 = 60_000;
    const QUOTA: &str = "Error creating: pods \"search-5d8f6c-x2k4p\" is forbidden: exceeded quota: pods-cap, requested: pods=1, used: pods=2, limited: pods=2";

    fn owned(mut o: RecordedObject, kind: &str, name: &str) -> RecordedObject {
        o.state.owners = vec![OwnerRef {
            kind: kind.into(),
            name: name.into(),
            uid: format!("uid-{name}"),
            controller: true,
            ..OwnerRef::default()
        }];
        o
    }

    fn workload(kind: &str, name: &str, wanted: i64, current: i64, ready: i64) -> RecordedObject {
        let mut o = object(kind, "shop", name);
        o.created = Some(0);
        o.state.replicas.insert("spec.replicas".into(), wanted);
        o.state.replicas.insert("replicas".into(), current);
        o.state.replicas.insert("readyReplicas".into(), ready);
        o.state.replicas.insert("updatedReplicas".into(), current);
        o
    }

    fn warning(kind: &str, name: &str, reason: &str, message: &str, count: i64) -> EventSummary {
        EventSummary {
            involved: ObjectRef {
                kind: kind.into(),
                namespace: "shop".into(),
                name: name.into(),
                uid: format!("uid-{name}"),
                ..ObjectRef::default()
            },
            reason: reason.into(),
            type_: "Warning".into(),
            message: message.into(),
            first: MIN,
            last: 9 * MIN,
            count,
            ..EventSummary::default()
        }
    }

    fn quota_blocked() -> Snapshot {
        Snapshot {
            at: 10 * MIN,
            objects: vec![
                workload("Deployment", "search", 5, 2, 2),
                owned(
                    workload("ReplicaSet", "search-5d8f6c", 5, 2, 2),
                    "Deployment",
                    "search",
                ),
            ],
            events: vec![warning(
                "ReplicaSet",
                "search-5d8f6c",
                "FailedCreate",
                QUOTA,
                7,
            )],
            ..Snapshot::default()
        }
    }

    fn stale_lease(name: &str, renewed: i64) -> RecordedObject {
        let mut l = object("Lease", "kube-system", name);
        l.object.api_version = "coordination.k8s.io/v1".into();
        l.state.lease = Some(crate::model::LeaseSpec {
            holder: format!("{name}-host_1"),
            renewed: Some(renewed),
            duration_s: 15,
        });
        l
    }

    #[test]
    fn a_change_nothing_acts_on_while_the_controller_manager_is_gone_names_it() {
        // Fully ready, of the generation before: the status alone looks fine.
        let mut d = workload("Deployment", "checkout", 2, 2, 2);
        d.state.generation = 3;
        d.state.observed_generation = Some(2);
        d.generation_since = Some(8 * MIN);
        let snap = Snapshot {
            at: 10 * MIN,
            objects: vec![d, stale_lease("kube-controller-manager", 7 * MIN)],
            ..Snapshot::default()
        };
        let now = Options {
            stuck_after_ms: 0,
            ..Options::default()
        };
        let found = check(&snap, &now, &[]);
        assert_eq!(found.len(), 1, "{found:#?}");
        assert_eq!(found[0].code, Code::R001);
        assert!(
            found[0].summary.starts_with(
                "generation 3 not acted on (its status tells of generation 2) for 2m — kube-controller-manager has not renewed its Lease kube-system/kube-controller-manager since"
            ),
            "{}",
            found[0].summary
        );
        // With the controller-manager renewing, the same object is no stall.
        let mut fine = snap.clone();
        fine.objects[1].state.lease.as_mut().unwrap().renewed = Some(10 * MIN - 2_000);
        assert!(check(&fine, &now, &[]).is_empty());
    }

    #[test]
    fn pods_not_placed_while_the_scheduler_is_gone_name_it_as_the_cause() {
        let mut pod = owned(
            object("Pod", "shop", "search-5d8f6c-abcde"),
            "ReplicaSet",
            "search-5d8f6c",
        );
        pod.state.phase = "Pending".into();
        pod.created = Some(MIN);
        let snap = Snapshot {
            at: 10 * MIN,
            objects: vec![
                workload("Deployment", "search", 1, 0, 1),
                owned(
                    workload("ReplicaSet", "search-5d8f6c", 1, 0, 1),
                    "Deployment",
                    "search",
                ),
                pod,
                stale_lease("kube-scheduler", 30_000),
            ],
            ..Snapshot::default()
        };
        let found = check(&snap, &Options::default(), &[]);
        assert_eq!(found.len(), 1, "{found:#?}");
        assert!(
            found[0]
                .summary
                .contains("— kube-scheduler has not renewed its Lease kube-system/kube-scheduler"),
            "{}",
            found[0].summary
        );
    }

    #[test]
    fn a_paused_deployment_names_the_pause_as_why_its_rollout_stands_still() {
        let mut d = workload("Deployment", "web", 2, 2, 2);
        d.state.replicas.insert("updatedReplicas".into(), 0);
        let mut c = condition(
            "Progressing",
            "Unknown",
            "DeploymentPaused",
            "Deployment is paused",
        );
        c.last_transition = Some(2 * MIN);
        d.state.conditions.push(c);
        let s = Snapshot {
            at: 10 * MIN,
            objects: vec![
                d,
                owned(
                    workload("ReplicaSet", "web-1", 2, 2, 2),
                    "Deployment",
                    "web",
                ),
            ],
            ..Snapshot::default()
        };
        let found = check(&s, &Options::default(), &[]);
        assert_eq!(found.len(), 1, "{found:#?}");
        assert_eq!(found[0].code, Code::R001);
        assert!(
            found[0].summary.contains("rollout stuck: 0 of 2 updated")
                && found[0].summary.contains("Deployment is paused"),
            "{}",
            found[0].summary
        );
    }

    #[test]
    fn a_quota_blocking_a_scale_up_is_one_line_naming_the_quota() {
        let found = check(&quota_blocked(), &Options::default(), &[]);
        assert_eq!(found.len(), 1, "{found:#?}");
        let f = &found[0];
        assert_eq!((f.code, f.object.name.as_str()), (Code::R001, "search"));
        assert_eq!(f.severity, Severity::Warning);
        assert_eq!(
            f.summary,
            "2 of 5 ready for 9m — 3 Pod(s) not created: exceeded quota pods-cap (pods: used 2, hard 2, requested 1)"
        );
        assert_eq!(f.details["explains"][0], "ReplicaSet/search-5d8f6c");
    }

    #[test]
    fn the_refusal_survives_its_events_in_the_replicaset_condition() {
        let mut snap = quota_blocked();
        snap.events.clear();
        let rs = &mut snap.objects[1];
        let mut c = condition(
            "ReplicaFailure",
            "True",
            "FailedCreate",
            &QUOTA["Error creating: ".len()..],
        );
        c.last_transition = Some(2 * MIN);
        rs.state.conditions.push(c);
        let found = check(&snap, &Options::default(), &[]);
        assert!(
            found[0].summary.ends_with(
                "3 Pod(s) not created: exceeded quota pods-cap (pods: used 2, hard 2, requested 1)"
            ),
            "{}",
            found[0].summary
        );
    }

    #[test]
    fn pods_known_only_from_events_are_tied_to_their_owner_by_name() {
        let mut snap = quota_blocked();
        snap.events = vec![warning(
            "Pod",
            "search-5d8f6c-abcde",
            "FailedMount",
            "MountVolume.SetUp failed for volume \"config\" : configmap \"search-config\" not found",
            4,
        )];
        snap.objects[1].state.replicas.insert("replicas".into(), 5);
        snap.objects[0].state.replicas.insert("replicas".into(), 5);
        let found = check(&snap, &Options::default(), &[]);
        assert_eq!(
            found[0].summary,
            "2 of 5 ready for 9m — FailedMount ×4 on Pod/search-5d8f6c-abcde: MountVolume.SetUp failed for volume \"config\" : configmap \"search-config\" not found"
        );
    }

    #[test]
    fn an_unknown_warning_still_gets_a_line_quoting_it() {
        let mut snap = quota_blocked();
        snap.events = vec![warning(
            "ReplicaSet",
            "search-5d8f6c",
            "SomethingNew",
            "the new controller says no",
            3,
        )];
        let found = check(&snap, &Options::default(), &[]);
        assert!(
            found[0].summary.ends_with(
                "SomethingNew ×3 on ReplicaSet/search-5d8f6c: the new controller says no"
            ),
            "{}",
            found[0].summary
        );
        snap.events.clear();
        let found = check(&snap, &Options::default(), &[]);
        assert!(
            found[0].summary.contains("no cause stated"),
            "{}",
            found[0].summary
        );
    }

    #[test]
    fn a_stall_younger_than_stuck_after_is_not_reported() {
        // Pods that start but are not ready yet: waiting may well mend it.
        let mut snap = quota_blocked();
        snap.at = 3 * MIN;
        snap.objects[0].created = Some(2 * MIN);
        snap.objects[1].created = Some(2 * MIN);
        snap.events = vec![warning(
            "Pod",
            "search-5d8f6c-abcde",
            "Unhealthy",
            "Readiness probe failed: HTTP probe failed with statuscode: 503",
            4,
        )];
        for e in &mut snap.events {
            e.first = 2 * MIN;
        }
        assert!(check(&snap, &Options::default(), &[]).is_empty());
    }

    #[test]
    fn pods_that_run_but_are_not_ready_say_which_container_or_gate() {
        let mut snap = quota_blocked();
        snap.events.clear();
        let mut pod = owned(
            object("Pod", "shop", "search-5d8f6c-abcde"),
            "ReplicaSet",
            "search-5d8f6c",
        );
        pod.created = Some(MIN);
        pod.state.phase = "Running".into();
        pod.state.node_name = "n1".into();
        pod.state.conditions = vec![condition(
            "Ready",
            "False",
            "ContainersNotReady",
            "containers with unready status: [web]",
        )];
        pod.state.containers = vec![crate::model::ContainerState {
            name: "web".into(),
            state: "running".into(),
            ..Default::default()
        }];
        snap.objects.push(pod.clone());
        let found = check(&snap, &Options::default(), &[]);
        assert!(
            found[0].summary.ends_with(
                "ContainersNotReady on Pod/search-5d8f6c-abcde: running, not ready: web (its readiness or startup probe does not pass)"
            ),
            "{}",
            found[0].summary
        );
        // Every container ready, a readiness gate unmet: the kubelet's words.
        let gated = snap.objects.last_mut().unwrap();
        gated.state.containers[0].ready = true;
        gated.state.conditions = vec![condition(
            "Ready",
            "False",
            "ReadinessGatesNotReady",
            "corresponding condition of pod readiness gate \"example.com/lb\" does not exist.",
        )];
        let found = check(&snap, &Options::default(), &[]);
        assert!(
            found[0].summary.ends_with(
                "running, not ready: Ready=False (ReadinessGatesNotReady: corresponding condition of pod readiness gate \"example.com/lb\" does not exist.)"
            ),
            "{}",
            found[0].summary
        );
    }

    /// An operator's resource says only that it waits; the StatefulSet it
    /// controls says why: both on its one line.
    #[test]
    fn a_custom_resource_waiting_on_what_it_controls_names_the_cause_beneath() {
        let mut cr = object("Widget", "shop", "orders-db");
        cr.created = Some(0);
        cr.state.conditions = vec![condition(
            "Ready",
            "False",
            "Reconciling",
            "waiting for StatefulSet orders-db",
        )];
        let mut sts = owned(
            workload("StatefulSet", "orders-db", 3, 1, 1),
            "Widget",
            "orders-db",
        );
        sts.object.uid = "uid-sts-orders-db".into();
        let snap = Snapshot {
            at: 10 * MIN,
            objects: vec![cr, sts],
            events: vec![warning(
                "StatefulSet",
                "orders-db",
                "FailedCreate",
                "create Pod orders-db-1 in StatefulSet orders-db failed error: pods \"orders-db-1\" is forbidden: exceeded quota: pods-cap, requested: pods=1, used: pods=1, limited: pods=1",
                9,
            )],
            ..Snapshot::default()
        };
        let found = check(&snap, &Options::default(), &[]);
        assert_eq!(
            found.len(),
            1,
            "the StatefulSet is the Widget's evidence: {found:?}"
        );
        assert_eq!(found[0].code, Code::R003);
        assert!(
            found[0].summary.ends_with(
                "Reconciling: waiting for StatefulSet orders-db ← StatefulSet/orders-db: Pods not created: exceeded quota pods-cap (pods: used 1, hard 1, requested 1)"
            ),
            "{}",
            found[0].summary
        );
    }

    #[test]
    fn a_rollout_its_update_strategy_holds_back_says_so() {
        let mut sts = workload("StatefulSet", "cache", 3, 3, 3);
        sts.state.replicas.insert("updatedReplicas".into(), 0);
        sts.state.update_strategy = "OnDelete".into();
        let snap = Snapshot {
            at: 10 * MIN,
            objects: vec![sts.clone()],
            ..Snapshot::default()
        };
        let found = check(&snap, &Options::default(), &[]);
        assert!(
            found[0].summary.starts_with("rollout stuck: 0 of 3 updated (3 ready) for 10m — UpdateStrategy: OnDelete: a Pod takes the new template only when it is deleted"),
            "{}",
            found[0].summary
        );
        // A partition: ordinals 0 and 1 stay, 2 is updated.
        sts.state.update_strategy = "partition=2".into();
        sts.state.replicas.insert("updatedReplicas".into(), 1);
        let snap = Snapshot {
            at: 10 * MIN,
            objects: vec![sts.clone()],
            ..Snapshot::default()
        };
        let found = check(&snap, &Options::default(), &[]);
        assert!(
            found[0].summary.contains("UpdateStrategy: rollingUpdate.partition 2: ordinals below 2 keep the old revision (1 of 3 updated)"),
            "{}",
            found[0].summary
        );
        // Short of the partition too: something else holds it; the partition is not the cause.
        sts.state.replicas.insert("updatedReplicas".into(), 0);
        let snap = Snapshot {
            at: 10 * MIN,
            objects: vec![sts],
            ..Snapshot::default()
        };
        let found = check(&snap, &Options::default(), &[]);
        assert!(
            found[0].summary.contains("no cause stated"),
            "{}",
            found[0].summary
        );
    }

    #[test]
    fn a_pod_bound_to_a_node_that_does_not_exist_is_the_cause() {
        let mut snap = quota_blocked();
        snap.events.clear();
        let mut pod = owned(
            object("Pod", "shop", "search-5d8f6c-abcde"),
            "ReplicaSet",
            "search-5d8f6c",
        );
        pod.created = Some(MIN);
        pod.state.phase = "Pending".into();
        pod.state.node_name = "node-that-is-gone".into();
        snap.objects.push(pod.clone());
        // Nothing is said while the Nodes were not all read.
        snap.objects.push(object("Node", "", "kwok-small"));
        let found = check(&snap, &Options::default(), &[]);
        assert!(
            found[0].summary.contains("no cause stated"),
            "{}",
            found[0].summary
        );
        snap.all_nodes = true;
        let found = check(&snap, &Options::default(), &[]);
        assert!(
            found[0].summary.contains("which does not exist"),
            "{}",
            found[0].summary
        );
        // A reconstruction reads a few Nodes by name: a 404 says it.
        snap.all_nodes = false;
        snap.absent = vec![crate::model::ObjectRef {
            kind: "Node".into(),
            name: "node-that-is-gone".into(),
            ..Default::default()
        }];
        let found = check(&snap, &Options::default(), &[]);
        assert!(
            found[0].summary.ends_with(
                "Pod/search-5d8f6c-abcde: bound to Node node-that-is-gone, which does not exist (deleted, or named in spec.nodeName): nothing runs it"
            ),
            "{}",
            found[0].summary
        );
    }

    /// Regression (session 16's note): a Deployment whose Pods the apiserver
    /// refuses said nothing in `check` for its first five minutes.
    #[test]
    fn a_refusal_younger_than_stuck_after_is_reported_at_once() {
        let mut snap = quota_blocked();
        snap.at = 3 * MIN;
        snap.objects[0].created = Some(2 * MIN);
        snap.objects[1].created = Some(2 * MIN);
        for e in &mut snap.events {
            e.first = 2 * MIN;
        }
        let found = check(&snap, &Options::default(), &[]);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0]
                .summary
                .contains("3 Pod(s) not created: exceeded quota pods-cap"),
            "{}",
            found[0].summary
        );
        // One refusal, not yet retried, may be a blip.
        snap.events[0].count = 1;
        assert!(check(&snap, &Options::default(), &[]).is_empty());
    }

    #[test]
    fn a_failed_create_no_rule_reads_still_says_the_pods_are_not_created() {
        let mut snap = quota_blocked();
        snap.events[0].message = "Error creating: pods \"search-5d8f6c-x\" is invalid: spec.containers[0].resources.requests: Invalid value: \"2\": must be less than or equal to cpu limit of 1".into();
        let found = check(&snap, &Options::default(), &[]);
        assert!(
            found[0].summary.contains(
                "3 Pod(s) not created: pods \"search-5d8f6c-x\" is invalid: spec.containers[0]"
            ),
            "{}",
            found[0].summary
        );
    }

    #[test]
    fn a_failed_job_is_an_error_with_its_pods_exit() {
        let mut job = object("Job", "shop", "migrate");
        job.created = Some(0);
        job.state.replicas.insert("spec.completions".into(), 1);
        job.state.replicas.insert("failed".into(), 3);
        let mut c = condition(
            "Failed",
            "True",
            "BackoffLimitExceeded",
            "Job has reached the specified backoff limit",
        );
        c.last_transition = Some(4 * MIN);
        job.state.conditions.push(c);
        let mut pod = owned(object("Pod", "shop", "migrate-x1y2z"), "Job", "migrate");
        pod.state.phase = "Failed".into();
        pod.state.containers = vec![crate::model::ContainerState {
            name: "migrate".into(),
            state: "terminated".into(),
            reason: "Error".into(),
            exit_code: Some(3),
            ..Default::default()
        }];
        let snap = Snapshot {
            at: 10 * MIN,
            objects: vec![job, pod],
            ..Snapshot::default()
        };
        let found = check(&snap, &Options::default(), &[]);
        assert_eq!(found.len(), 1);
        assert_eq!(
            (found[0].code, found[0].severity),
            (Code::R002, Severity::Error)
        );
        assert_eq!(
            found[0].summary,
            "failed (BackoffLimitExceeded): Job has reached the specified backoff limit; 3 Pod(s) failed, 0 of 1 done for 6m — Error on Pod/migrate-x1y2z: container migrate terminated (Error, exit code 3)"
        );
    }

    /// Issue 47: a failure the object declares itself waited for
    /// `--stuck-after` (five minutes) like a rollout that may still converge.
    #[test]
    fn a_failed_job_and_a_passed_progress_deadline_are_reported_at_once() {
        let mut job = object("Job", "shop", "migrate");
        job.created = Some(9 * MIN);
        job.state.replicas.insert("spec.completions".into(), 1);
        let mut c = condition(
            "Failed",
            "True",
            "BackoffLimitExceeded",
            "Job has reached the specified backoff limit",
        );
        c.last_transition = Some(10 * MIN - 20_000);
        job.state.conditions.push(c);
        let mut web = object("Deployment", "shop", "web");
        web.created = Some(9 * MIN);
        web.state.replicas.insert("spec.replicas".into(), 2);
        web.state.replicas.insert("updatedReplicas".into(), 1);
        web.state.replicas.insert("readyReplicas".into(), 2);
        let mut p = condition(
            "Progressing",
            "False",
            "ProgressDeadlineExceeded",
            "ReplicaSet \"web-7c9d\" has timed out progressing.",
        );
        p.last_transition = Some(10 * MIN - 20_000);
        web.state.conditions.push(p);
        let snap = Snapshot {
            at: 10 * MIN,
            objects: vec![job, web],
            ..Snapshot::default()
        };
        let found = check(&snap, &Options::default(), &[]);
        let codes: Vec<(Code, &str)> = found
            .iter()
            .map(|f| (f.code, f.object.name.as_str()))
            .collect();
        assert_eq!(
            codes,
            [(Code::R002, "migrate"), (Code::R001, "web")],
            "{found:?}"
        );
        assert!(
            found[1].summary.contains("ProgressDeadlineExceeded"),
            "{}",
            found[1].summary
        );
        // A rollout that may still converge, as young, still waits.
        let mut snap = snap;
        snap.objects.remove(0);
        snap.objects[0].state.conditions.clear();
        assert!(check(&snap, &Options::default(), &[]).is_empty());
    }

    /// Issue 47: a suspended Job read "no cause stated".
    #[test]
    fn a_suspended_job_says_so_as_information() {
        let mut job = object("Job", "shop", "nightly");
        job.created = Some(0);
        job.state.replicas.insert("spec.completions".into(), 1);
        let mut c = condition("Suspended", "True", "JobSuspended", "Job suspended");
        c.last_transition = Some(MIN);
        job.state.conditions.push(c);
        let snap = Snapshot {
            at: 10 * MIN,
            objects: vec![job],
            ..Snapshot::default()
        };
        let found = check(&snap, &Options::default(), &[]);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].severity, Severity::Info);
        assert!(
            found[0]
                .summary
                .contains("suspended (Suspended=True: spec.suspend is true)")
                && !found[0].summary.contains("no cause stated"),
            "{}",
            found[0].summary
        );
    }

    /// Issue 47: a suspended CronJob was no finding (k8sgpt flags it); one
    /// that runs is none.
    #[test]
    fn a_suspended_cronjob_says_so_as_information() {
        let cron = |name: &str, halted: &str| {
            let mut c = object("CronJob", "shop", name);
            c.object.api_version = "batch/v1".into();
            c.created = Some(0);
            c.generation_since = Some(MIN);
            c.state.halted = halted.into();
            c
        };
        let snap = Snapshot {
            at: 10 * MIN,
            objects: vec![cron("nightly", "spec.suspend"), cron("hourly", "")],
            ..Snapshot::default()
        };
        let found = check(&snap, &Options::default(), &[]);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].code, Code::R002);
        assert_eq!(found[0].object.name, "nightly");
        assert_eq!(found[0].severity, Severity::Info);
        assert!(
            found[0]
                .summary
                .contains("suspended (spec.suspend is true): it creates no Job until resumed")
                && !found[0].summary.contains("no cause stated"),
            "{}",
            found[0].summary
        );
        assert!(relevant(&snap.objects[0]) && !relevant(&snap.objects[1]));
        // Suspended a minute ago: it waits `--stuck-after`, as any R002 does.
        let young = Snapshot {
            at: 2 * MIN,
            ..snap
        };
        assert!(check(&young, &Options::default(), &[]).is_empty());
    }

    /// Issue 47: a Node condition node-problem-detector sets (or a pressure)
    /// was no finding unless it blocked a Pod; one that is False is none.
    #[test]
    fn a_node_problem_condition_is_r003_and_a_cleared_one_is_not() {
        let node = |name: &str, status: &str| {
            let mut n = object("Node", "", name);
            n.created = Some(0);
            n.state
                .conditions
                .push(condition("Ready", "True", "KubeletReady", ""));
            let mut c = condition(
                "KernelDeadlock",
                status,
                "DockerHung",
                "kernel: INFO: task docker:20744 blocked for more than 120 seconds.",
            );
            c.last_transition = Some(MIN);
            n.state.conditions.push(c);
            n.state.conditions.push(condition(
                "MemoryPressure",
                "False",
                "KubeletHasSufficientMemory",
                "",
            ));
            n
        };
        let snap = Snapshot {
            at: 10 * MIN,
            objects: vec![node("node-a", "True"), node("node-b", "False")],
            ..Snapshot::default()
        };
        let found = check(&snap, &Options::default(), &[]);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].code, Code::R003);
        assert_eq!(found[0].object.name, "node-a");
        assert!(
            found[0].summary.contains("KernelDeadlock=True")
                && found[0]
                    .summary
                    .contains("blocked for more than 120 seconds"),
            "{}",
            found[0].summary
        );
    }

    /// Issue 47: OLM v1's catalog not serving and extension not installed
    /// were no finding (k8sgpt flags both); True is none.
    #[test]
    fn an_olm_catalog_not_serving_and_an_extension_not_installed_are_r003() {
        let cr = |kind: &str, type_: &str, status: &str| {
            let mut o = object(kind, "", &format!("{kind}-{status}").to_lowercase());
            o.object.api_version = "olm.operatorframework.io/v1".into();
            o.created = Some(0);
            let mut c = condition(type_, status, "Failed", "unpacking failed");
            c.last_transition = Some(MIN);
            o.state.conditions.push(c);
            o
        };
        let snap = Snapshot {
            at: 10 * MIN,
            objects: vec![
                cr("ClusterCatalog", "Serving", "False"),
                cr("ClusterCatalog", "Serving", "True"),
                cr("ClusterExtension", "Installed", "False"),
                cr("ClusterExtension", "Installed", "True"),
            ],
            ..Snapshot::default()
        };
        let found = check(&snap, &Options::default(), &[]);
        let named: Vec<(&str, &str)> = found
            .iter()
            .map(|f| (f.code.as_str(), f.object.name.as_str()))
            .collect();
        assert_eq!(
            named,
            [
                ("R003", "clustercatalog-false"),
                ("R003", "clusterextension-false")
            ],
            "{found:?}"
        );
    }

    /// Issue 47: OLM v0's failures were no finding (k8sgpt flags them): an
    /// InstallPlan Failed, a Subscription that cannot resolve, a
    /// CatalogSource whose registry cannot be reached. All three are
    /// declared failures, named at once (a second old); a registry still
    /// CONNECTING waits for `--stuck-after`, an IDLE or READY one is fine.
    #[test]
    fn olm_v0_failures_are_r003_at_once_and_a_connecting_catalog_waits() {
        let cr = |kind: &str, name: &str| {
            let mut o = object(kind, "operators", name);
            o.object.api_version = "operators.coreos.com/v1alpha1".into();
            o.created = Some(10 * MIN - 1_000);
            o
        };
        let with = |mut o: RecordedObject, c: Condition| {
            o.state.conditions.push(c);
            o
        };
        let connection = |state: &str| {
            let mut c = condition(CONNECTION_STATE, state, "", "registry at cs.olm.svc:50051");
            c.last_transition = None;
            c
        };
        let mut plan = with(
            cr("InstallPlan", "install-abcde"),
            condition(
                "Installed",
                "False",
                "InstallComponentFailed",
                "error creating csv etcdoperator.v0.9.4: forbidden",
            ),
        );
        plan.state.phase = "Failed".into();
        let mut waiting = cr("InstallPlan", "install-manual");
        waiting.state.phase = "RequiresApproval".into();
        let snap = Snapshot {
            at: 10 * MIN,
            objects: vec![
                plan,
                waiting,
                with(
                    cr("Subscription", "etcd"),
                    condition(
                        "ResolutionFailed",
                        "True",
                        "ConstraintsNotSatisfiable",
                        "no operators found in channel alpha of package etcd",
                    ),
                ),
                with(
                    cr("Subscription", "healthy"),
                    condition(
                        "CatalogSourcesUnhealthy",
                        "False",
                        "AllCatalogSourcesHealthy",
                        "",
                    ),
                ),
                with(
                    cr("CatalogSource", "broken"),
                    connection("TRANSIENT_FAILURE"),
                ),
                with(cr("CatalogSource", "starting"), connection("CONNECTING")),
                with(cr("CatalogSource", "idle"), connection("IDLE")),
                with(cr("CatalogSource", "ready"), connection("READY")),
            ],
            ..Snapshot::default()
        };
        let found = check(&snap, &Options::default(), &[]);
        let mut named: Vec<(&str, &str)> = found
            .iter()
            .map(|f| (f.code.as_str(), f.object.name.as_str()))
            .collect();
        named.sort();
        assert_eq!(
            named,
            [
                ("R003", "broken"),
                ("R003", "etcd"),
                ("R003", "install-abcde"),
            ],
            "{found:#?}"
        );
        let summary = |name: &str| {
            found
                .iter()
                .find(|f| f.object.name == name)
                .map(|f| f.summary.clone())
                .unwrap_or_default()
        };
        assert!(
            summary("install-abcde").contains("Installed=False")
                && summary("install-abcde").contains("InstallComponentFailed: error creating csv"),
            "{found:#?}"
        );
        assert!(
            summary("etcd").contains("ResolutionFailed=True")
                && summary("etcd").contains("no operators found in channel alpha"),
            "{found:#?}"
        );
        assert!(
            summary("broken").contains("connectionState=TRANSIENT_FAILURE")
                && summary("broken").contains("registry at cs.olm.svc:50051"),
            "{found:#?}"
        );
        // Past `--stuck-after`, the registry still connecting is named too.
        let later = Snapshot {
            at: 20 * MIN,
            ..snap
        };
        let found = check(&later, &Options::default(), &[]);
        assert!(
            found.iter().any(|f| f.object.name == "starting")
                && !found
                    .iter()
                    .any(|f| ["idle", "ready", "healthy", "install-manual"]
                        .contains(&f.object.name.as_str())),
            "{found:#?}"
        );
    }

    /// Issue 47: an object in its own `Failed` phase with no condition that
    /// says so (an OLM ClusterServiceVersion: its conditions are a history of
    /// phases, with no type) was no finding; it is an R003 at once, quoting
    /// `status.reason: status.message`. A PersistentVolume's Failed phase
    /// is L006's, a Pod's P002's: no R003 for them.
    #[test]
    fn an_object_in_its_own_failed_phase_is_r003_at_once_quoting_its_reason() {
        let mut csv = object("ClusterServiceVersion", "operators", "etcdoperator.v0.9.4");
        csv.object.api_version = "operators.coreos.com/v1alpha1".into();
        csv.created = Some(10 * MIN - 1_000);
        csv.state.phase = "Failed".into();
        csv.state.phase_reason =
            "TooManyOperatorGroups: csv created in namespace with multiple operatorgroups, can't pick one automatically".into();
        let mut pv = object("PersistentVolume", "", "pv-1");
        pv.created = Some(0);
        pv.state.phase = "Failed".into();
        let mut pod = object("Pod", "operators", "one-shot");
        pod.created = Some(0);
        pod.state.phase = "Failed".into();
        let snap = Snapshot {
            at: 10 * MIN,
            objects: vec![csv, pv, pod],
            ..Snapshot::default()
        };
        let found = check(&snap, &Options::default(), &[]);
        assert_eq!(found.len(), 1, "{found:#?}");
        assert_eq!(found[0].code, Code::R003);
        assert_eq!(found[0].object.name, "etcdoperator.v0.9.4");
        assert!(
            found[0].summary.starts_with("phase=Failed for 1s — TooManyOperatorGroups: csv created in namespace with multiple operatorgroups"),
            "{}",
            found[0].summary
        );
    }

    /// Issue 47: an HPA pinned at its maximum was no finding (k8sgpt flags it).
    #[test]
    fn an_hpa_pinned_at_its_maximum_is_r003_and_one_at_its_minimum_is_not() {
        let hpa = |name: &str, reason: &str| {
            let mut h = object("HorizontalPodAutoscaler", "shop", name);
            h.object.api_version = "autoscaling/v2".into();
            h.created = Some(0);
            let mut c = condition(
                "ScalingLimited",
                "True",
                reason,
                "the desired replica count is more than the maximum replica count",
            );
            c.last_transition = Some(MIN);
            h.state.conditions.push(c);
            h
        };
        let snap = Snapshot {
            at: 10 * MIN,
            objects: vec![hpa("web", "TooManyReplicas"), hpa("idle", "TooFewReplicas")],
            ..Snapshot::default()
        };
        let found = check(&snap, &Options::default(), &[]);
        assert_eq!(found.len(), 1, "{found:#?}");
        assert_eq!(found[0].code, Code::R003);
        assert_eq!(found[0].object.name, "web");
        assert!(
            found[0].summary.contains("ScalingLimited"),
            "{}",
            found[0].summary
        );
    }

    #[test]
    fn a_custom_resource_not_ready_quotes_its_condition() {
        let mut db = object("Widget", "shop", "orders-db");
        db.created = Some(0);
        let mut c = condition(
            "Ready",
            "False",
            "BackupStoreUnreachable",
            "cannot reach s3://backups: 403",
        );
        c.last_transition = Some(MIN);
        db.state.conditions.push(c);
        let snap = Snapshot {
            at: 20 * MIN,
            objects: vec![db],
            ..Snapshot::default()
        };
        let found = check(&snap, &Options::default(), &[]);
        assert_eq!(found[0].code, Code::R003);
        assert_eq!(
            found[0].summary,
            "Ready=False for 19m — BackupStoreUnreachable: cannot reach s3://backups: 403"
        );
    }

    #[test]
    fn an_unschedulable_pod_hands_over_to_its_s001() {
        let mut snap = quota_blocked();
        snap.events.clear();
        for o in &mut snap.objects {
            o.state.replicas.insert("replicas".into(), 5);
        }
        let mut pod = owned(
            object("Pod", "shop", "search-5d8f6c-aaaaa"),
            "ReplicaSet",
            "search-5d8f6c",
        );
        pod.state.phase = "Pending".into();
        snap.objects.push(pod.clone());
        let s001 = Finding::new(
            Code::S001,
            &pod.object,
            "no node fits: 3 Insufficient cpu (asks 4 cpu; the largest node has 2 free)".into(),
            Some(MIN),
            json!({}),
        );
        let found = check(&snap, &Options::default(), &[s001]);
        assert_eq!(
            found[0].summary,
            "2 of 5 ready for 9m — Pod/search-5d8f6c-aaaaa: no node fits: 3 Insufficient cpu (asks 4 cpu; the largest node has 2 free)"
        );
    }
}
