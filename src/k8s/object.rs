//! Any API object as it comes off the wire, decoded into small structs that
//! hold only what [`ObjectState`] needs, and converted into an
//! [`ObjectObservation`].
//!
//! NB: `spec` and `status` arrive as raw JSON text and are decoded a second
//! time into small structs. The raw spec is what the spec digest hashes (the
//! apiserver serialises it deterministically), and a custom resource whose
//! status does not fit the usual shape costs us its status fields, never the
//! object. The full k8s-openapi `Pod` took 29 s and 10 GB for 150k Pods; these
//! structs keep a Pod to a few hundred bytes while it is converted.

use std::borrow::Cow;
use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::ApiResource;
use serde::Deserialize;
use serde_json::value::RawValue;

use super::event::{k8s_time, parse_k8s_time};
use crate::model::{
    Condition, ContainerState, ManagerEntry, ObjectObservation, ObjectRef, ObjectState, OwnerRef,
    Requirement, Taint, Toleration,
};

/// Condition messages longer than this are cut: some controllers put whole logs there.
const MAX_CONDITION_MESSAGE: usize = 2048;

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct WireObject {
    pub api_version: Option<String>,
    pub kind: Option<String>,
    #[serde(deserialize_with = "slim_meta")]
    pub metadata: ObjectMeta,
    pub spec: Option<Box<RawValue>>,
    pub status: Option<Box<RawValue>>,
    /// A ConfigMap's data: only its key names and a digest per value are kept.
    pub data: Option<BTreeMap<String, Box<RawValue>>>,
    pub binary_data: Option<BTreeMap<String, Box<RawValue>>>,
    /// An admission webhook configuration's webhooks (it has no spec).
    pub webhooks: Option<Box<RawValue>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct SlimMeta {
    name: Option<String>,
    namespace: Option<String>,
    uid: Option<String>,
    resource_version: Option<String>,
    generation: Option<i64>,
    creation_timestamp: Option<String>,
    deletion_timestamp: Option<String>,
    finalizers: Option<Vec<String>>,
    owner_references: Option<Vec<SlimOwner>>,
    managed_fields: Vec<SlimManaged>,
    /// Kept for Nodes only (what selectors match); other kinds drop them.
    labels: Option<BTreeMap<String, String>>,
    /// Only the annotations a check reads; every other one is skipped unread.
    annotations: Option<SlimAnnotations>,
}

/// The annotations a check reads (issue 47): an Ingress's legacy class, and
/// whether an IngressClass is the cluster's default. NB: not the whole map,
/// which often holds a whole `last-applied-configuration`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct SlimAnnotations {
    #[serde(rename = "kubernetes.io/ingress.class")]
    ingress_class: Option<String>,
    #[serde(rename = "ingressclass.kubernetes.io/is-default-class")]
    default_class: Option<String>,
}

/// The annotation that makes an IngressClass the one a classless Ingress gets.
pub const DEFAULT_CLASS_ANNOTATION: &str = "ingressclass.kubernetes.io/is-default-class";

impl SlimAnnotations {
    fn into_map(self) -> Option<BTreeMap<String, String>> {
        let map: BTreeMap<String, String> = [
            (super::refs::INGRESS_CLASS_ANNOTATION, self.ingress_class),
            (DEFAULT_CLASS_ANNOTATION, self.default_class),
        ]
        .into_iter()
        .filter_map(|(k, v)| Some((k.to_string(), v?)))
        .collect();
        (!map.is_empty()).then_some(map)
    }
}

/// Only the annotations [`SlimAnnotations`] keeps, from a whole map.
fn kept_annotations(all: Option<BTreeMap<String, String>>) -> Option<BTreeMap<String, String>> {
    let mut all = all?;
    all.retain(|k, _| k == super::refs::INGRESS_CLASS_ANNOTATION || k == DEFAULT_CLASS_ANNOTATION);
    (!all.is_empty()).then_some(all)
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct SlimOwner {
    api_version: String,
    kind: String,
    name: String,
    uid: String,
    controller: Option<bool>,
}

/// A managedFields entry without `fieldsV1`, which is skipped unread.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct SlimManaged {
    manager: String,
    operation: String,
    subresource: String,
    time: Option<String>,
    #[serde(rename = "fieldsV1")]
    fields_v1: Option<Box<RawValue>>,
}

/// Members of a managedFields field set: every `f:`, `k:`, `v:` and `i:` key.
fn field_count(raw: &Option<Box<RawValue>>) -> u32 {
    raw.as_deref().map_or(0, |r| {
        let text = r.get();
        ["\"f:", "\"k:", "\"v:", "\"i:"]
            .iter()
            .map(|p| text.matches(p).count() as u32)
            .sum()
    })
}

// NB: kube's `Resource` wants an `ObjectMeta`, so the slim fields are put back
// into one; managedFields go into it without their field sets.
fn slim_meta<'de, D: serde::Deserializer<'de>>(d: D) -> Result<ObjectMeta, D::Error> {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ManagedFieldsEntry, OwnerReference};
    let m = Option::<SlimMeta>::deserialize(d)?.unwrap_or_default();
    Ok(ObjectMeta {
        name: m.name,
        namespace: m.namespace,
        uid: m.uid,
        resource_version: m.resource_version,
        generation: m.generation,
        creation_timestamp: k8s_time(&m.creation_timestamp),
        deletion_timestamp: k8s_time(&m.deletion_timestamp),
        finalizers: m.finalizers,
        labels: m.labels,
        annotations: m.annotations.and_then(SlimAnnotations::into_map),
        owner_references: m.owner_references.map(|owners| {
            owners
                .into_iter()
                .map(|o| OwnerReference {
                    api_version: o.api_version,
                    kind: o.kind,
                    name: o.name,
                    uid: o.uid,
                    controller: o.controller,
                    block_owner_deletion: None,
                })
                .collect()
        }),
        managed_fields: Some(
            m.managed_fields
                .into_iter()
                .map(|f| ManagedFieldsEntry {
                    manager: Some(f.manager),
                    operation: Some(f.operation),
                    subresource: Some(f.subresource).filter(|s| !s.is_empty()),
                    time: k8s_time(&f.time),
                    // NB: the size of the field set travels in fieldsType; the set
                    // itself, as text, in fieldsV1 (into_observation keeps it only
                    // for objects whose spec is diffed).
                    fields_type: Some(field_count(&f.fields_v1).to_string()),
                    fields_v1: f.fields_v1.map(|raw| {
                        k8s_openapi::apimachinery::pkg::apis::meta::v1::FieldsV1(
                            serde_json::Value::String(Box::<str>::from(raw).into_string()),
                        )
                    }),
                    ..ManagedFieldsEntry::default()
                })
                .collect(),
        ),
        ..ObjectMeta::default()
    })
}

impl kube::Resource for WireObject {
    type DynamicType = ApiResource;
    type Scope = kube::core::DynamicResourceScope;

    fn kind(dt: &ApiResource) -> Cow<'_, str> {
        dt.kind.as_str().into()
    }
    fn group(dt: &ApiResource) -> Cow<'_, str> {
        dt.group.as_str().into()
    }
    fn version(dt: &ApiResource) -> Cow<'_, str> {
        dt.version.as_str().into()
    }
    fn api_version(dt: &ApiResource) -> Cow<'_, str> {
        dt.api_version.as_str().into()
    }
    fn plural(dt: &ApiResource) -> Cow<'_, str> {
        dt.plural.as_str().into()
    }
    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct SlimSpec {
    node_name: String,
    volumes: Vec<SlimVolume>,
    containers: Vec<SlimContainer>,
    init_containers: Vec<SlimContainer>,
    replicas: Option<i64>,
    parallelism: Option<i64>,
    completions: Option<i64>,
    template: Option<SlimTemplate>,
    /// A Job's, CronJob's or custom resource's (Flux) `spec.suspend`.
    suspend: Option<bool>,
    /// A Deployment's or custom resource's (Cluster API, Argo Rollouts) `spec.paused`.
    paused: Option<bool>,
    /// A StatefulSet's or DaemonSet's `spec.updateStrategy`. NB: any shape (a
    /// custom type's may be a string): a mismatch must not lose the whole spec.
    update_strategy: Option<serde_json::Value>,
}

/// What a StatefulSet's or DaemonSet's update strategy holds back on purpose:
/// `OnDelete` (a Pod takes the new template only when deleted), or
/// `partition=N` (a StatefulSet's ordinals below N keep the old revision).
fn update_strategy(v: Option<&serde_json::Value>) -> String {
    let Some(v) = v else { return String::new() };
    if v["type"] == "OnDelete" {
        return "OnDelete".to_string();
    }
    match v["rollingUpdate"]["partition"].as_i64() {
        Some(p) if p > 0 => format!("partition={p}"),
        _ => String::new(),
    }
}

/// What scheduling reads of a Node's or a Pod's spec. Decoded apart from
/// [`SlimSpec`], and only for Nodes and Pods: a custom type whose spec has a
/// `taints` of another shape must not lose the rest of its spec.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct SlimSchedulingSpec {
    taints: Vec<SlimTaint>,
    unschedulable: bool,
    tolerations: Vec<SlimToleration>,
    node_selector: BTreeMap<String, String>,
    affinity: SlimAffinity,
    topology_spread_constraints: Vec<SlimSpread>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct SlimSpread {
    topology_key: String,
    when_unsatisfiable: String,
}

/// What scheduling reads of a claim or a volume, decoded only for
/// PersistentVolumeClaims and PersistentVolumes (as [`SlimSchedulingSpec`]).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct SlimVolumeSpec {
    volume_name: String,
    node_affinity: SlimVolumeNodeAffinity,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct SlimVolumeNodeAffinity {
    required: SlimNodeSelector,
}

/// Node selector terms as the model keeps them: terms ORed, each one's
/// `matchExpressions` and `matchFields` ANDed.
fn terms(selector: SlimNodeSelector) -> Vec<Vec<Requirement>> {
    selector
        .node_selector_terms
        .into_iter()
        .map(|t| {
            t.match_expressions
                .into_iter()
                .chain(t.match_fields)
                .map(|r| Requirement {
                    key: r.key,
                    operator: r.operator,
                    values: r.values,
                })
                .collect()
        })
        .collect()
}

/// What a Pod requests of a Node, decoded only for Pods (as
/// [`SlimSchedulingSpec`]), and a Node's allocatable, only for Nodes.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct SlimPodResources {
    containers: Vec<SlimResourceContainer>,
    init_containers: Vec<SlimResourceContainer>,
    overhead: BTreeMap<String, String>,
    restart_policy: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct SlimResourceContainer {
    resources: SlimRequests,
    restart_policy: Option<String>,
    ports: Vec<SlimPort>,
}

/// A container port; only one with a `hostPort` takes a port of the Node.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct SlimPort {
    host_port: Option<i64>,
    protocol: Option<String>,
}

/// The Node ports a Pod takes (`8080/TCP`), as the scheduler's NodePorts
/// filter compares them: every container's and init container's `hostPort`.
fn host_ports(spec: &SlimPodResources) -> Vec<String> {
    let mut out: Vec<String> = spec
        .containers
        .iter()
        .chain(&spec.init_containers)
        .flat_map(|c| &c.ports)
        .filter_map(|p| {
            let port = p.host_port.filter(|p| *p > 0)?;
            Some(format!("{port}/{}", p.protocol.as_deref().unwrap_or("TCP")))
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct SlimRequests {
    requests: BTreeMap<String, String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct SlimNodeStatus {
    allocatable: BTreeMap<String, String>,
}

/// Quantities per resource as integers ([`crate::quantity`]); what does not
/// parse is left out.
fn amounts(quantities: &BTreeMap<String, String>) -> BTreeMap<String, i128> {
    quantities
        .iter()
        .filter_map(|(r, q)| crate::quantity::parse(r, q).map(|v| (r.clone(), v)))
        .collect()
}

fn clamp(values: BTreeMap<String, i128>) -> BTreeMap<String, i64> {
    values
        .into_iter()
        .map(|(r, v)| (r, v.clamp(i64::MIN as i128, i64::MAX as i128) as i64))
        .collect()
}

/// A Pod's requests as the scheduler sums them (`resourcehelper.PodRequests`):
/// the containers plus the sidecars (init containers with `restartPolicy:
/// Always`), or, when larger, each other init container plus the sidecars
/// started before it; then the overhead.
fn pod_requests(spec: &SlimPodResources) -> BTreeMap<String, i64> {
    let add = |into: &mut BTreeMap<String, i128>, from: &BTreeMap<String, i128>| {
        for (r, v) in from {
            *into.entry(r.clone()).or_default() += v;
        }
    };
    let mut sum: BTreeMap<String, i128> = BTreeMap::new();
    for c in &spec.containers {
        add(&mut sum, &amounts(&c.resources.requests));
    }
    let mut sidecars: BTreeMap<String, i128> = BTreeMap::new();
    let mut init_peak: BTreeMap<String, i128> = BTreeMap::new();
    for c in &spec.init_containers {
        let own = amounts(&c.resources.requests);
        if c.restart_policy.as_deref() == Some("Always") {
            add(&mut sum, &own);
            add(&mut sidecars, &own);
        } else {
            let mut during = sidecars.clone();
            add(&mut during, &own);
            for (r, v) in during {
                let peak = init_peak.entry(r).or_default();
                *peak = (*peak).max(v);
            }
        }
    }
    for (r, v) in init_peak {
        let total = sum.entry(r).or_default();
        *total = (*total).max(v);
    }
    add(&mut sum, &amounts(&spec.overhead));
    sum.retain(|_, v| *v != 0);
    clamp(sum)
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct SlimAffinity {
    node_affinity: SlimNodeAffinity,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct SlimNodeAffinity {
    required_during_scheduling_ignored_during_execution: SlimNodeSelector,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct SlimNodeSelector {
    node_selector_terms: Vec<SlimTerm>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct SlimTerm {
    match_expressions: Vec<SlimRequirement>,
    match_fields: Vec<SlimRequirement>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct SlimRequirement {
    key: String,
    operator: String,
    values: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct SlimTaint {
    key: String,
    value: String,
    effect: String,
    time_added: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct SlimToleration {
    key: String,
    operator: String,
    value: String,
    effect: String,
    toleration_seconds: Option<i64>,
}

impl SlimToleration {
    /// Whether this is one of the two tolerations DefaultTolerationSeconds adds.
    fn is_default(&self) -> bool {
        crate::model::DEFAULT_TOLERATION_KEYS.contains(&self.key.as_str())
            && self.operator == "Exists"
            && self.value.is_empty()
            && self.effect == "NoExecute"
            && self.toleration_seconds == Some(300)
    }
}

/// A Pod's tolerations, with the two admission defaults folded into a flag
/// when both are there.
fn tolerations(all: Vec<SlimToleration>) -> (Vec<Toleration>, bool) {
    let defaults = all.iter().filter(|t| t.is_default()).count();
    let fold = defaults == crate::model::DEFAULT_TOLERATION_KEYS.len();
    let kept = all
        .into_iter()
        .filter(|t| !(fold && t.is_default()))
        .map(|t| Toleration {
            key: t.key,
            operator: t.operator,
            value: t.value,
            effect: t.effect,
        })
        .collect();
    (kept, fold)
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct SlimTemplate {
    spec: Option<SlimPodSpec>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct SlimPodSpec {
    containers: Vec<SlimContainer>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct SlimContainer {
    image: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct SlimVolume {
    persistent_volume_claim: Option<SlimClaim>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct SlimClaim {
    claim_name: String,
}

/// Replica-like counters of the built-in workloads, HPAs, PDBs and Jobs.
const COUNTERS: &[&str] = &[
    "replicas",
    "readyReplicas",
    "updatedReplicas",
    "availableReplicas",
    "unavailableReplicas",
    "currentReplicas",
    "desiredReplicas",
    "currentNumberScheduled",
    "desiredNumberScheduled",
    "numberReady",
    "numberAvailable",
    "numberUnavailable",
    "numberMisscheduled",
    "updatedNumberScheduled",
    "active",
    "succeeded",
    "failed",
    "ready",
    "currentHealthy",
    "desiredHealthy",
    "disruptionsAllowed",
    "expectedPods",
];

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct SlimStatus {
    observed_generation: Option<i64>,
    /// A CronJob's last schedule.
    last_schedule_time: Option<String>,
    phase: Option<String>,
    /// A Pod's `status.reason` and `message` (`Evicted`: "The node was low
    /// on resource: memory…"), kept when it Failed.
    reason: Option<String>,
    message: Option<String>,
    conditions: Vec<SlimCondition>,
    /// A Gateway API route's status: its conditions are per parent Gateway.
    parents: Vec<SlimRouteParent>,
    /// An OLM v0 CatalogSource's connection to its registry.
    connection_state: Option<SlimConnectionState>,
    container_statuses: Vec<SlimContainerStatus>,
    init_container_statuses: Vec<SlimContainerStatus>,
    // NB: every counter in COUNTERS; serde needs them spelled out.
    replicas: Option<i64>,
    ready_replicas: Option<i64>,
    updated_replicas: Option<i64>,
    available_replicas: Option<i64>,
    unavailable_replicas: Option<i64>,
    current_replicas: Option<i64>,
    desired_replicas: Option<i64>,
    current_number_scheduled: Option<i64>,
    desired_number_scheduled: Option<i64>,
    number_ready: Option<i64>,
    number_available: Option<i64>,
    number_unavailable: Option<i64>,
    number_misscheduled: Option<i64>,
    updated_number_scheduled: Option<i64>,
    active: Option<i64>,
    succeeded: Option<i64>,
    failed: Option<i64>,
    ready: Option<i64>,
    current_healthy: Option<i64>,
    desired_healthy: Option<i64>,
    disruptions_allowed: Option<i64>,
    expected_pods: Option<i64>,
}

impl SlimStatus {
    fn counters(&self) -> [Option<i64>; 22] {
        [
            self.replicas,
            self.ready_replicas,
            self.updated_replicas,
            self.available_replicas,
            self.unavailable_replicas,
            self.current_replicas,
            self.desired_replicas,
            self.current_number_scheduled,
            self.desired_number_scheduled,
            self.number_ready,
            self.number_available,
            self.number_unavailable,
            self.number_misscheduled,
            self.updated_number_scheduled,
            self.active,
            self.succeeded,
            self.failed,
            self.ready,
            self.current_healthy,
            self.desired_healthy,
            self.disruptions_allowed,
            self.expected_pods,
        ]
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct SlimCondition {
    #[serde(rename = "type")]
    type_: String,
    status: String,
    reason: String,
    message: String,
    observed_generation: Option<i64>,
    last_transition_time: Option<String>,
}

/// An OLM v0 CatalogSource's `status.connectionState`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct SlimConnectionState {
    address: String,
    last_observed_state: String,
}

/// One parent of a route's `status.parents`: which Gateway, and what its
/// controller says of the route there (`Accepted`, `ResolvedRefs`).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct SlimRouteParent {
    parent_ref: SlimParentRef,
    conditions: Vec<SlimCondition>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct SlimParentRef {
    kind: Option<String>,
    namespace: Option<String>,
    name: String,
    section_name: Option<String>,
}

impl SlimParentRef {
    /// `Gateway web-gw` (`Gateway infra/web-gw, listener https`): said before
    /// the condition's message, since a route's conditions are per parent.
    fn text(&self) -> String {
        let mut t = format!("{} ", self.kind.as_deref().unwrap_or("Gateway"));
        if let Some(ns) = self.namespace.as_deref().filter(|n| !n.is_empty()) {
            t.push_str(ns);
            t.push('/');
        }
        t.push_str(&self.name);
        if let Some(l) = self.section_name.as_deref().filter(|l| !l.is_empty()) {
            t.push_str(", listener ");
            t.push_str(l);
        }
        t
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct SlimContainerStatus {
    name: String,
    ready: bool,
    restart_count: i64,
    state: SlimState,
    last_state: SlimState,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct SlimState {
    waiting: Option<SlimReason>,
    running: Option<serde::de::IgnoredAny>,
    terminated: Option<SlimReason>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct SlimReason {
    reason: String,
    exit_code: Option<i32>,
}

fn decode<T: Default + serde::de::DeserializeOwned>(raw: &Option<Box<RawValue>>) -> T {
    let Some(raw) = raw.as_deref() else {
        return T::default();
    };
    match serde_json::from_str(raw.get()) {
        Ok(t) => t,
        // NB: one field of another shape must not cost the rest: a custom
        // resource's `status.ready: true` or `replicas: "3"`, a CronJob's
        // `status.active` (a list, where a Job's is a count) dropped the
        // whole status, its conditions with it.
        Err(_) => lenient(raw.get()),
    }
}

/// `text` decoded without the fields (and the list items) that do not fit `T`.
fn lenient<T: Default + serde::de::DeserializeOwned>(text: &str) -> T {
    let Ok(serde_json::Value::Object(map)) = serde_json::from_str::<serde_json::Value>(text) else {
        return T::default();
    };
    let fits = |key: &str, value: &serde_json::Value| {
        let mut one = serde_json::Map::new();
        one.insert(key.to_string(), value.clone());
        serde_json::from_value::<T>(serde_json::Value::Object(one)).is_ok()
    };
    let mut kept = serde_json::Map::new();
    for (key, value) in map {
        if fits(&key, &value) {
            kept.insert(key, value);
        } else if let serde_json::Value::Array(items) = value
            && fits(&key, &serde_json::Value::Array(Vec::new()))
        {
            let items: Vec<serde_json::Value> = items
                .into_iter()
                .filter(|item| fits(&key, &serde_json::Value::Array(vec![item.clone()])))
                .collect();
            kept.insert(key, serde_json::Value::Array(items));
        }
    }
    serde_json::from_value(serde_json::Value::Object(kept)).unwrap_or_default()
}

/// Init containers first, then the others, as a Pod lists them.
fn containers(
    init: Vec<SlimContainerStatus>,
    main: Vec<SlimContainerStatus>,
) -> Vec<ContainerState> {
    init.into_iter()
        .map(|c| container(c, true))
        .chain(main.into_iter().map(|c| container(c, false)))
        .collect()
}

/// The field that holds a workload back by its own choice, if one does.
fn halted(suspend: Option<bool>, paused: Option<bool>) -> &'static str {
    match (suspend, paused) {
        (Some(true), _) => "spec.suspend",
        (_, Some(true)) => "spec.paused",
        _ => "",
    }
}

fn container(c: SlimContainerStatus, init: bool) -> ContainerState {
    let (state, reason, exit_code) = if let Some(w) = c.state.waiting {
        ("waiting", w.reason, None)
    } else if let Some(t) = c.state.terminated {
        ("terminated", t.reason, t.exit_code)
    } else if c.state.running.is_some() {
        ("running", String::new(), None)
    } else {
        ("", String::new(), None)
    };
    let (last_reason, last_exit_code) = match c.last_state.terminated {
        Some(t) => (t.reason, t.exit_code),
        None => (String::new(), None),
    };
    ContainerState {
        name: c.name,
        state: state.to_string(),
        reason,
        exit_code,
        restarts: c.restart_count,
        last_reason,
        last_exit_code,
        ready: c.ready,
        init,
    }
}

/// What decoding keeps beyond the default.
#[derive(Debug, Clone, Copy, Default)]
pub struct Decode {
    /// `record --configmap-values`: a ConfigMap's `data` values enter its
    /// diff document as they are, so that its diffs show old → new (cut at
    /// [`crate::specdiff::MAX_VALUE`] bytes). Off, only a digest per value.
    pub configmap_values: bool,
    /// A Lease's holder and renewal (live reads: `check`, the
    /// reconstruction). Off for the recorder: a Lease renews every few
    /// seconds, and only its life cycle makes versions.
    pub lease: bool,
}

/// What the leader-election checks read of a Lease's spec.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct SlimLeaseSpec {
    holder_identity: Option<String>,
    renew_time: Option<String>,
    lease_duration_seconds: Option<i64>,
}

impl WireObject {
    /// The plain observation of this object; `resource` names its type
    /// (list items carry no apiVersion/kind of their own).
    pub fn into_observation(self, resource: &ApiResource) -> ObjectObservation {
        self.into_observation_with(resource, Decode::default())
    }

    /// Where Pods may run, as this object says it: a Pod's or Node's
    /// scheduling fields (tolerations, selectors, spread, affinity, taints,
    /// requests, host ports, allocatable), a volume's node affinity and
    /// binding; the rest of the state is left default.
    fn placement(&self, resource: &ApiResource, meta: &ObjectMeta) -> ObjectState {
        let core = resource.group.is_empty();
        let kind = resource.kind.as_str();
        let mut scheduling: SlimSchedulingSpec = if core && matches!(kind, "Node" | "Pod") {
            decode(&self.spec)
        } else {
            SlimSchedulingSpec::default()
        };
        let (tolerations, default_tolerations) =
            tolerations(std::mem::take(&mut scheduling.tolerations));
        let volume: SlimVolumeSpec =
            if core && matches!(kind, "PersistentVolumeClaim" | "PersistentVolume") {
                decode(&self.spec)
            } else {
                SlimVolumeSpec::default()
            };
        let (requests, host_ports, restart_policy) = if core && kind == "Pod" {
            let spec: SlimPodResources = decode(&self.spec);
            let policy = spec.restart_policy.clone().filter(|p| p != "Always");
            (
                pod_requests(&spec),
                host_ports(&spec),
                policy.unwrap_or_default(),
            )
        } else {
            (BTreeMap::new(), Vec::new(), String::new())
        };
        let allocatable = if core && kind == "Node" {
            let node: SlimNodeStatus = decode(&self.status);
            clamp(amounts(&node.allocatable))
        } else {
            BTreeMap::new()
        };
        let (taint_owners, taint_written) = if core && kind == "Node" {
            taint_writers(meta)
        } else {
            (Vec::new(), None)
        };
        // NB: a Pod's, or a PersistentVolume's; each decodes only the other empty.
        let mut node_affinity = terms(
            scheduling
                .affinity
                .node_affinity
                .required_during_scheduling_ignored_during_execution,
        );
        node_affinity.extend(terms(volume.node_affinity.required));
        ObjectState {
            taints: taints(scheduling.taints, &taint_owners, taint_written),
            unschedulable: scheduling.unschedulable,
            node_selector: scheduling.node_selector,
            spread: spread(scheduling.topology_spread_constraints),
            node_affinity,
            volume_name: volume.volume_name,
            tolerations,
            default_tolerations,
            allocatable,
            requests,
            host_ports,
            restart_policy,
            ..ObjectState::default()
        }
    }

    /// [`WireObject::into_observation`], keeping what `keep` asks for.
    pub fn into_observation_with(self, resource: &ApiResource, keep: Decode) -> ObjectObservation {
        let placement = self.placement(resource, &self.metadata);
        let meta = self.metadata;
        let spec: SlimSpec = decode(&self.spec);
        let core = resource.group.is_empty();
        let mut status: SlimStatus = decode(&self.status);
        let node_labels = (core && resource.kind == "Node")
            .then_some(meta.labels.as_ref())
            .flatten();
        // NB: a Pod's labels are what Services and budgets select; a Node's
        // also enter its diff document, a Pod's do not (Pods have none).
        let kept_labels = (core && matches!(resource.kind.as_str(), "Node" | "Pod"))
            .then_some(meta.labels.as_ref())
            .flatten();
        let controlled = meta
            .owner_references
            .iter()
            .flatten()
            .any(|o| o.controller == Some(true));
        let related = super::refs::read(
            &resource.group,
            &resource.kind,
            self.spec.as_deref(),
            controlled,
            meta.annotations.as_ref(),
        );
        let is_default = resource.group == "networking.k8s.io"
            && resource.kind == "IngressClass"
            && meta
                .annotations
                .as_ref()
                .and_then(|a| a.get(DEFAULT_CLASS_ANNOTATION))
                .is_some_and(|v| v == "true");
        let churns = crate::model::churns(&resource.group, &resource.kind);
        let diff_doc = if churns {
            None
        } else {
            diff_doc(
                resource,
                self.spec.as_deref(),
                node_labels,
                self.data,
                self.binary_data,
                keep,
            )
        };
        let replicas = counters(&status, &spec);
        let phase_reason = phase_reason(&status);
        let images = images(spec.template, spec.init_containers, spec.containers);
        let containers = containers(
            std::mem::take(&mut status.init_container_statuses),
            std::mem::take(&mut status.container_statuses),
        );
        let conditions = conditions(
            status.conditions,
            status.parents,
            status
                .connection_state
                .filter(|_| resource.group == "operators.coreos.com"),
        );
        let state = ObjectState {
            lease: None,
            halted: halted(spec.suspend, spec.paused).to_string(),
            update_strategy: update_strategy(spec.update_strategy.as_ref()),
            last_schedule: status
                .last_schedule_time
                .as_deref()
                .and_then(parse_k8s_time),
            generation: meta.generation.unwrap_or(0),
            observed_generation: status.observed_generation,
            phase_reason,
            phase: status.phase.unwrap_or_default(),
            conditions,
            containers,
            node_name: spec.node_name,
            claims: spec
                .volumes
                .into_iter()
                .filter_map(|v| v.persistent_volume_claim.map(|c| c.claim_name))
                .collect(),
            replicas,
            deletion: meta.deletion_timestamp.map(|t| t.0.as_millisecond()),
            finalizers: meta.finalizers.unwrap_or_default(),
            owners: owners(meta.owner_references.unwrap_or_default()),
            spec_digest: match (&self.spec, &diff_doc) {
                (Some(raw), _) => format!("{:016x}", crate::units::fnv1a(raw.get()) as u64),
                // A ConfigMap's data stands for its spec.
                (None, Some(doc)) if core && resource.kind == "ConfigMap" => {
                    format!("{:016x}", crate::units::fnv1a(doc) as u64)
                }
                _ => String::new(),
            },
            images,
            labels: kept_labels.cloned().unwrap_or_default(),
            pod_selector: related.pod_selector,
            publish_not_ready: related.publish_not_ready,
            selects_all: related.selects_all,
            refs: related.refs,
            priority: related.priority,
            priority_class: related.priority_class,
            service_ports: related.ports,
            port_refs: related.port_refs,
            webhooks: if resource.group == "admissionregistration.k8s.io" {
                super::refs::webhooks(self.webhooks.as_deref())
            } else {
                Vec::new()
            },
            is_default,
            ..placement
        };
        let lease =
            (keep.lease && resource.group == "coordination.k8s.io" && resource.kind == "Lease")
                .then(|| lease(&self.spec));
        let state = if churns {
            // NB: a Lease renews every few seconds: only its life cycle makes versions,
            // its updates are still counted per minute and writer.
            ObjectState {
                deletion: state.deletion,
                finalizers: state.finalizers,
                owners: state.owners,
                lease,
                ..ObjectState::default()
            }
        } else {
            state
        };
        let managers = managers(meta.managed_fields.unwrap_or_default(), diff_doc.is_some());
        ObjectObservation {
            object: ObjectRef {
                api_version: resource.api_version.clone(),
                kind: resource.kind.clone(),
                namespace: meta.namespace.unwrap_or_default(),
                name: meta.name.unwrap_or_default(),
                uid: meta.uid.unwrap_or_default(),
                field_path: String::new(),
            },
            resource_version: meta.resource_version.unwrap_or_default(),
            created: meta.creation_timestamp.map(|t| t.0.as_millisecond()),
            state,
            managers,
            diff_doc,
        }
    }
}

/// An object's owner references.
fn owners(
    refs: Vec<k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference>,
) -> Vec<OwnerRef> {
    refs.into_iter()
        .map(|o| OwnerRef {
            api_version: o.api_version,
            kind: o.kind,
            name: o.name,
            uid: o.uid,
            controller: o.controller.unwrap_or(false),
        })
        .collect()
}

/// A Node's taints, each with who last wrote the taints and when.
fn taints(taints: Vec<SlimTaint>, owners: &[String], written: Option<i64>) -> Vec<Taint> {
    taints
        .into_iter()
        .map(|t| Taint {
            key: t.key,
            value: t.value,
            effect: t.effect,
            added: t.time_added.as_deref().and_then(parse_k8s_time),
            owners: owners.to_vec(),
            written,
        })
        .collect()
}

/// A Lease's holder, renewal and duration (`check` asks whether the control plane runs).
fn lease(spec: &Option<Box<RawValue>>) -> crate::model::LeaseSpec {
    let l: SlimLeaseSpec = decode(spec);
    crate::model::LeaseSpec {
        holder: l.holder_identity.unwrap_or_default(),
        renewed: l.renew_time.as_deref().and_then(parse_k8s_time),
        duration_s: l.lease_duration_seconds.unwrap_or(0),
    }
}

/// Who last wrote a Node's taints (`manager` or `manager/subresource`), and
/// when the latest of them did. NB: only a Node's field sets name `f:taints`
/// (under `f:spec`).
fn taint_writers(meta: &ObjectMeta) -> (Vec<String>, Option<i64>) {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::FieldsV1;
    let writes: Vec<_> = meta
        .managed_fields
        .iter()
        .flatten()
        .filter(|f| {
            matches!(&f.fields_v1, Some(FieldsV1(serde_json::Value::String(text)))
                if text.contains("\"f:taints\""))
        })
        .collect();
    let owners = writes
        .iter()
        .map(|f| match f.subresource.as_deref() {
            Some(sub) if !sub.is_empty() => {
                format!("{}/{sub}", f.manager.as_deref().unwrap_or_default())
            }
            _ => f.manager.clone().unwrap_or_default(),
        })
        .collect();
    let written = writes
        .iter()
        .filter_map(|f| f.time.as_ref().map(|t| t.0.as_millisecond()))
        .max();
    (owners, written)
}

/// The counters the status holds (every one of [`COUNTERS`] present) and the
/// spec's replicas, parallelism and completions.
fn counters(status: &SlimStatus, spec: &SlimSpec) -> BTreeMap<String, i64> {
    let mut out = BTreeMap::new();
    for (name, value) in COUNTERS.iter().zip(status.counters()) {
        if let Some(v) = value {
            out.insert((*name).to_string(), v);
        }
    }
    for (name, value) in [
        ("spec.replicas", spec.replicas),
        ("spec.parallelism", spec.parallelism),
        ("spec.completions", spec.completions),
    ] {
        if let Some(v) = value {
            out.insert(name.to_string(), v);
        }
    }
    out
}

/// A Pod's images (init containers first), or its template's.
fn images(
    template: Option<SlimTemplate>,
    init_containers: Vec<SlimContainer>,
    containers: Vec<SlimContainer>,
) -> Vec<String> {
    if containers.is_empty() {
        template
            .and_then(|t| t.spec)
            .map(|s| s.containers.into_iter().map(|c| c.image).collect())
            .unwrap_or_default()
    } else {
        init_containers
            .into_iter()
            .chain(containers)
            .map(|c| c.image)
            .collect()
    }
}

/// The conditions of an object's status; a route's per parent Gateway, and
/// an OLM CatalogSource's registry connection as one more.
fn conditions(
    own: Vec<SlimCondition>,
    parents: Vec<SlimRouteParent>,
    connection_state: Option<SlimConnectionState>,
) -> Vec<Condition> {
    let condition = |c: SlimCondition, parent: Option<&SlimParentRef>| Condition {
        type_: c.type_,
        status: c.status,
        reason: c.reason,
        message: super::event::truncate_utf8(
            match parent {
                Some(p) => format!("{}: {}", p.text(), c.message),
                None => c.message,
            },
            MAX_CONDITION_MESSAGE,
        ),
        observed_generation: c.observed_generation,
        last_transition: c.last_transition_time.as_deref().and_then(parse_k8s_time),
    };
    // NB: a route's conditions are its parents' (issue 47: a route a
    // Gateway does not accept, or whose backend is missing, said nothing).
    own.into_iter()
        .map(|c| condition(c, None))
        .chain(parents.into_iter().flat_map(|p| {
            let SlimRouteParent {
                parent_ref,
                conditions,
            } = p;
            conditions
                .into_iter()
                .map(|c| condition(c, Some(&parent_ref)))
                .collect::<Vec<_>>()
        }))
        // NB: a CatalogSource has no conditions; its registry connection
        // is kept as one named after its field (issue 47).
        .chain(
            connection_state
                .filter(|c| !c.last_observed_state.is_empty())
                .map(|c| Condition {
                    type_: crate::model::CONNECTION_STATE.to_string(),
                    status: c.last_observed_state,
                    reason: String::new(),
                    message: if c.address.is_empty() {
                        String::new()
                    } else {
                        format!("registry at {}", c.address)
                    },
                    observed_generation: None,
                    last_transition: None,
                }),
        )
        .collect()
}

/// The words of a Failed phase (`status.reason: status.message`). NB: only a
/// Failed phase's: a running Pod's state stays as compact as before.
fn phase_reason(status: &SlimStatus) -> String {
    match status.phase.as_deref() {
        Some("Failed") => {
            let words = [status.reason.as_deref(), status.message.as_deref()]
                .into_iter()
                .flatten()
                .filter(|w| !w.is_empty())
                .collect::<Vec<_>>()
                .join(": ");
            crate::k8s::event::truncate_utf8(words, 256)
        }
        _ => String::new(),
    }
}

/// The topology keys a Pod's spread constraints may keep it off a Node by.
/// NB: ScheduleAnyway only scores; it never keeps a Pod off a Node.
fn spread(constraints: Vec<SlimSpread>) -> Vec<String> {
    let mut keys: Vec<String> = constraints
        .into_iter()
        .filter(|c| c.when_unsatisfiable != "ScheduleAnyway" && !c.topology_key.is_empty())
        .map(|c| c.topology_key)
        .collect();
    keys.dedup();
    keys
}

/// The writers of `managedFields`; their field sets kept only when the
/// object keeps a diff document (what they are read against).
fn managers(
    fields: Vec<k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry>,
    keep_sets: bool,
) -> Vec<ManagerEntry> {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::FieldsV1;
    fields
        .into_iter()
        .map(|f| ManagerEntry {
            manager: f.manager.unwrap_or_default(),
            operation: f.operation.unwrap_or_default(),
            subresource: f.subresource.unwrap_or_default(),
            time: f.time.map(|t| t.0.as_millisecond()),
            fields: f.fields_type.and_then(|n| n.parse().ok()).unwrap_or(0),
            fields_v1: match f.fields_v1 {
                Some(FieldsV1(serde_json::Value::String(text))) if keep_sets => text,
                _ => String::new(),
            },
        })
        .collect()
}

/// The observation of an object read through its metadata only (Secrets):
/// its life cycle and writers, nothing of its data.
pub fn metadata_observation(mut meta: ObjectMeta, resource: &ApiResource) -> ObjectObservation {
    // NB: a full ObjectMeta carries managedFields' field sets; the count of
    // fields owned goes where `slim_meta` puts it, and the sets are dropped.
    if let Some(fields) = meta.managed_fields.as_mut() {
        for f in fields {
            let text = f
                .fields_v1
                .take()
                .and_then(|v| serde_json::to_string(&v.0).ok())
                .unwrap_or_default();
            let count: u32 = ["\"f:", "\"k:", "\"v:", "\"i:"]
                .iter()
                .map(|p| text.matches(p).count() as u32)
                .sum();
            f.fields_type = Some(count.to_string());
        }
    }
    meta.labels = None;
    meta.annotations = kept_annotations(meta.annotations.take());
    WireObject {
        metadata: meta,
        ..WireObject::default()
    }
    .into_observation(resource)
}

/// The JSON document whose changes a version's spec diff shows: the spec, a
/// Node's labels next to its spec, a ConfigMap's keys with a digest of each
/// value (never the value). None for Pods (their spec is nearly immutable and
/// they are most of a cluster's objects; images and scheduling inputs are in
/// their state) and for Secrets (not even a digest of their data is kept).
fn diff_doc(
    resource: &ApiResource,
    spec: Option<&RawValue>,
    node_labels: Option<&BTreeMap<String, String>>,
    data: Option<BTreeMap<String, Box<RawValue>>>,
    binary_data: Option<BTreeMap<String, Box<RawValue>>>,
    keep: Decode,
) -> Option<String> {
    let core = resource.group.is_empty();
    match (core, resource.kind.as_str()) {
        (true, "Pod" | "Secret") => None,
        (true, "ConfigMap") => {
            let hide = |m: Option<BTreeMap<String, Box<RawValue>>>| -> serde_json::Map<String, serde_json::Value> {
                m.unwrap_or_default()
                    .into_iter()
                    .map(|(k, v)| {
                        let digest = crate::units::fnv1a(v.get()) as u64;
                        (k, format!("{}#{digest:016x}", crate::specdiff::HIDDEN).into())
                    })
                    .collect()
            };
            // NB: binaryData stays hidden even with --configmap-values: base64 of
            // bytes says nothing on a terminal, and its digest tells that it changed.
            let shown = |m: Option<BTreeMap<String, Box<RawValue>>>| -> serde_json::Map<String, serde_json::Value> {
                m.unwrap_or_default()
                    .into_iter()
                    .map(|(k, v)| {
                        let value = serde_json::from_str(v.get()).unwrap_or(serde_json::Value::Null);
                        (k, value)
                    })
                    .collect()
            };
            let mut doc = serde_json::Map::new();
            let data = if keep.configmap_values {
                shown(data)
            } else {
                hide(data)
            };
            doc.insert("data".into(), data.into());
            let binary = hide(binary_data);
            if !binary.is_empty() {
                doc.insert("binaryData".into(), binary.into());
            }
            Some(serde_json::Value::Object(doc).to_string())
        }
        _ => {
            let spec = spec?.get();
            Some(match node_labels {
                Some(labels) => format!(
                    "{{\"spec\":{spec},\"labels\":{}}}",
                    serde_json::to_string(labels).unwrap_or_else(|_| "{}".into())
                ),
                None => format!("{{\"spec\":{spec}}}"),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pods() -> ApiResource {
        ApiResource {
            group: String::new(),
            version: "v1".into(),
            api_version: "v1".into(),
            kind: "Pod".into(),
            plural: "pods".into(),
        }
    }

    fn observe(json: serde_json::Value) -> ObjectObservation {
        let wire: WireObject = serde_json::from_value(json).unwrap();
        wire.into_observation(&pods())
    }

    fn crash_looping_pod(resource_version: &str, heartbeat: &str) -> serde_json::Value {
        serde_json::json!({
            "metadata": {
                "name": "web-1", "namespace": "shop", "uid": "u-1",
                "resourceVersion": resource_version, "generation": 1,
                "creationTimestamp": "2026-11-29T03:00:00Z",
                "labels": {"app": "web"},
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                    "name": "web-7c9d", "uid": "rs-1", "controller": true}],
                "managedFields": [{"manager": "kubelet", "operation": "Update",
                    "subresource": "status", "time": heartbeat,
                    "fieldsV1": {"f:status": {"f:conditions": {}}}}]
            },
            "spec": {"nodeName": "kwok-small", "containers": [{"name": "app", "image": "web:2"}],
                "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data-web-1"}},
                            {"name": "tmp", "emptyDir": {}}]},
            "status": {
                "phase": "Running",
                "conditions": [{"type": "Ready", "status": "False", "reason": "ContainersNotReady",
                    "lastProbeTime": heartbeat, "lastTransitionTime": "2026-11-29T03:01:00Z"}],
                "containerStatuses": [{"name": "app", "ready": false, "restartCount": 4,
                    "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 40s"}},
                    "lastState": {"terminated": {"reason": "Error", "exitCode": 137}}}]
            }
        })
    }

    #[test]
    fn requests_are_summed_as_the_scheduler_sums_them() {
        let node = ApiResource {
            kind: "Node".into(),
            plural: "nodes".into(),
            ..pods()
        };
        let n = serde_json::from_value::<WireObject>(json!({
            "metadata": {"name": "a", "uid": "u"},
            "status": {"allocatable": {"cpu": "3500m", "memory": "4Gi", "pods": "110", "bad": "x"}}
        }))
        .unwrap()
        .into_observation(&node);
        assert_eq!(n.state.allocatable["cpu"], 3500);
        assert_eq!(n.state.allocatable["memory"], 4 << 30);
        assert_eq!(n.state.allocatable["pods"], 110);
        assert!(!n.state.allocatable.contains_key("bad"));
        let p = observe(json!({
            "metadata": {"name": "web", "uid": "p"},
            "spec": {
                "containers": [
                    {"name": "a", "resources": {"requests": {"cpu": "100m", "memory": "1Gi"}}},
                    {"name": "b", "resources": {"requests": {"cpu": "200m"}}}
                ],
                "initContainers": [
                    {"name": "sidecar", "restartPolicy": "Always", "resources": {"requests": {"cpu": "50m"}}},
                    {"name": "migrate", "resources": {"requests": {"cpu": "1", "memory": "10Mi"}}}
                ],
                "overhead": {"cpu": "10m"}
            }
        }));
        // cpu: max(100 + 200 + 50, 50 + 1000) + 10; memory: max(1Gi, 10Mi).
        assert_eq!(p.state.requests["cpu"], 1060);
        assert_eq!(p.state.requests["memory"], 1 << 30);
        let plain =
            observe(json!({"metadata": {"name": "x"}, "spec": {"containers": [{"name": "c"}]}}));
        assert!(plain.state.requests.is_empty());
        let text = serde_json::to_string(&plain.state).unwrap();
        assert!(!text.contains("req"), "{text}");
    }

    #[test]
    fn a_pods_restart_policy_is_kept_unless_it_is_the_default() {
        let policy = |spec: serde_json::Value| {
            observe(json!({"metadata": {"name": "p", "uid": "p"}, "spec": spec}))
                .state
                .restart_policy
        };
        assert_eq!(policy(json!({"restartPolicy": "Never"})), "Never");
        assert_eq!(policy(json!({"restartPolicy": "OnFailure"})), "OnFailure");
        assert_eq!(policy(json!({"restartPolicy": "Always"})), "");
        assert_eq!(policy(json!({})), "");
    }

    #[test]
    fn a_pods_host_ports_are_kept_and_no_other_port() {
        let p = observe(json!({
            "metadata": {"name": "edge", "uid": "p"},
            "spec": {
                "containers": [
                    {"name": "a", "ports": [{"containerPort": 80, "hostPort": 8080}, {"containerPort": 9090}]},
                    {"name": "b", "ports": [{"containerPort": 53, "hostPort": 53, "protocol": "UDP"}]}
                ],
                "initContainers": [{"name": "s", "ports": [{"containerPort": 80, "hostPort": 8080}]}]
            }
        }));
        assert_eq!(p.state.host_ports, ["53/UDP", "8080/TCP"]);
        let plain = observe(
            json!({"metadata": {"name": "x"}, "spec": {"containers": [{"name": "c", "ports": [{"containerPort": 80}]}]}}),
        );
        let text = serde_json::to_string(&plain.state).unwrap();
        assert!(!text.contains("hp"), "{text}");
    }

    #[test]
    fn what_scheduling_reads_is_kept_for_nodes_and_pods() {
        let node = ApiResource {
            kind: "Node".into(),
            plural: "nodes".into(),
            ..pods()
        };
        let n = serde_json::from_value::<WireObject>(json!({
            "metadata": {"name": "a", "uid": "u", "labels": {"disktype": "hdd"}},
            "spec": {"unschedulable": true, "taints": [
                {"key": "drill/maintenance", "value": "true", "effect": "NoSchedule"},
                {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute", "timeAdded": "2026-11-30T03:00:00Z"}
            ]}
        }))
        .unwrap()
        .into_observation(&node);
        assert!(n.state.unschedulable);
        assert_eq!(
            n.state.taints[0].text(),
            "drill/maintenance=true:NoSchedule"
        );
        assert_eq!(
            n.state.taints[1].added,
            parse_k8s_time("2026-11-30T03:00:00Z")
        );
        assert_eq!(n.state.labels["disktype"], "hdd");
        let p = serde_json::from_value::<WireObject>(json!({
            "metadata": {"name": "web", "uid": "p", "labels": {"app": "web"}},
            "spec": {
                "nodeSelector": {"disktype": "ssd"},
                "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "batch", "effect": "NoSchedule"}],
                "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}],
                                           "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}}},
                "topologySpreadConstraints": [
                    {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
                    {"maxSkew": 1, "topologyKey": "rack", "whenUnsatisfiable": "ScheduleAnyway"}],
                "containers": [{"name": "web", "image": "web:1"}]
            }
        }))
        .unwrap()
        .into_observation(&pods());
        // Only a constraint that filters Nodes; ScheduleAnyway only scores.
        assert_eq!(p.state.spread, vec!["zone".to_string()]);
        assert_eq!(p.state.node_selector["disktype"], "ssd");
        assert_eq!(p.state.tolerations[0].value, "batch");
        assert_eq!(p.state.node_affinity[0].len(), 2);
        assert_eq!(p.state.node_affinity[0][1].key, "metadata.name");
        // What Services and disruption budgets select (issue 47).
        assert_eq!(p.state.labels["app"], "web", "a Pod's labels are kept");
        assert!(!p.state.default_tolerations);
    }

    #[test]
    fn the_two_admission_tolerations_fold_into_a_flag() {
        let p = serde_json::from_value::<WireObject>(json!({
            "metadata": {"name": "web", "uid": "p"},
            "spec": {"tolerations": [
                {"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"},
                {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
                {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
            ]}
        }))
        .unwrap()
        .into_observation(&pods());
        assert!(p.state.default_tolerations);
        assert_eq!(p.state.tolerations.len(), 1);
        assert_eq!(p.state.tolerations[0].key, "dedicated");
        // Other seconds are the Pod's own choice: kept as they are.
        let q = serde_json::from_value::<WireObject>(json!({
            "metadata": {"name": "web", "uid": "q"},
            "spec": {"tolerations": [
                {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30},
                {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
            ]}
        }))
        .unwrap()
        .into_observation(&pods());
        assert!(!q.state.default_tolerations);
        assert_eq!(q.state.tolerations.len(), 2);
    }

    /// Issue 47: a route's conditions are per parent Gateway, under
    /// `status.parents`; a route no Gateway accepted, or whose backend is
    /// missing, read as no condition at all.
    #[test]
    fn a_routes_parent_conditions_are_its_conditions_named_after_the_gateway() {
        let route = ApiResource {
            group: "gateway.networking.k8s.io".into(),
            version: "v1".into(),
            api_version: "gateway.networking.k8s.io/v1".into(),
            kind: "HTTPRoute".into(),
            plural: "httproutes".into(),
        };
        let r = serde_json::from_value::<WireObject>(json!({
            "metadata": {"name": "web", "namespace": "shop", "uid": "r"},
            "spec": {"parentRefs": [{"name": "public"}],
                     "rules": [{"backendRefs": [{"name": "web", "port": 80}]}]},
            "status": {"parents": [
                {"parentRef": {"name": "public", "sectionName": "https"},
                 "controllerName": "example.net/gateway-controller",
                 "conditions": [
                    {"type": "Accepted", "status": "False", "reason": "NotAllowedByListeners",
                     "message": "no listener allows routes from namespace shop",
                     "lastTransitionTime": "2026-11-29T03:00:00Z"},
                    {"type": "ResolvedRefs", "status": "True", "reason": "ResolvedRefs", "message": ""}]}]}
        }))
        .unwrap()
        .into_observation(&route);
        assert_eq!(r.state.refs, ["Gateway/public", "Service/web"]);
        let bad = crate::checks::progress::bad_condition(&r.state).expect("a bad condition");
        assert_eq!(
            (bad.type_.as_str(), bad.status.as_str(), bad.reason.as_str()),
            ("Accepted", "False", "NotAllowedByListeners")
        );
        assert_eq!(
            bad.message,
            "Gateway public, listener https: no listener allows routes from namespace shop"
        );
        // Accepted, and every backend resolved: nothing to say.
        let ok = serde_json::from_value::<WireObject>(json!({
            "metadata": {"name": "api", "namespace": "shop", "uid": "s"},
            "status": {"parents": [{"parentRef": {"name": "public"}, "conditions": [
                {"type": "Accepted", "status": "True", "reason": "Accepted", "message": ""},
                {"type": "ResolvedRefs", "status": "True", "reason": "ResolvedRefs", "message": ""}]}]}
        }))
        .unwrap()
        .into_observation(&route);
        assert_eq!(ok.state.conditions.len(), 2);
        assert!(crate::checks::progress::bad_condition(&ok.state).is_none());
    }

    /// Issue 47: a CatalogSource's registry connection (the shape of
    /// "Viewing Operator catalog source status by using the CLI",
    /// docs.openshift.com/rosa/operators/admin/olm-status.html) is kept as a
    /// condition named after its field; no other kind gets one.
    #[test]
    fn a_catalog_sources_connection_state_is_kept_as_a_condition_named_after_its_field() {
        let of = |group: &str, kind: &str| ApiResource {
            group: group.into(),
            version: "v1alpha1".into(),
            api_version: format!("{group}/v1alpha1"),
            kind: kind.into(),
            plural: format!("{}s", kind.to_lowercase()),
        };
        let body = json!({
            "metadata": {"name": "example-catalog", "namespace": "openshift-marketplace", "uid": "c"},
            "spec": {"sourceType": "grpc", "image": "quay.io/example-org/example-catalog:v1"},
            "status": {"connectionState": {
                "address": "example-catalog.openshift-marketplace.svc:50051",
                "lastConnect": "2026-11-29T03:00:00Z",
                "lastObservedState": "TRANSIENT_FAILURE"}}
        });
        let c = serde_json::from_value::<WireObject>(body.clone())
            .unwrap()
            .into_observation(&of("operators.coreos.com", "CatalogSource"));
        let bad = crate::checks::progress::bad_condition(&c.state).expect("a bad condition");
        assert_eq!(
            (
                bad.type_.as_str(),
                bad.status.as_str(),
                bad.message.as_str()
            ),
            (
                crate::model::CONNECTION_STATE,
                "TRANSIENT_FAILURE",
                "registry at example-catalog.openshift-marketplace.svc:50051"
            )
        );
        let other = serde_json::from_value::<WireObject>(body)
            .unwrap()
            .into_observation(&of("example.com", "Widget"));
        assert!(other.state.conditions.is_empty());
    }

    /// Issue 47: of all annotations, the slim decoder keeps an Ingress's
    /// legacy class and an IngressClass's default mark, watched whole or
    /// as metadata only.
    #[test]
    fn the_ingress_class_annotations_are_kept_and_no_other() {
        let ingress = ApiResource {
            group: "networking.k8s.io".into(),
            version: "v1".into(),
            api_version: "networking.k8s.io/v1".into(),
            kind: "Ingress".into(),
            plural: "ingresses".into(),
        };
        let class = ApiResource {
            kind: "IngressClass".into(),
            plural: "ingressclasses".into(),
            ..ingress.clone()
        };
        let spec = json!({"rules": [{"http": {"paths": [{"path": "/", "pathType": "Prefix",
            "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}}]});
        let legacy = serde_json::from_value::<WireObject>(json!({
            "metadata": {"name": "old", "namespace": "shop", "uid": "i",
                "annotations": {"kubernetes.io/ingress.class": "nginx",
                    "kubectl.kubernetes.io/last-applied-configuration": "{}"}},
            "spec": spec
        }))
        .unwrap();
        assert_eq!(
            legacy.metadata.annotations.as_ref().map(|a| a.len()),
            Some(1),
            "only the class annotation is kept"
        );
        assert_eq!(
            legacy.into_observation(&ingress).state.refs,
            ["Service/web"]
        );
        let bare = serde_json::from_value::<WireObject>(json!({
            "metadata": {"name": "bare", "namespace": "shop", "uid": "j"}, "spec": spec
        }))
        .unwrap()
        .into_observation(&ingress);
        assert_eq!(
            bare.state.refs,
            [crate::model::DEFAULT_INGRESS_CLASS_REF, "Service/web"]
        );
        let default = serde_json::from_value::<WireObject>(json!({
            "metadata": {"name": "nginx", "uid": "k",
                "annotations": {"ingressclass.kubernetes.io/is-default-class": "true"}},
            "spec": {"controller": "k8s.io/ingress-nginx"}
        }))
        .unwrap()
        .into_observation(&class);
        assert!(default.state.is_default);
        // As the recorder watches IngressClasses: metadata only.
        let meta = ObjectMeta {
            name: Some("nginx".into()),
            uid: Some("k".into()),
            annotations: Some(
                [
                    ("ingressclass.kubernetes.io/is-default-class", "true"),
                    ("kubectl.kubernetes.io/last-applied-configuration", "{}"),
                ]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            ),
            ..ObjectMeta::default()
        };
        assert!(metadata_observation(meta, &class).state.is_default);
    }

    #[test]
    fn a_status_field_of_another_shape_no_longer_drops_the_rest_of_the_status() {
        let of = |group: &str, kind: &str| ApiResource {
            group: group.into(),
            version: "v1".into(),
            api_version: format!("{group}/v1"),
            kind: kind.into(),
            plural: format!("{}s", kind.to_lowercase()),
        };
        // A CronJob's `status.active` is a list where a Job's is a count.
        let cron = serde_json::from_value::<WireObject>(json!({
            "metadata": {"name": "nightly", "namespace": "shop", "uid": "cj"},
            "spec": {"schedule": "0 3 * * *", "suspend": true},
            "status": {"active": [{"kind": "Job", "name": "nightly-1"}],
                       "lastScheduleTime": "2026-11-29T03:00:00Z"}
        }))
        .unwrap()
        .into_observation(&of("batch", "CronJob"));
        assert_eq!(cron.state.halted, "spec.suspend");
        assert_eq!(
            cron.state.last_schedule,
            parse_k8s_time("2026-11-29T03:00:00Z")
        );
        // A custom resource whose `ready` is a bool and one condition has a bool status.
        let db = serde_json::from_value::<WireObject>(json!({
            "metadata": {"name": "orders", "namespace": "shop", "uid": "db"},
            "spec": {"paused": true, "replicas": {"min": 1}},
            "status": {"ready": true, "replicas": "3", "conditions": [
                {"type": "Ready", "status": "False", "reason": "DiskFull", "message": "volume full"},
                {"type": "Odd", "status": true}
            ]}
        }))
        .unwrap()
        .into_observation(&of("example.com", "Database"));
        assert_eq!(db.state.conditions.len(), 1);
        assert_eq!(db.state.conditions[0].reason, "DiskFull");
        assert_eq!(db.state.halted, "spec.paused");
        assert_eq!(db.state.update_strategy, "", "no update strategy");
        assert!(!db.state.replicas.contains_key("replicas"));
    }

    #[test]
    fn an_update_strategy_that_holds_a_rollout_back_is_kept() {
        let of = |kind: &str, strategy: serde_json::Value| {
            serde_json::from_value::<WireObject>(json!({
                "metadata": {"name": "cache", "namespace": "shop", "uid": "u"},
                "spec": {"replicas": 3, "updateStrategy": strategy, "paused": true},
            }))
            .unwrap()
            .into_observation(&ApiResource {
                group: "apps".into(),
                version: "v1".into(),
                api_version: "apps/v1".into(),
                kind: kind.into(),
                plural: format!("{}s", kind.to_lowercase()),
            })
            .state
        };
        assert_eq!(
            of("StatefulSet", json!({"type": "OnDelete"})).update_strategy,
            "OnDelete"
        );
        assert_eq!(
            of(
                "StatefulSet",
                json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 2}})
            )
            .update_strategy,
            "partition=2"
        );
        assert_eq!(
            of("DaemonSet", json!({"type": "RollingUpdate"})).update_strategy,
            ""
        );
        // Another shape (a custom type's string): the rest of the spec stays.
        let odd = of("Rollout", json!("Recreate"));
        assert_eq!(
            (odd.update_strategy.as_str(), odd.halted.as_str()),
            ("", "spec.paused")
        );
    }

    #[test]
    fn a_volume_keeps_its_node_affinity_and_a_claim_its_volume() {
        let core = |kind: &str, plural: &str| ApiResource {
            kind: kind.into(),
            plural: plural.into(),
            ..pods()
        };
        let pv = serde_json::from_value::<WireObject>(json!({
            "metadata": {"name": "pv-data", "uid": "v"},
            "spec": {"capacity": {"storage": "1Gi"}, "volumeName": "not-a-claim-field",
                     "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                         {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["eu-1a"]}]}]}}}
        }))
        .unwrap()
        .into_observation(&core("PersistentVolume", "persistentvolumes"));
        assert_eq!(pv.state.node_affinity.len(), 1);
        assert_eq!(
            pv.state.node_affinity[0][0].text(),
            "topology.kubernetes.io/zone In [eu-1a]"
        );
        let pvc = serde_json::from_value::<WireObject>(json!({
            "metadata": {"name": "data", "namespace": "shop", "uid": "c"},
            "spec": {"volumeName": "pv-data", "storageClassName": ""}
        }))
        .unwrap()
        .into_observation(&core("PersistentVolumeClaim", "persistentvolumeclaims"));
        assert_eq!(pvc.state.volume_name, "pv-data");
        assert!(pvc.state.node_affinity.is_empty());
        let text = serde_json::to_string(&pvc.state).unwrap();
        assert!(text.contains(r#""vol":"pv-data""#), "{text}");
        // Empty when absent: a Pod's or a custom object's state is as before.
        let w = serde_json::from_value::<WireObject>(json!({
            "metadata": {"name": "w", "uid": "w"},
            "spec": {"volumeName": "x", "nodeAffinity": {"required": {"nodeSelectorTerms": [{}]}}}
        }))
        .unwrap()
        .into_observation(&ApiResource {
            group: "example.com".into(),
            api_version: "example.com/v1".into(),
            kind: "Widget".into(),
            plural: "widgets".into(),
            ..pods()
        });
        let text = serde_json::to_string(&w.state).unwrap();
        assert!(!text.contains("vol") && !text.contains("aff"), "{text}");
    }

    #[test]
    fn configmap_values_stay_out_of_the_diff_unless_asked_for() {
        let cm = |level: &str| {
            serde_json::from_value::<WireObject>(json!({
                "metadata": {"name": "app", "namespace": "shop", "uid": "c"},
                "data": {"log.level": level},
                "binaryData": {"cert": "c2VjcmV0"}
            }))
            .unwrap()
        };
        let configmaps = ApiResource {
            kind: "ConfigMap".into(),
            plural: "configmaps".into(),
            ..pods()
        };
        let doc = |level: &str, keep: Decode| {
            cm(level)
                .into_observation_with(&configmaps, keep)
                .diff_doc
                .unwrap()
        };
        let texts = |keep: Decode| -> Vec<String> {
            crate::specdiff::diff(&doc("info", keep), &doc("debug", keep))
                .iter()
                .map(|c| c.text())
                .collect()
        };
        let hidden = Decode::default();
        assert!(!doc("info", hidden).contains("info"));
        assert_eq!(texts(hidden), vec!["data[log.level] changed"]);
        let shown = Decode {
            configmap_values: true,
            ..Decode::default()
        };
        assert_eq!(texts(shown), vec!["data[log.level] info → debug"]);
        assert!(
            !doc("info", shown).contains("c2VjcmV0"),
            "binaryData stays a digest"
        );
    }

    #[test]
    fn a_custom_spec_with_a_taints_field_of_its_own_keeps_the_rest() {
        let widgets = ApiResource {
            group: "example.com".into(),
            api_version: "example.com/v1".into(),
            kind: "Widget".into(),
            plural: "widgets".into(),
            ..pods()
        };
        let w = serde_json::from_value::<WireObject>(json!({
            "metadata": {"name": "w", "uid": "w"},
            "spec": {"taints": "none", "replicas": 2}
        }))
        .unwrap()
        .into_observation(&widgets);
        assert!(w.state.taints.is_empty());
        assert_eq!(w.state.replicas["spec.replicas"], 2);
    }

    #[test]
    fn pod_state_keeps_what_explains_an_incident() {
        let o = observe(crash_looping_pod("10", "2026-11-29T03:02:00Z"));
        assert_eq!(o.object.kind, "Pod");
        assert_eq!(o.object.namespace, "shop");
        assert_eq!(o.created, Some(1_795_921_200_000));
        let s = &o.state;
        assert_eq!(s.phase, "Running");
        assert_eq!(s.node_name, "kwok-small");
        assert_eq!(s.claims, vec!["data-web-1"]);
        assert_eq!(s.images, vec!["web:2"]);
        assert_eq!(s.owners[0].kind, "ReplicaSet");
        assert!(s.owners[0].controller);
        let c = &s.containers[0];
        assert_eq!(
            (c.state.as_str(), c.reason.as_str(), c.restarts),
            ("waiting", "CrashLoopBackOff", 4)
        );
        assert_eq!(
            (c.last_reason.as_str(), c.last_exit_code),
            ("Error", Some(137))
        );
        assert_eq!(s.conditions[0].reason, "ContainersNotReady");
        assert_eq!(o.managers[0].label(), "kubelet/status");
        assert_eq!(o.managers[0].fields, 2);
    }

    #[test]
    fn heartbeats_and_resource_version_alone_do_not_change_the_state() {
        let a = observe(crash_looping_pod("10", "2026-11-29T03:02:00Z"));
        let b = observe(crash_looping_pod("11", "2026-11-29T03:03:00Z"));
        assert_eq!(a.state, b.state);
        assert_ne!(a.resource_version, b.resource_version);
    }

    #[test]
    fn spec_change_changes_the_digest_only() {
        let mut changed = crash_looping_pod("12", "2026-11-29T03:02:00Z");
        changed["spec"]["containers"][0]["resources"] = serde_json::json!({"limits": {"cpu": "1"}});
        let a = observe(crash_looping_pod("10", "2026-11-29T03:02:00Z"));
        let b = observe(changed);
        assert_ne!(a.state.spec_digest, b.state.spec_digest);
        assert_eq!(a.state.images, b.state.images);
    }

    #[test]
    fn odd_custom_status_costs_the_status_not_the_object() {
        let o = observe(serde_json::json!({
            "metadata": {"name": "w", "uid": "u", "generation": 3},
            "spec": {"size": 1},
            "status": "weird"
        }));
        assert_eq!(o.state.generation, 3);
        assert_eq!(o.state.observed_generation, None);
        assert!(!o.state.spec_digest.is_empty());
    }

    #[test]
    fn deployment_counters_and_template_images() {
        let o = observe(serde_json::json!({
            "metadata": {"name": "web", "uid": "d", "generation": 2},
            "spec": {"replicas": 3, "template": {"spec": {"containers": [{"image": "web:3"}]}}},
            "status": {"observedGeneration": 1, "replicas": 3, "updatedReplicas": 1, "readyReplicas": 2}
        }));
        assert_eq!(o.state.images, vec!["web:3"]);
        assert_eq!(o.state.observed_generation, Some(1));
        assert_eq!(o.state.replicas["spec.replicas"], 3);
        assert_eq!(o.state.replicas["updatedReplicas"], 1);
        let json = serde_json::to_string(&o.state).unwrap();
        let back: ObjectState = serde_json::from_str(&json).unwrap();
        assert_eq!(back, o.state);
    }
}
