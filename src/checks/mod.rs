//! Checks: pure functions over one plain [`Snapshot`]. The live path
//! (`k8s::snapshot`) and the recorded path (`store::snapshot`) build the same
//! snapshot type, so every check runs the same way on both, and its tests
//! never touch a cluster. One check, one file, stable codes (docs/checks.md).

pub mod causes;
pub mod codes;
pub mod controllers;
pub mod finalizers;
pub mod generation;
pub mod hotloop;
pub mod leases;
pub mod pods;
pub mod progress;
pub mod relations;
pub mod scheduling;
pub mod scheduling_causes;
pub mod scheduling_message;
pub mod warned;

use serde::Serialize;

pub use codes::{Check, Code};

use crate::model::{EventSummary, ObjectRef, RecordedObject};

/// How bad a finding is; ordered, so `--fail-on` can compare.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// Built-in types (group, plural) whose spec and status no check reads: they
/// have neither a status nor a spec field the checks look at. The checks use
/// only their metadata (finalizers and deletion, generation, owners,
/// managedFields), so live `check` lists and watches them as metadata only
/// (`PartialObjectMetadataList`): a Secret's data and a ConfigMap's contents
/// never reach this process. Custom resources are never here: their status
/// (observedGeneration) is read by the generation check.
pub const METADATA_ONLY: &[(&str, &str)] = &[
    ("", "secrets"),
    ("", "configmaps"),
    ("", "serviceaccounts"),
    ("", "endpoints"),
    ("", "podtemplates"),
    ("", "limitranges"),
    ("apps", "controllerrevisions"),
    ("discovery.k8s.io", "endpointslices"),
    ("rbac.authorization.k8s.io", "roles"),
    ("rbac.authorization.k8s.io", "rolebindings"),
    ("rbac.authorization.k8s.io", "clusterroles"),
    ("rbac.authorization.k8s.io", "clusterrolebindings"),
    ("scheduling.k8s.io", "priorityclasses"),
    ("storage.k8s.io", "storageclasses"),
    ("storage.k8s.io", "csidrivers"),
    ("node.k8s.io", "runtimeclasses"),
    ("networking.k8s.io", "ingressclasses"),
];

/// Whether live `check` reads only this type's metadata (see [`METADATA_ONLY`]).
pub fn metadata_only(group: &str, plural: &str) -> bool {
    METADATA_ONLY.contains(&(group, plural))
}

/// The object a finding is about, as the JSON output shows it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FindingObject {
    #[serde(rename = "apiVersion")]
    pub api_version: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub uid: String,
    /// `check --all-clusters`: the cluster's label (its uid when it has none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster: Option<String>,
}

impl From<&ObjectRef> for FindingObject {
    fn from(r: &ObjectRef) -> Self {
        FindingObject {
            api_version: r.api_version.clone(),
            kind: r.kind.clone(),
            namespace: r.namespace.clone(),
            name: r.name.clone(),
            uid: r.uid.clone(),
            cluster: None,
        }
    }
}

/// One thing a check found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// Always `code.check()`: kept as a field for the JSON output.
    pub check: Check,
    /// Stable, documented in docs/checks.md.
    pub code: Code,
    pub severity: Severity,
    pub object: FindingObject,
    pub summary: String,
    /// When the condition began (epoch ms), when known.
    #[serde(skip)]
    pub since_ms: Option<i64>,
    /// `since_ms` as RFC 3339, for the JSON output.
    pub since: Option<String>,
    /// The object's controller, `Kind/name` (a Pod's ReplicaSet), when known:
    /// table output folds findings that share it and their summary into one line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    pub details: serde_json::Value,
}

impl Finding {
    /// A finding with the code's own severity (see [`Finding::with_severity`]).
    pub fn new(
        code: Code,
        object: &ObjectRef,
        summary: String,
        since_ms: Option<i64>,
        details: serde_json::Value,
    ) -> Finding {
        Finding {
            check: code.check(),
            code,
            severity: code.severity(),
            object: object.into(),
            summary,
            since_ms,
            since: since_ms.map(crate::units::rfc3339),
            owner: None,
            details,
        }
    }

    /// The same finding at another severity: a check that knows less than
    /// usual (a lag of unknown length) says so with a milder one.
    pub fn with_severity(self, severity: Severity) -> Finding {
        Finding { severity, ..self }
    }
}

/// Updates of one object over the window, by writer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ObjectUpdates {
    pub object: ObjectRef,
    pub updates: i64,
    /// Updates that moved `metadata.generation` (the spec changed).
    pub generation_moves: i64,
    /// (writer, updates), most first.
    pub managers: Vec<(String, i64)>,
    /// How often the writer changed from one update to the next, when the
    /// sequence is known (a live sample); None from per-minute counters.
    pub alternations: Option<i64>,
    /// Updates per minute: (start of the minute, epoch ms; updates), oldest
    /// first, minutes without updates left out. A burst hides in the window's
    /// average; not in these.
    pub per_minute: Vec<(i64, i64)>,
    /// Fields whose owner (managedFields) changed from one update to the next,
    /// with how often, most first: what a fight is over. Live samples only.
    pub contested: Vec<(String, i64)>,
}

/// Everything the checks look at: one moment of one cluster.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// The moment (epoch ms): now, or `--at`.
    pub at: i64,
    pub objects: Vec<RecordedObject>,
    /// Whether `objects` is the whole picture (live, or a recording with object
    /// history) rather than Events only (an import, or `record --events-only`).
    pub has_objects: bool,
    pub events: Vec<EventSummary>,
    pub updates: Vec<ObjectUpdates>,
    /// The span `updates` and `in_window` cover, in ms.
    pub window_ms: i64,
    /// API group versions that discovery could not describe (an aggregated API that is down).
    pub stale_groups: Vec<String>,
    /// Types that could not be read, with why (RBAC, errors): reported, never silently skipped.
    pub unreadable: Vec<String>,
    /// When each Node's taints and cordon began and who wrote them (recordings only).
    pub origins: Vec<scheduling_causes::Origin>,
    /// What the Pods bound to each Node request, counted while the snapshot
    /// was built (from Pods [`Relevance`] then drops).
    pub usage: scheduling_causes::Usage,
    /// Live: the types listed (full names, `pods`, `deployments.apps`, and
    /// `events`); empty for a recording, whose coverage is the recorder's.
    pub examined: Vec<String>,
    /// Live: the types that could not be listed (forbidden, or failing).
    pub not_examined: Vec<String>,
    /// Those of `not_examined` that failed for another reason than RBAC.
    pub failing: Vec<String>,
    /// Writes the apiserver refused within the window (imported audit logs).
    pub refusals: Vec<crate::model::Refusal>,
    /// Kind by resource plural (`deployments.apps` -> `Deployment`), to name
    /// a refusal's object.
    pub kinds: std::collections::HashMap<String, String>,
    /// Whether `objects` holds every Node of the cluster (a live listing, a
    /// recording that holds Nodes): a Node a Pod names that is not among them
    /// does not exist. False for a reconstruction, which reads a few by name.
    pub all_nodes: bool,
    /// Objects a fact names that the apiserver answered "not found" for
    /// (a reconstruction's GET of a Pod's Node): known not to exist.
    pub absent: Vec<ObjectRef>,
    /// Every Pod's labels, readiness, node and priority, and which named
    /// objects exist, tallied before [`Relevance`] dropped them.
    pub index: relations::Index,
}

impl Snapshot {
    /// Puts what every source gathered into one order and fills what the
    /// objects themselves tell, so that the same cluster at the same moment
    /// gives the same findings live, from `--db` and from `--store` (issue 43).
    ///
    /// NB: a live check lists types in parallel and a recording reads rows by
    /// id, so without this the same two unschedulable Pods came out in
    /// either order and R001 quoted either as its example.
    pub fn settle(&mut self) {
        let key = |o: &ObjectRef| {
            (
                o.kind.clone(),
                o.namespace.clone(),
                o.name.clone(),
                o.uid.clone(),
            )
        };
        self.objects.sort_by_cached_key(|o| key(&o.object));
        self.events.sort_by(|a, b| {
            (key(&a.involved), &a.reason, a.first, a.last, &a.message).cmp(&(
                key(&b.involved),
                &b.reason,
                b.first,
                b.last,
                &b.message,
            ))
        });
        self.updates.sort_by_cached_key(|u| key(&u.object));
        // A Node whose taint or cordon no recorded history dates (a live
        // check, a reconstruction, a Node recorded once) is dated by its own
        // managedFields, as a recording's first listed version is.
        let nodes: Vec<&RecordedObject> = self
            .objects
            .iter()
            .filter(|o| {
                o.object.kind == "Node"
                    && (!o.state.taints.is_empty() || o.state.unschedulable)
                    && !self.origins.iter().any(|g| g.node == o.object.name)
            })
            .collect();
        let mut origins = Vec::new();
        for node in nodes {
            let current = crate::model::Version {
                at: if node.state_at > 0 {
                    node.state_at.min(self.at)
                } else {
                    self.at
                },
                state: node.state.clone(),
                writers: node.writers.clone(),
                listed: true,
                diff: Vec::new(),
                provenance: Default::default(),
            };
            origins.extend(scheduling_causes::origins(&node.object.name, &[current]));
        }
        self.origins.extend(origins);
    }
}

/// The chosen checks (all when `selected` is empty) that could examine none of
/// the types they read: their silence would not be health. Only a live
/// snapshot says what it could not list; a recording never counts as blind.
pub fn blind(snapshot: &Snapshot, selected: &[Check]) -> Vec<Check> {
    if snapshot.not_examined.is_empty() {
        return Vec::new();
    }
    chosen(selected)
        .filter(|c| {
            let wanted = c.reads();
            !snapshot
                .examined
                .iter()
                .any(|t| wanted.is_empty() || wanted.contains(&t.as_str()))
        })
        .collect()
}

/// The knobs of the checks.
#[derive(Debug, Clone)]
pub struct Options {
    pub stuck_after_ms: i64,
    pub lag_after_ms: i64,
    /// Updates per minute above which an object is in a hot loop.
    pub rate_per_minute: f64,
    /// Kinds the hot-loop check leaves alone unless asked for (they churn by design).
    pub include_noisy: bool,
    /// Occurrences per minute above which an Event is a storm.
    pub storm_per_minute: f64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            stuck_after_ms: 5 * 60_000,
            lag_after_ms: 5 * 60_000,
            rate_per_minute: 10.0,
            include_noisy: false,
            storm_per_minute: 10.0,
        }
    }
}

/// What the checks found, plus the scheduling summary.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    pub findings: Vec<Finding>,
    pub summary: scheduling::Summary,
    /// What could not be examined (forbidden types, stale API groups).
    pub notes: Vec<String>,
}

/// Keeps the objects some check may need and drops the rest (a healthy,
/// scheduled Pod is most of a big cluster and interests no check), so a
/// snapshot's memory follows the trouble, not the cluster's size.
#[derive(Debug, Default)]
pub struct Relevance {
    terminating_namespaces: std::collections::HashSet<String>,
}

impl Relevance {
    /// Whether to keep `o`. Namespaces must come first (both snapshot paths see to it).
    pub fn keep(&mut self, o: &RecordedObject) -> bool {
        if o.object.kind == "Namespace" && o.state.deletion.is_some() {
            self.terminating_namespaces.insert(o.object.name.clone());
        }
        self.wanted(o)
    }

    /// Whether a check may need `o`, given the terminating Namespaces seen so far.
    pub fn wanted(&self, o: &RecordedObject) -> bool {
        let s = &o.state;
        if o.object.kind == "Namespace" {
            return true;
        }
        let generation_lag = s.generation > 0
            && (s.observed_generation.is_some_and(|og| og < s.generation)
                || s.conditions
                    .iter()
                    .any(|c| c.observed_generation.is_some_and(|og| og < s.generation)));
        matches!(
            o.object.kind.as_str(),
            "Node" | "Deployment" | "StatefulSet" | "DaemonSet"
        ) || s.deletion.is_some()
            // A leader's Lease: whether the controllers are running at all.
            || s.lease.as_ref().is_some_and(|l| !l.holder.is_empty())
            // What does not reach its target, and what explains it one level down.
            || progress::relevant(o)
            || generation_lag
            || (o.object.kind == "Pod" && (s.node_name.is_empty() || !s.claims.is_empty()))
            // A container that will not start (bad image, crash loop).
            || (o.object.kind == "Pod" && pods::stuck_container(s).is_some())
            // A Pending Pod's claim → volume → the Nodes that can reach it.
            || (o.object.kind == "PersistentVolumeClaim" && !s.volume_name.is_empty())
            || (o.object.kind == "PersistentVolume" && !s.node_affinity.is_empty())
            // What selects Pods: its finding needs the selector (issue 47).
            || (o.object.kind == "Service" && !s.pod_selector.is_empty())
            || o.object.kind == "PodDisruptionBudget"
            // An admission webhook that calls a Service (L005).
            || !s.webhooks.is_empty()
            // A claim or a volume in a phase that does not mend (L006).
            || (matches!(o.object.kind.as_str(), "PersistentVolumeClaim" | "PersistentVolume")
                && matches!(s.phase.as_str(), "Lost" | "Failed"))
            || self.terminating_namespaces.contains(&o.object.namespace)
    }
}

/// Whether a finding belongs to what `-n NS` shows: the namespace's objects,
/// the Namespace itself, a control-plane component that is gone (C001),
/// which stops every namespace alike, and cluster-scoped objects that hurt
/// it (a webhook that refuses writes, the volume of its claim).
pub fn concerns(f: &Finding, ns: &str) -> bool {
    f.object.namespace == ns
        || (f.object.kind == "Namespace" && f.object.name == ns)
        || (f.code == Code::C001 && f.details["control_plane"] == true)
        // NB: a webhook that refuses writes when its calls fail may refuse
        // them in any namespace; a volume's failure is its claim's namespace's.
        || (f.code == Code::L005 && f.details["fail"] == true)
        || (f.code == Code::L006 && f.details["claim_namespace"] == ns)
}

/// The chosen checks (all when `selected` is empty), in the order they run.
pub fn chosen(selected: &[Check]) -> impl Iterator<Item = Check> + '_ {
    Check::ALL
        .into_iter()
        .filter(|c| selected.is_empty() || selected.contains(c))
}

/// Drops the H003 Event storms that a progress finding quotes as its cause:
/// they are its evidence, not news of their own (an info-level H003 of
/// FailedCreate once was all `check` said of a quota-blocked Deployment).
pub fn drop_explained_storms(findings: &mut Vec<Finding>) {
    let explained = progress::explained(findings);
    findings.retain(|f| {
        f.code != Code::H003
            || !explained.contains(&(
                f.object.namespace.clone(),
                format!("{}/{}", f.object.kind, f.object.name),
            ))
    });
}

/// Runs the chosen checks (all when `selected` is empty) over one snapshot.
pub fn run(snapshot: &Snapshot, selected: &[Check], options: &Options) -> Report {
    let mut report = Report::default();
    for check in chosen(selected) {
        match check {
            // NB: last, below: it reads the Pods' own findings.
            Check::Progress => {}
            Check::Finalizers => report.findings.extend(finalizers::check(snapshot, options)),
            Check::Hotloop => report.findings.extend(hotloop::check(snapshot, options)),
            Check::Generation => report.findings.extend(generation::check(snapshot, options)),
            Check::Scheduling => {
                let (findings, summary) = scheduling::check(snapshot, options);
                report.findings.extend(findings);
                report.summary = summary;
            }
            Check::Pods => report.findings.extend(pods::check(snapshot, options)),
            Check::Controllers => report.findings.extend(leases::check(snapshot)),
            Check::Relations => report.findings.extend(relations::check(snapshot, options)),
        }
    }
    if chosen(selected).any(|c| c == Check::Progress) {
        let mut pod_findings: Vec<Finding> = report
            .findings
            .iter()
            .filter(|f| matches!(f.code, Code::S001 | Code::P001))
            .cloned()
            .collect();
        if !chosen(selected).any(|c| c == Check::Scheduling) {
            pod_findings.extend(scheduling::check(snapshot, options).0);
        }
        if !chosen(selected).any(|c| c == Check::Pods) {
            pod_findings.extend(pods::check(snapshot, options));
        }
        let mut progress = progress::check(snapshot, options, &pod_findings);
        // NB: after every other check: R004 speaks only of what none tells of.
        let mut told = progress.clone();
        told.extend(report.findings.iter().cloned());
        progress.extend(warned::check(snapshot, &told));
        report.findings.splice(0..0, progress);
        drop_explained_storms(&mut report.findings);
    }
    // NB: a control-plane component that is gone explains everything else
    // that does not move: it leads.
    report.findings.sort_by_key(|f| f.code != Code::C001);
    report.notes.extend(snapshot.stale_groups.iter().map(|g| {
        format!("API group {g} is unavailable (its aggregated API does not answer discovery)")
    }));
    report.notes.extend(snapshot.unreadable.iter().cloned());
    report
}

#[cfg(test)]
mod tests {
    use super::fixtures::object;
    use super::*;

    #[test]
    fn a_check_that_could_list_none_of_its_types_is_blind() {
        let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let nothing = Snapshot {
            not_examined: strings(&["namespaces", "pods", "events", "configmaps"]),
            ..Snapshot::default()
        };
        assert_eq!(blind(&nothing, &[]), Check::ALL.to_vec());
        assert_eq!(
            blind(&nothing, &[Check::Scheduling]),
            vec![Check::Scheduling]
        );
        // Partial coverage: what could be listed is examined, the rest are notes.
        let some = Snapshot {
            examined: strings(&["configmaps"]),
            ..nothing.clone()
        };
        // Scheduling and pods read Pods (and Events): neither could look.
        assert_eq!(blind(&some, &[]), vec![Check::Scheduling, Check::Pods]);
        assert!(blind(&some, &[Check::Finalizers, Check::Hotloop]).is_empty());
        let events = Snapshot {
            examined: strings(&["events"]),
            ..nothing
        };
        assert!(blind(&events, &[Check::Scheduling]).is_empty());
        assert!(blind(&Snapshot::default(), &[]).is_empty(), "a recording");
    }

    #[test]
    fn relevance_drops_healthy_pods_and_keeps_trouble() {
        let mut r = Relevance::default();
        let mut ns = object("Namespace", "", "gone");
        ns.state.deletion = Some(1);
        assert!(r.keep(&ns));
        let mut healthy = object("Pod", "shop", "ok");
        healthy.state.node_name = "n1".into();
        assert!(!r.keep(&healthy), "a scheduled Pod nothing is wrong with");
        let mut inside = object("Pod", "gone", "left");
        inside.state.node_name = "n1".into();
        assert!(r.keep(&inside), "what remains in a terminating namespace");
        let pending = object("Pod", "shop", "pending");
        assert!(r.keep(&pending), "an unscheduled Pod");
        let mut pulling = healthy.clone();
        pulling.state.containers = vec![crate::model::ContainerState {
            name: "web".into(),
            state: "waiting".into(),
            reason: "ImagePullBackOff".into(),
            ..crate::model::ContainerState::default()
        }];
        assert!(r.keep(&pulling), "a Pod whose container cannot start");
        let mut lagging = object("Widget", "shop", "w");
        lagging.state.generation = 2;
        lagging.state.observed_generation = Some(1);
        assert!(r.keep(&lagging));
        assert!(r.keep(&object("Node", "", "n1")));
        let mut bound = object("PersistentVolumeClaim", "shop", "data");
        assert!(
            !r.keep(&bound),
            "an unbound claim explains no volume conflict"
        );
        bound.state.volume_name = "pv-data".into();
        assert!(r.keep(&bound));
        let mut zonal = object("PersistentVolume", "", "pv-data");
        assert!(!r.keep(&zonal), "a volume every Node reaches");
        zonal.state.node_affinity = vec![vec![crate::model::Requirement::default()]];
        assert!(r.keep(&zonal));
    }
}

#[cfg(test)]
pub(crate) mod fixtures {
    //! Small builders for check tests.
    use crate::model::{Condition, ObjectRef, ObjectState, RecordedObject};

    pub fn object(kind: &str, namespace: &str, name: &str) -> RecordedObject {
        RecordedObject {
            id: 0,
            object: ObjectRef {
                api_version: match kind {
                    "Deployment" | "ReplicaSet" | "StatefulSet" | "DaemonSet" => "apps/v1".into(),
                    "Widget" => "example.com/v1".into(),
                    _ => "v1".into(),
                },
                kind: kind.into(),
                namespace: namespace.into(),
                name: name.into(),
                uid: format!("uid-{name}"),
                field_path: String::new(),
            },
            state: ObjectState::default(),
            ..RecordedObject::default()
        }
    }

    pub fn condition(type_: &str, status: &str, reason: &str, message: &str) -> Condition {
        Condition {
            type_: type_.into(),
            status: status.into(),
            reason: reason.into(),
            message: message.into(),
            ..Condition::default()
        }
    }
}
