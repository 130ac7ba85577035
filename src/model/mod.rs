//! Plain data, free of Kubernetes client types: what the recorder stores and
//! what timelines and checks read. `k8s` converts wire objects into these.

pub mod certainty;
pub mod cluster;
pub mod event;
pub mod gap;
pub mod object_ref;
pub mod provenance;
pub mod relation;
pub mod writer;

pub use certainty::Certainty;
pub use cluster::Which;
pub use event::{EventSummary, Occurrence};
pub use gap::{Gap, GapReason};
pub use object_ref::ObjectRef;
pub use provenance::{Provenance, Seen};
pub use relation::Relation;
pub use writer::Writer;

/// The highest count an Event can have: the API's `count` and `series.count`
/// are int32. Higher counts (only a hand-made file has them) are clamped to it,
/// so that no stored sum of counts can overflow SQLite's 64-bit integers.
pub const MAX_COUNT: i64 = i32::MAX as i64;

/// One observation of one Event object, normalised the way kubectl reads it.
///
/// Times are milliseconds since the Unix epoch, UTC.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EventObservation {
    pub uid: String,
    pub namespace: String,
    pub name: String,
    pub resource_version: String,
    pub involved: ObjectRef,
    pub related: Option<ObjectRef>,
    pub reason: String,
    pub type_: String,
    pub message: String,
    pub action: String,
    pub reporting_controller: String,
    pub reporting_instance: String,
    pub source_host: String,
    /// `firstTimestamp`, else `eventTime`, else the object's creation time.
    pub first: i64,
    /// `series.lastObservedTime`, else `lastTimestamp`, else `first`.
    pub last: i64,
    /// `series.count`, else `count`; 0 or absent counts as 1; at most [`MAX_COUNT`].
    pub count: i64,
    /// Set when the last occurrence is known only to lie in [`last_from`, `last`]:
    /// an age kubectl printed (`import` of its text). `None`: at `last` exactly.
    pub last_from: Option<i64>,
}

impl From<EventObservation> for EventSummary {
    /// An Event as the apiserver holds it now: each occurrence it counted
    /// falls in the reader's window (a live reader's window is the Event's
    /// own life).
    fn from(e: EventObservation) -> EventSummary {
        EventSummary {
            involved: e.involved,
            type_: e.type_,
            reason: e.reason,
            message: e.message,
            reporting: e.reporting_controller,
            host: e.source_host,
            first: e.first,
            last: e.last,
            count: e.count,
            in_window: e.count,
        }
    }
}

/// What the watch saw: a live Event (added or changed) or its deletion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventChange {
    Upsert(Box<EventObservation>),
    /// Deleted (its TTL ran out) at `at`, as last seen.
    Deleted {
        event: Box<EventObservation>,
        at: i64,
    },
}

/// The compact state of one API object: only the fields that explain an
/// incident. Two observations with equal states are the same version.
///
/// Serialised to JSON with short keys and empty fields left out; that text is
/// what the recording stores (interned, so a state seen again costs nothing).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct ObjectState {
    #[serde(rename = "gen", skip_serializing_if = "is_zero")]
    pub generation: i64,
    #[serde(rename = "ogen", skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub phase: String,
    /// A Failed Pod's `status.reason: status.message` (`Evicted: The node
    /// was low on resource: memory.`), at most 256 bytes; empty otherwise.
    #[serde(rename = "pr", skip_serializing_if = "String::is_empty")]
    pub phase_reason: String,
    #[serde(rename = "cond", skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    #[serde(rename = "ctr", skip_serializing_if = "Vec::is_empty")]
    pub containers: Vec<ContainerState>,
    #[serde(rename = "node", skip_serializing_if = "String::is_empty")]
    pub node_name: String,
    /// PersistentVolumeClaims a Pod mounts.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub claims: Vec<String>,
    /// A PersistentVolumeClaim's `spec.volumeName`: the PersistentVolume it is
    /// bound to (what a Pod's claim ties it to, e.g. a zone).
    #[serde(rename = "vol", skip_serializing_if = "String::is_empty")]
    pub volume_name: String,
    /// Replica counters by their API name (`replicas`, `readyReplicas`, `spec.replicas`, …).
    #[serde(
        rename = "rep",
        skip_serializing_if = "std::collections::BTreeMap::is_empty"
    )]
    pub replicas: std::collections::BTreeMap<String, i64>,
    /// Epoch ms of `metadata.deletionTimestamp`.
    #[serde(rename = "del", skip_serializing_if = "Option::is_none")]
    pub deletion: Option<i64>,
    #[serde(rename = "fin", skip_serializing_if = "Vec::is_empty")]
    pub finalizers: Vec<String>,
    #[serde(rename = "own", skip_serializing_if = "Vec::is_empty")]
    pub owners: Vec<OwnerRef>,
    /// 64-bit FNV-1a of the `spec` as the apiserver serialised it, hex; empty without a spec.
    #[serde(rename = "spec", skip_serializing_if = "String::is_empty")]
    pub spec_digest: String,
    /// Container images of a Pod, or of a workload's Pod template: a rollout's "to what".
    #[serde(rename = "img", skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<String>,
    /// A Node's taints: what keeps Pods off it.
    #[serde(rename = "taint", skip_serializing_if = "Vec::is_empty")]
    pub taints: Vec<Taint>,
    /// A Node's `spec.unschedulable` (cordoned).
    #[serde(rename = "cordon", skip_serializing_if = "std::ops::Not::not")]
    pub unschedulable: bool,
    /// A Pod's tolerations: which taints it accepts, less the two that
    /// admission adds to nearly every Pod (see `default_tolerations`).
    #[serde(rename = "tol", skip_serializing_if = "Vec::is_empty")]
    pub tolerations: Vec<Toleration>,
    /// The Pod has both tolerations the DefaultTolerationSeconds admission
    /// plugin adds (`node.kubernetes.io/not-ready` and `unreachable`, Exists,
    /// NoExecute, 300 s). NB: a flag, not two entries in every Pod version: about
    /// 130 bytes less per stored Pod state.
    #[serde(rename = "dtol", skip_serializing_if = "std::ops::Not::not")]
    pub default_tolerations: bool,
    /// A Pod's topology spread constraints that keep it off a Node
    /// (`whenUnsatisfiable: DoNotSchedule`): their `topologyKey`s. A Node
    /// without such a label is one the scheduler cannot place it on.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub spread: Vec<String>,
    /// A Node's labels (what node selectors and affinity match), or a Pod's
    /// (what Service, disruption budget and workload selectors match: a
    /// relabelled Pod is a new version).
    #[serde(
        rename = "lbl",
        skip_serializing_if = "std::collections::BTreeMap::is_empty"
    )]
    pub labels: std::collections::BTreeMap<String, String>,
    /// A Pod's `spec.nodeSelector`.
    #[serde(
        rename = "sel",
        skip_serializing_if = "std::collections::BTreeMap::is_empty"
    )]
    pub node_selector: std::collections::BTreeMap<String, String>,
    /// A Pod's required node affinity, or a PersistentVolume's
    /// `spec.nodeAffinity.required` (the Nodes that can reach it): terms ORed,
    /// each a list of requirements ANDed.
    #[serde(rename = "aff", skip_serializing_if = "Vec::is_empty")]
    pub node_affinity: Vec<Vec<Requirement>>,
    /// A Node's `status.allocatable`, per resource: CPU in millicores, others
    /// in units ([`crate::quantity`]).
    #[serde(
        rename = "alloc",
        skip_serializing_if = "std::collections::BTreeMap::is_empty"
    )]
    pub allocatable: std::collections::BTreeMap<String, i64>,
    /// What a Pod requests, per resource, as the scheduler sums it (containers,
    /// init containers and sidecars, overhead); units as `allocatable`.
    #[serde(
        rename = "req",
        skip_serializing_if = "std::collections::BTreeMap::is_empty"
    )]
    pub requests: std::collections::BTreeMap<String, i64>,
    /// The Node ports a Pod takes (`8080/TCP`, from its containers'
    /// `hostPort`s): two Pods asking the same one cannot share a Node.
    #[serde(rename = "hp", skip_serializing_if = "Vec::is_empty")]
    pub host_ports: Vec<String>,
    /// A Lease's holder and last renewal, kept for live reads only (`check`,
    /// the reconstruction): the recorder drops it, since a Lease renews
    /// every few seconds ([`churns`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lease: Option<LeaseSpec>,
    /// The spec field that holds the object still on purpose, when it is
    /// true: `spec.suspend` (Job, CronJob, Flux) or `spec.paused`
    /// (Deployment, Cluster API); empty otherwise.
    #[serde(rename = "halt", skip_serializing_if = "String::is_empty")]
    pub halted: String,
    /// A StatefulSet's or DaemonSet's update strategy when it holds a rollout
    /// back on purpose: `OnDelete`, or `partition=N`; empty otherwise.
    #[serde(rename = "upd", skip_serializing_if = "String::is_empty")]
    pub update_strategy: String,
    /// Epoch ms of a CronJob's `status.lastScheduleTime`.
    #[serde(rename = "lsch", skip_serializing_if = "Option::is_none")]
    pub last_schedule: Option<i64>,
    /// The Pods this object selects: a Service's `spec.selector` (each label
    /// an `In` of one value) or a PodDisruptionBudget's `spec.selector`.
    /// Empty: none (a Service without selector), or, for a budget, every Pod
    /// of its namespace (`selects_all`).
    #[serde(rename = "psel", skip_serializing_if = "Vec::is_empty")]
    pub pod_selector: Vec<Requirement>,
    /// A Service's `publishNotReadyAddresses`: its endpoints include Pods
    /// that are not ready (a headless StatefulSet's peers find each other so).
    #[serde(rename = "pnr", skip_serializing_if = "std::ops::Not::not")]
    pub publish_not_ready: bool,
    /// A PodDisruptionBudget whose selector is `{}`: every Pod of its namespace.
    #[serde(rename = "pall", skip_serializing_if = "std::ops::Not::not")]
    pub selects_all: bool,
    /// What a Pod, or a workload's Pod template, needs to exist by name
    /// (`ConfigMap/app-settings`, `Secret/tls`, `PersistentVolumeClaim/data`,
    /// `ServiceAccount/builder`): the non-optional references of its
    /// volumes, `env`, `envFrom` and `imagePullSecrets`, and a ServiceAccount
    /// other than `default`. Names only, never values. Kept for workloads and
    /// for Pods no controller owns (a controller's Pods share its template).
    #[serde(rename = "refs", skip_serializing_if = "Vec::is_empty")]
    pub refs: Vec<String>,
    /// A Pod's `spec.priority` (0 when unset), and its `priorityClassName`:
    /// who may preempt whom.
    #[serde(rename = "prio", skip_serializing_if = "is_zero")]
    pub priority: i64,
    #[serde(rename = "pc", skip_serializing_if = "String::is_empty")]
    pub priority_class: String,
    /// A Pod's `spec.restartPolicy` when it is not `Always`: `Never` or
    /// `OnFailure`, whether a container that exited is started again. Empty:
    /// `Always` (the default), or not a Pod.
    #[serde(rename = "rp", skip_serializing_if = "String::is_empty")]
    pub restart_policy: String,
    /// A Service's ports: `80`, or `80/http` when the port is named.
    #[serde(rename = "sport", skip_serializing_if = "Vec::is_empty")]
    pub service_ports: Vec<String>,
    /// The Service ports an Ingress or a Gateway API route sends to, in its
    /// own namespace: `Service/web:8080` (a route's, or an Ingress's port
    /// number), `Service/web:http` (an Ingress's port by name).
    #[serde(rename = "prefs", skip_serializing_if = "Vec::is_empty")]
    pub port_refs: Vec<String>,
    /// An admission webhook configuration's webhooks that call a Service:
    /// which, and whether a call that fails refuses the write.
    #[serde(rename = "wh", skip_serializing_if = "Vec::is_empty")]
    pub webhooks: Vec<WebhookRef>,
    /// An IngressClass marked `ingressclass.kubernetes.io/is-default-class:
    /// "true"`: the one an Ingress that names no class gets.
    #[serde(rename = "dflt", skip_serializing_if = "std::ops::Not::not")]
    pub is_default: bool,
}

/// The kinds a built-in controller of `kind` makes, each with the test of
/// the names it gives them: `<parent>-<pod-template-hash>` for a
/// Deployment's ReplicaSets, `<parent>-<5 random>` for the Pods of a
/// ReplicaSet, DaemonSet or Job, `<parent>-<ordinal>` for a StatefulSet's,
/// `<parent>-<minutes>` for a CronJob's Jobs. What ties objects known only
/// from Events (no owner reference was ever seen) to their owner: an
/// inference from names, said as one.
pub fn named_by_controller(parent_kind: &str, parent: &str, child_kind: &str, child: &str) -> bool {
    let Some(suffix) = child
        .strip_prefix(parent)
        .and_then(|rest| rest.strip_prefix('-'))
    else {
        return false;
    };
    // NB: apimachinery's rand.String and SafeEncodeString draw from these
    // (no vowels, no 0, 1 or 3): `web-7d9c6b5f4-debug` is a name someone chose.
    let alnum = |s: &str| {
        s.bytes()
            .all(|b| b"bcdfghjklmnpqrstvwxz2456789".contains(&b))
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    match (parent_kind, child_kind) {
        ("Deployment", "ReplicaSet") => (5..=10).contains(&suffix.len()) && alnum(suffix),
        ("ReplicaSet" | "DaemonSet" | "Job", "Pod") => suffix.len() == 5 && alnum(suffix),
        ("StatefulSet", "Pod") => digits(suffix),
        ("CronJob", "Job") => digits(suffix),
        _ => false,
    }
}

/// The kind a built-in controller of `kind` makes (see [`named_by_controller`]).
pub fn made_by_controller(kind: &str) -> Option<&'static str> {
    match kind {
        "Deployment" => Some("ReplicaSet"),
        "ReplicaSet" | "DaemonSet" | "Job" | "StatefulSet" => Some("Pod"),
        "CronJob" => Some("Job"),
        _ => None,
    }
}

/// An OLM v0 CatalogSource's `status.connectionState.lastObservedState`,
/// kept as a condition of this type (its status has no conditions): the
/// registry's gRPC connection, `READY`, `IDLE`, `CONNECTING` or
/// `TRANSIENT_FAILURE`, with the registry's address as its message.
pub const CONNECTION_STATE: &str = "connectionState";

/// The reference of an Ingress that names no class (neither
/// `ingressClassName` nor the older annotation): only an IngressClass marked
/// as the cluster's default serves it.
pub const DEFAULT_INGRESS_CLASS_REF: &str = "IngressClass/";

/// Whether a reference to `kind` names an object outside its referrer's
/// namespace: the classes are the cluster's.
pub fn cluster_scoped_ref(kind: &str) -> bool {
    matches!(kind, "IngressClass" | "GatewayClass")
}

/// One webhook of a Validating/MutatingWebhookConfiguration that calls a Service.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct WebhookRef {
    #[serde(rename = "n")]
    pub name: String,
    /// `namespace/name` of the Service it calls.
    #[serde(rename = "s")]
    pub service: String,
    /// `failurePolicy: Fail` (the default): a call that fails refuses the write.
    #[serde(rename = "f", skip_serializing_if = "std::ops::Not::not")]
    pub fail: bool,
}

/// What a Lease says of its holder: who, and when it last renewed.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct LeaseSpec {
    pub holder: String,
    /// Epoch ms of `spec.renewTime`.
    pub renewed: Option<i64>,
    /// `spec.leaseDurationSeconds`.
    pub duration_s: i64,
}

/// One requirement of a node selector term (`matchExpressions`, or
/// `matchFields` with the key `metadata.name`).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Requirement {
    #[serde(rename = "k")]
    pub key: String,
    /// `In`, `NotIn`, `Exists`, `DoesNotExist`, `Gt` or `Lt`.
    #[serde(rename = "op")]
    pub operator: String,
    #[serde(rename = "v", skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
}

impl ObjectState {
    /// Whether this object's Pod selector (a Service's, a disruption
    /// budget's) selects a Pod with `labels`: every requirement met, or, for
    /// a budget whose selector is `{}`, any Pod.
    pub fn selects(&self, labels: &std::collections::BTreeMap<String, String>) -> bool {
        self.selects_all
            || (!self.pod_selector.is_empty()
                && self.pod_selector.iter().all(|r| r.matches(labels, "")))
    }
}

impl Requirement {
    /// Whether a Node with `labels` and `name` meets it, as the scheduler's
    /// node affinity decides.
    pub fn matches(&self, labels: &std::collections::BTreeMap<String, String>, name: &str) -> bool {
        let value = if self.key == "metadata.name" {
            Some(name)
        } else {
            labels.get(&self.key).map(String::as_str)
        };
        let number = |s: &str| s.parse::<i64>().ok();
        match (self.operator.as_str(), value) {
            ("In", Some(v)) => self.values.iter().any(|x| x == v),
            ("NotIn", v) => v.is_none_or(|v| !self.values.iter().any(|x| x == v)),
            ("Exists", v) => v.is_some(),
            ("DoesNotExist", v) => v.is_none(),
            ("Gt", Some(v)) => number(v)
                .zip(self.values.first().and_then(|x| number(x)))
                .is_some_and(|(v, x)| v > x),
            ("Lt", Some(v)) => number(v)
                .zip(self.values.first().and_then(|x| number(x)))
                .is_some_and(|(v, x)| v < x),
            _ => false,
        }
    }

    /// As written in a manifest: `key In [a, b]`.
    pub fn text(&self) -> String {
        if self.values.is_empty() {
            format!("{} {}", self.key, self.operator)
        } else {
            format!(
                "{} {} [{}]",
                self.key,
                self.operator,
                self.values.join(", ")
            )
        }
    }
}

fn is_zero(n: &i64) -> bool {
    *n == 0
}

/// One taint of a Node.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Taint {
    #[serde(rename = "k")]
    pub key: String,
    #[serde(rename = "v", skip_serializing_if = "String::is_empty")]
    pub value: String,
    /// `NoSchedule`, `PreferNoSchedule` or `NoExecute`.
    #[serde(rename = "e")]
    pub effect: String,
    /// Epoch ms of `timeAdded` (the apiserver sets it on NoExecute taints only).
    #[serde(rename = "t", skip_serializing_if = "Option::is_none")]
    pub added: Option<i64>,
    /// The field managers whose managedFields entry owns `spec.taints` (the
    /// list is atomic: the last writer owns all of it): who put it there,
    /// not whoever else wrote the Node in the same version.
    #[serde(rename = "by", skip_serializing_if = "Vec::is_empty")]
    pub owners: Vec<String>,
    /// When the owners last wrote (their managedFields entry's time, epoch
    /// ms): evidence of when the taint was put there that predates a recording.
    #[serde(rename = "w", skip_serializing_if = "Option::is_none")]
    pub written: Option<i64>,
}

impl Taint {
    /// `key=value:Effect` (or `key:Effect`), as `kubectl taint` takes it.
    pub fn text(&self) -> String {
        if self.value.is_empty() {
            format!("{}:{}", self.key, self.effect)
        } else {
            format!("{}={}:{}", self.key, self.value, self.effect)
        }
    }

    /// Whether the scheduler's TaintToleration filter rejects Pods over it
    /// (PreferNoSchedule only lowers a node's score).
    pub fn filters(&self) -> bool {
        matches!(self.effect.as_str(), "NoSchedule" | "NoExecute")
    }
}

/// One toleration of a Pod.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Toleration {
    #[serde(rename = "k", skip_serializing_if = "String::is_empty")]
    pub key: String,
    /// `Exists`, or `Equal` (also when empty).
    #[serde(rename = "op", skip_serializing_if = "String::is_empty")]
    pub operator: String,
    #[serde(rename = "v", skip_serializing_if = "String::is_empty")]
    pub value: String,
    /// Empty: every effect.
    #[serde(rename = "e", skip_serializing_if = "String::is_empty")]
    pub effect: String,
}

/// The keys of the two tolerations admission adds (see `ObjectState::default_tolerations`).
pub const DEFAULT_TOLERATION_KEYS: [&str; 2] = [
    "node.kubernetes.io/not-ready",
    "node.kubernetes.io/unreachable",
];

impl Toleration {
    /// One of the two tolerations admission adds.
    pub fn default_for(key: &str) -> Toleration {
        Toleration {
            key: key.to_string(),
            operator: "Exists".into(),
            value: String::new(),
            effect: "NoExecute".into(),
        }
    }

    /// Whether this toleration tolerates `taint`, as `v1.Toleration.ToleratesTaint` decides.
    pub fn tolerates(&self, taint: &Taint) -> bool {
        if !self.effect.is_empty() && self.effect != taint.effect {
            return false;
        }
        // NB: an empty key with `Exists` tolerates every taint.
        if !self.key.is_empty() && self.key != taint.key {
            return false;
        }
        match self.operator.as_str() {
            "Exists" => true,
            "" | "Equal" => self.value == taint.value,
            _ => false,
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Condition {
    #[serde(rename = "t")]
    pub type_: String,
    #[serde(rename = "s")]
    pub status: String,
    #[serde(rename = "r", skip_serializing_if = "String::is_empty")]
    pub reason: String,
    #[serde(rename = "m", skip_serializing_if = "String::is_empty")]
    pub message: String,
    #[serde(rename = "og", skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Epoch ms of `lastTransitionTime`. NB: heartbeat and probe times are left out on purpose.
    #[serde(rename = "lt", skip_serializing_if = "Option::is_none")]
    pub last_transition: Option<i64>,
}

/// One container's state, as `kubectl get pod` would summarise it.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct ContainerState {
    #[serde(rename = "n")]
    pub name: String,
    /// `waiting`, `running` or `terminated` (empty when not reported yet).
    #[serde(rename = "st", skip_serializing_if = "String::is_empty")]
    pub state: String,
    /// The waiting or terminated reason.
    #[serde(rename = "r", skip_serializing_if = "String::is_empty")]
    pub reason: String,
    #[serde(rename = "x", skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    #[serde(rename = "rc", skip_serializing_if = "is_zero")]
    pub restarts: i64,
    #[serde(rename = "lr", skip_serializing_if = "String::is_empty")]
    pub last_reason: String,
    #[serde(rename = "lx", skip_serializing_if = "Option::is_none")]
    pub last_exit_code: Option<i32>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub ready: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub init: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct OwnerRef {
    #[serde(rename = "av")]
    pub api_version: String,
    #[serde(rename = "k")]
    pub kind: String,
    #[serde(rename = "n")]
    pub name: String,
    #[serde(rename = "u")]
    pub uid: String,
    #[serde(rename = "c", skip_serializing_if = "std::ops::Not::not")]
    pub controller: bool,
}

/// A write the apiserver refused, from an audit log.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Refusal {
    pub at: i64,
    pub verb: String,
    /// As versions name writers: `alice (kubectl-edit)`.
    pub user: String,
    pub group: String,
    /// Plural, e.g. `deployments`.
    pub resource: String,
    pub subresource: String,
    pub namespace: String,
    pub name: String,
    pub code: u16,
    /// `Forbidden`, `Conflict`, ...
    pub reason: String,
    pub message: String,
    /// Who refused it, as far as the entry tells (`authorization`, `admission
    /// webhook x`, `the object (conflict)`); empty when it does not.
    pub refused_by: String,
}

impl Refusal {
    /// `403 Forbidden`, or the code alone.
    pub fn status(&self) -> String {
        if self.reason.is_empty() {
            self.code.to_string()
        } else {
            format!("{} {}", self.code, self.reason)
        }
    }

    /// `update deployments/web/status`.
    pub fn request(&self) -> String {
        let mut what = format!("{} {}", self.verb, self.resource);
        if !self.name.is_empty() {
            what.push('/');
            what.push_str(&self.name);
        }
        if !self.subresource.is_empty() {
            what.push('/');
            what.push_str(&self.subresource);
        }
        what
    }
}

/// Why a write an audit log names is a [`Touch`] and not a version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TouchWhy {
    /// The entry holds no body: its policy level is Metadata.
    Metadata,
    /// A patch (or a Scale) of an object the log never showed whole: what it
    /// changed cannot be applied to anything.
    NoBase,
    /// A session into a Pod: exec, attach, port-forward.
    Session,
    /// A subresource whose body is not the object: an eviction, a binding.
    Subresource,
    /// The entry holds the request only (Request level): a body with no
    /// uid, not the object as stored.
    RequestOnly,
    /// A deletion the import also made a version of: the version says what
    /// went, this says who deleted it (a deletion changes no field that
    /// would name its writer).
    Deleter,
}

impl TouchWhy {
    pub fn code(self) -> &'static str {
        match self {
            TouchWhy::Metadata => "metadata",
            TouchWhy::NoBase => "no-base",
            TouchWhy::Session => "session",
            TouchWhy::Subresource => "subresource",
            TouchWhy::Deleter => "deleter",
            TouchWhy::RequestOnly => "request-only",
        }
    }

    pub fn from_code(code: &str) -> TouchWhy {
        match code {
            "no-base" => TouchWhy::NoBase,
            "session" => TouchWhy::Session,
            "subresource" => TouchWhy::Subresource,
            "deleter" => TouchWhy::Deleter,
            "request-only" => TouchWhy::RequestOnly,
            _ => TouchWhy::Metadata,
        }
    }

    /// Why the change itself is unknown, for people; empty when nothing is
    /// missing (a session changes no object).
    pub fn unknown(self) -> &'static str {
        match self {
            TouchWhy::Metadata => "the log holds no body (Metadata level)",
            TouchWhy::NoBase => "a patch of an object the log never showed whole",
            TouchWhy::RequestOnly => "the log holds the request, not the object (Request level)",
            TouchWhy::Session | TouchWhy::Subresource | TouchWhy::Deleter => "",
        }
    }
}

/// A write an audit log names without holding what it left (see
/// [`TouchWhy`]): who, what, on which object, when, with which answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Touch {
    pub at: i64,
    pub verb: String,
    /// As versions name writers: `carol@example.com (kubectl)`.
    pub user: String,
    pub group: String,
    /// Plural, e.g. `deployments`.
    pub resource: String,
    pub subresource: String,
    pub namespace: String,
    pub name: String,
    /// The HTTP status; 0 when the entry has none.
    pub code: u16,
    /// What the entry tells of the change (`spec.replicas → 0`); empty when nothing.
    pub detail: String,
    pub why: TouchWhy,
}

impl Touch {
    /// What was done, in a word or two: `scaled`, `deleted`, `exec into`.
    pub fn action(&self) -> String {
        let word = match (self.subresource.as_str(), self.verb.as_str()) {
            ("scale", _) => "scaled",
            ("exec", _) => "exec into",
            ("attach", _) => "attached to",
            ("portforward", _) => "port-forward to",
            ("eviction", _) => "evicted",
            ("binding", _) => "bound to a node",
            ("ephemeralcontainers", _) => "added an ephemeral container to",
            ("status", _) => "status written",
            (_, "create") => "created",
            (_, "delete") => "deleted",
            (_, "deletecollection") => "deleted (collection)",
            (_, "patch") => "patched",
            (_, "update") => "updated",
            (_, verb) => verb,
        };
        if self.subresource.is_empty()
            || matches!(
                self.subresource.as_str(),
                "scale"
                    | "exec"
                    | "attach"
                    | "portforward"
                    | "eviction"
                    | "binding"
                    | "ephemeralcontainers"
                    | "status"
            )
        {
            word.to_string()
        } else {
            format!("{} {}/{}", self.verb, self.resource, self.subresource)
        }
    }

    /// The line a timeline or `changes` shows: `scaled: spec.replicas → 0
    /// (the log holds no body (Metadata level))`; the answer when it was not
    /// a plain success.
    pub fn sentence(&self) -> String {
        let mut s = self.action();
        if !self.detail.is_empty() {
            s.push_str(": ");
            s.push_str(&self.detail);
        }
        let unknown = self.why.unknown();
        if !unknown.is_empty() {
            // NB: what a deletion changed is known (the object went); what it
            // was then is not.
            let deleted = matches!(self.verb.as_str(), "delete" | "deletecollection")
                && self.subresource.is_empty();
            s.push_str(match (deleted, self.detail.is_empty()) {
                (true, _) => " — its last state is unknown: ",
                (false, true) => " — what it changed is unknown: ",
                (false, false) => " — the rest is unknown: ",
            });
            s.push_str(unknown);
        }
        if self.code != 0 && !(200..300).contains(&self.code) || self.code == 202 {
            s.push_str(&format!(" (answered {})", self.code));
        }
        s
    }
}

/// One `managedFields` entry, without its field set.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct ManagerEntry {
    pub manager: String,
    pub operation: String,
    pub subresource: String,
    /// Epoch ms of the entry's `time` (second precision on the wire).
    pub time: Option<i64>,
    /// How many fields the entry owns (set members in `fieldsV1`): a manager
    /// taking a field from another grows, the other shrinks.
    pub fields: u32,
    /// The entry's `fieldsV1` JSON text, kept only for objects whose spec is
    /// diffed (to tell who wrote a changed field); empty otherwise.
    pub fields_v1: String,
}

impl ManagerEntry {
    /// How the recording names a writer: `manager`, plus `/subresource` when there is one.
    pub fn label(&self) -> String {
        Writer::of_manager(&self.manager, &self.subresource).label()
    }
}

/// Waiting reasons of a container that will not start by itself: a bad
/// image, a crash loop, a missing Secret or ConfigMap.
pub const BAD_WAITING: &[&str] = &[
    "CrashLoopBackOff",
    "ImagePullBackOff",
    "ErrImagePull",
    "CreateContainerConfigError",
    "CreateContainerError",
    "InvalidImageName",
    "RunContainerError",
    // NB: P001's at-once list named ErrImageNeverPull while this list left it
    // out, so it was never reported (found mapping k8sgpt's analyzers).
    "ErrImageNeverPull",
    "ImageInspectError",
    "PreStartHookError",
    "PreCreateHookError",
];

/// One observation of one object.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ObjectObservation {
    /// The object itself; `field_path` is empty.
    pub object: ObjectRef,
    pub resource_version: String,
    /// Epoch ms of `metadata.creationTimestamp`.
    pub created: Option<i64>,
    pub state: ObjectState,
    pub managers: Vec<ManagerEntry>,
    /// The JSON document a spec diff compares (see [`crate::specdiff`]); None
    /// for types whose changes are not diffed.
    pub diff_doc: Option<String>,
}

/// Whether objects of this type are rewritten by design every few seconds
/// (leader-election Leases, Endpoints and EndpointSlices following Pods):
/// their updates are counted, but only their life cycle makes versions.
pub fn churns(group: &str, kind: &str) -> bool {
    matches!(
        (group, kind),
        ("coordination.k8s.io", "Lease")
            | ("", "Endpoints")
            | ("discovery.k8s.io", "EndpointSlice")
    )
}

/// What an object watch saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectChange {
    pub seen: Seen,
    pub at: i64,
    /// Set when this is a replay of a change made while the recorder was blind
    /// (which began then): it happened some time between that and `at`.
    pub blind_since: Option<i64>,
    pub observation: Box<ObjectObservation>,
    /// Who wrote it, when the source says so (an audit log's user and field
    /// manager; empty: a write no one is named for). None: the recorder works
    /// it out of the observation's managedFields.
    pub writer: Option<String>,
    /// Where it comes from: the recorder's watch, or an imported audit log.
    pub provenance: Provenance,
}

/// A finished list of one resource type (one namespace, or all): every uid it
/// held. Tracked objects of that type that it lacks were deleted while the
/// recorder was blind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedSet {
    pub api_version: String,
    pub kind: String,
    /// Empty: the whole cluster.
    pub namespace: String,
    pub uids: Vec<String>,
    /// When the blind interval that this list ends began, if there was one.
    pub blind_since: Option<i64>,
    pub at: i64,
}

/// One API resource type, as discovery describes it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResourceType {
    /// Empty for the core group.
    pub group: String,
    pub version: String,
    pub kind: String,
    pub plural: String,
    pub singular: String,
    pub short_names: Vec<String>,
    pub namespaced: bool,
    pub verbs: Vec<String>,
}

impl ResourceType {
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// `plural.group`, or `plural` for the core group: kubectl's full name of the type.
    pub fn full_name(&self) -> String {
        if self.group.is_empty() {
            self.plural.clone()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }

    pub fn can(&self, verb: &str) -> bool {
        self.verbs.iter().any(|v| v == verb)
    }

    /// Whether `name` names this type the way kubectl accepts it: plural, singular,
    /// kind or a short name, each optionally followed by `.group` or `.version.group`.
    pub fn matches(&self, name: &str) -> bool {
        let name = name.to_ascii_lowercase();
        let (base, qualifier) = match name.split_once('.') {
            Some((b, q)) => (b.to_string(), Some(q.to_string())),
            None => (name.clone(), None),
        };
        let base_ok = base == self.plural
            || base == self.singular
            || base == self.kind.to_ascii_lowercase()
            || self.short_names.contains(&base);
        let qualifier_ok = match qualifier {
            None => true,
            Some(q) => q == self.group || q == format!("{}.{}", self.version, self.group),
        };
        base_ok && qualifier_ok
    }
}

/// A group version that discovery could not describe (an aggregated API that is down).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StaleGroup {
    pub group_version: String,
}

/// What discovery found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Discovered {
    pub types: Vec<ResourceType>,
    pub stale: Vec<StaleGroup>,
}

impl Discovered {
    /// Resolves a kubectl-style type name; core and the preferred versions win over others.
    pub fn resolve(&self, name: &str) -> Option<&ResourceType> {
        // NB: `pods` must resolve to core Pods even when a CRD elsewhere has plural `pods`:
        // kubectl prefers the core group, then the order discovery gives.
        self.types
            .iter()
            .find(|t| t.group.is_empty() && t.matches(name))
            .or_else(|| self.types.iter().find(|t| t.matches(name)))
    }
}

/// Anything a watch hands to the writer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    Event(EventChange),
    Object(ObjectChange),
    Listed(ListedSet),
    Type(TypeChange),
}

/// A resource type that began or stopped being recorded while the recorder ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeChange {
    /// kubectl's full name (`plural.group`), the key of its watches.
    pub resource: String,
    pub api_version: String,
    pub kind: String,
    pub at: i64,
    /// The type went (its CRD was removed): its objects went with it, at `at`.
    pub removed: bool,
}

/// An object as the recording knows it: identity, life span, and one state.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecordedObject {
    /// The recording's row id.
    pub id: i64,
    pub object: ObjectRef,
    pub created: Option<i64>,
    /// When an object watch first saw it; None when it is known from Events only.
    pub first_seen: Option<i64>,
    /// When it was seen deleted; with `deleted_after`, it went some time in between.
    pub deleted: Option<i64>,
    pub deleted_after: Option<i64>,
    /// Where that deletion comes from (it stores no version of its own).
    pub deletion_provenance: Provenance,
    /// The state, and when that version was recorded.
    pub state: ObjectState,
    pub state_at: i64,
    /// Who wrote that version.
    pub writers: Vec<String>,
    /// Since when `metadata.generation` has had its current value (the last
    /// spec change), when known: from the versions, or managedFields live.
    pub generation_since: Option<i64>,
}

/// One stored version of one object.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Version {
    pub at: i64,
    pub state: ObjectState,
    /// Who wrote it, each as its [`Writer::label`] (the stored text).
    pub writers: Vec<String>,
    /// Seen in a list (after a gap, or at the start) rather than as a change.
    pub listed: bool,
    /// What changed in the spec since the previous version, when it was diffed.
    pub diff: Vec<crate::specdiff::FieldChange>,
    /// Where it comes from (recorded, imported, reconstructed).
    pub provenance: Provenance,
}

/// Updates of one object in one minute by one writer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UpdateCount {
    pub object_id: i64,
    pub minute: i64,
    pub manager: String,
    pub updates: i64,
    pub versions: i64,
    pub generation: i64,
    /// The field this writer took over from another in that minute, if seen.
    pub field: Option<String>,
}

/// What the diffing of managedFields remembers of one entry: (hash of its
/// writer label and operation, time, fields owned).
pub type ManagerMark = (i64, Option<i64>, u32);

pub fn manager_key(m: &ManagerEntry) -> i64 {
    crate::units::fnv1a(&format!("{}\u{0}{}", m.label(), m.operation))
}

/// The managers that wrote this update: entries that are new, whose time
/// moved, or that own more fields than before (taking a field from another
/// manager within the same second leaves the time alone). Without a previous
/// observation, or when nothing moved, the entries with the latest time.
pub fn writers(previous: Option<&[ManagerMark]>, now: &[ManagerEntry]) -> Vec<String> {
    let mut found = previous.map_or_else(Vec::new, |p| moved_writers(p, now));
    if found.is_empty() {
        let latest = now.iter().filter_map(|m| m.time).max();
        if latest.is_some() {
            found = now
                .iter()
                .filter(|m| m.time == latest)
                .map(ManagerEntry::label)
                .collect();
        }
    }
    found.sort();
    found.dedup();
    found
}

/// The managers whose entries moved since `previous`: new, with a new time,
/// or owning more fields. No guess: empty when none did (a write through
/// the scale subresource leaves no entry of its own, issue 47).
pub fn moved_writers(previous: &[ManagerMark], now: &[ManagerEntry]) -> Vec<String> {
    let mut found: Vec<String> = now
        .iter()
        .filter(|m| {
            let key = manager_key(m);
            match previous.iter().find(|p| p.0 == key) {
                None => true,
                Some(&(_, time, fields)) => time != m.time || m.fields > fields,
            }
        })
        .map(ManagerEntry::label)
        .collect();
    found.sort();
    found.dedup();
    found
}

/// Digest of what a write through `/status` cannot change (spec, labels,
/// finalizers, owners, the deletion mark, the node binding): equal across an
/// update whose managedFields entries did not move, that update was a status
/// write, and a spec writer of the same second did not make it.
pub fn outside_status_digest(s: &ObjectState) -> i64 {
    let text = format!(
        "{}\u{0}{:?}\u{0}{:?}\u{0}{:?}\u{0}{:?}\u{0}{:?}\u{0}{:?}\u{0}{}",
        s.spec_digest,
        s.deletion,
        s.finalizers,
        s.labels,
        s.owners,
        s.images,
        s.replicas.get("spec.replicas"),
        s.node_name,
    );
    crate::units::fnv1a(&text)
}

/// Who wrote an update whose managedFields entries did not move (two writes
/// of one manager within a second; a DELETE, which leaves no entry), of the
/// `latest` entries [`writers`] falls back to: a status write was made by a
/// `/status` writer, anything else not; a deletion mark by no entry at all
/// (unknown, not the last writer).
pub fn unmoved_writers(
    latest: Vec<String>,
    status_only: bool,
    deletion_marked: bool,
) -> Vec<String> {
    if deletion_marked {
        return Vec::new();
    }
    let (status, other): (Vec<String>, Vec<String>) =
        latest.into_iter().partition(|w| w.ends_with("/status"));
    match (status_only, status.is_empty(), other.is_empty()) {
        (true, false, _) => status,
        (false, _, false) => other,
        (true, true, _) => other,
        // A spec or metadata change no spec writer can have made: unknown.
        (false, _, true) => Vec::new(),
    }
}

/// The marks of managedFields entries, for the next [`writers`] call.
pub fn manager_marks(entries: &[ManagerEntry]) -> Vec<ManagerMark> {
    entries
        .iter()
        .map(|m| (manager_key(m), m.time, m.fields))
        .collect()
}

/// Types kubectl knows without discovery, for recordings that hold none (imports, --events-only).
pub fn builtin_types() -> Discovered {
    let t =
        |group: &str, version: &str, kind: &str, plural: &str, short: &[&str], namespaced: bool| {
            ResourceType {
                group: group.into(),
                version: version.into(),
                kind: kind.into(),
                plural: plural.into(),
                singular: kind.to_ascii_lowercase(),
                short_names: short.iter().map(|s| s.to_string()).collect(),
                namespaced,
                verbs: Vec::new(),
            }
        };
    Discovered {
        types: vec![
            t("", "v1", "Pod", "pods", &["po"], true),
            t("", "v1", "Node", "nodes", &["no"], false),
            t("", "v1", "Namespace", "namespaces", &["ns"], false),
            t(
                "",
                "v1",
                "PersistentVolumeClaim",
                "persistentvolumeclaims",
                &["pvc"],
                true,
            ),
            t(
                "",
                "v1",
                "PersistentVolume",
                "persistentvolumes",
                &["pv"],
                false,
            ),
            t("", "v1", "Service", "services", &["svc"], true),
            t("", "v1", "ConfigMap", "configmaps", &["cm"], true),
            t("apps", "v1", "Deployment", "deployments", &["deploy"], true),
            t("apps", "v1", "ReplicaSet", "replicasets", &["rs"], true),
            t("apps", "v1", "StatefulSet", "statefulsets", &["sts"], true),
            t("apps", "v1", "DaemonSet", "daemonsets", &["ds"], true),
            t("batch", "v1", "Job", "jobs", &[], true),
            t("batch", "v1", "CronJob", "cronjobs", &["cj"], true),
            t(
                "autoscaling",
                "v2",
                "HorizontalPodAutoscaler",
                "horizontalpodautoscalers",
                &["hpa"],
                true,
            ),
            t(
                "policy",
                "v1",
                "PodDisruptionBudget",
                "poddisruptionbudgets",
                &["pdb"],
                true,
            ),
        ],
        stale: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(verb: &str, sub: &str, detail: &str, why: TouchWhy) -> Touch {
        Touch {
            at: 0,
            verb: verb.into(),
            user: "carol (kubectl)".into(),
            group: "apps".into(),
            resource: "deployments".into(),
            subresource: sub.into(),
            namespace: "shop".into(),
            name: "web".into(),
            code: 200,
            detail: detail.into(),
            why,
        }
    }

    /// What a touch says is what its entry proves, and what it does not is
    /// said unknown (issue 48).
    #[test]
    fn a_touch_says_what_it_did_and_what_is_unknown() {
        assert_eq!(
            touch("patch", "scale", "spec.replicas → 0", TouchWhy::NoBase).sentence(),
            "scaled: spec.replicas → 0 — the rest is unknown: a patch of an object the log never showed whole"
        );
        assert_eq!(
            touch("patch", "scale", "", TouchWhy::Metadata).sentence(),
            "scaled — what it changed is unknown: the log holds no body (Metadata level)"
        );
        assert_eq!(
            touch("delete", "", "", TouchWhy::Metadata).sentence(),
            "deleted — its last state is unknown: the log holds no body (Metadata level)"
        );
        let mut exec = touch("get", "exec", "", TouchWhy::Session);
        exec.code = 101;
        assert_eq!(exec.sentence(), "exec into (answered 101)");
        let mut accepted = touch(
            "delete",
            "",
            "propagationPolicy Foreground",
            TouchWhy::Deleter,
        );
        accepted.code = 202;
        assert_eq!(
            accepted.sentence(),
            "deleted: propagationPolicy Foreground (answered 202)"
        );
    }

    fn entry(manager: &str, time: i64, fields: u32) -> ManagerEntry {
        ManagerEntry {
            manager: manager.into(),
            operation: "Update".into(),
            subresource: String::new(),
            time: Some(time),
            fields,
            fields_v1: String::new(),
        }
    }

    fn remembered(entries: &[ManagerEntry]) -> Vec<(i64, Option<i64>, u32)> {
        entries
            .iter()
            .map(|m| (manager_key(m), m.time, m.fields))
            .collect()
    }

    #[test]
    fn the_writer_is_the_entry_whose_time_moved() {
        let before = [
            entry("kubectl", 1000, 5),
            entry("kube-controller-manager", 2000, 9),
        ];
        let after = [
            entry("kubectl", 1000, 5),
            entry("kube-controller-manager", 3000, 9),
        ];
        assert_eq!(
            writers(Some(&remembered(&before)), &after),
            vec!["kube-controller-manager"]
        );
    }

    #[test]
    fn taking_a_field_within_the_same_second_still_names_the_taker() {
        let before = [entry("a", 1000, 3), entry("b", 1000, 4)];
        let after = [entry("a", 1000, 4), entry("b", 1000, 3)];
        assert_eq!(writers(Some(&remembered(&before)), &after), vec!["a"]);
    }

    #[test]
    fn a_new_entry_is_a_writer_and_without_history_the_latest_is() {
        let before = [entry("a", 1000, 3)];
        let after = [entry("a", 1000, 3), entry("b", 1000, 1)];
        assert_eq!(writers(Some(&remembered(&before)), &after), vec!["b"]);
        assert_eq!(
            writers(None, &[entry("a", 1000, 3), entry("b", 2000, 1)]),
            vec!["b"]
        );
        assert!(writers(None, &[]).is_empty());
    }

    #[test]
    fn the_names_controllers_give_tie_what_only_events_know() {
        assert!(named_by_controller(
            "Deployment",
            "web",
            "ReplicaSet",
            "web-7d9c6b5f4"
        ));
        assert!(named_by_controller(
            "ReplicaSet",
            "web-7d9c6b5f4",
            "Pod",
            "web-7d9c6b5f4-2xkqp"
        ));
        assert!(named_by_controller("StatefulSet", "db", "Pod", "db-0"));
        assert!(named_by_controller(
            "CronJob",
            "nightly",
            "Job",
            "nightly-29400001"
        ));
        // Another Deployment's ReplicaSet whose name starts the same, a
        // hand-made Pod, and a StatefulSet's Pod of another set are not.
        assert!(!named_by_controller(
            "Deployment",
            "web",
            "ReplicaSet",
            "web-api-7d9c6b5f4"
        ));
        assert!(!named_by_controller(
            "ReplicaSet",
            "web-7d9c6b5f4",
            "Pod",
            "web-7d9c6b5f4-debug"
        ));
        assert!(!named_by_controller(
            "StatefulSet",
            "db",
            "Pod",
            "db-backup-0"
        ));
        assert!(!named_by_controller(
            "Deployment",
            "web",
            "Pod",
            "web-7d9c6b5f4"
        ));
    }
}
