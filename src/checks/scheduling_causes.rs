//! Why the scheduler's reasons hold, from the cluster's own state: which
//! taints a Pod does not tolerate and on which Nodes, which Nodes are
//! cordoned, and (from a recording) since when and by whom; which label of a
//! Pod's nodeSelector or required node affinity the Nodes lack; for
//! `Insufficient R`, what the Pod requests against the most any Node has free.
//!
//! NB: since Kubernetes 1.27 the scheduler writes "node(s) had untolerated
//! taint(s)" without naming the taint, so the message alone cannot say what
//! to remove. The Nodes in the snapshot can.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::model::{RecordedObject, Toleration};

/// When a Node's taint (or cordon) began, and who wrote it: from the
/// recording's versions of that Node.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Origin {
    pub node: String,
    /// [`crate::model::Taint::text`], or [`CORDON`].
    pub what: String,
    /// Epoch ms of the first version of the Node's latest unbroken run with it.
    pub since: i64,
    /// Who wrote it: the managers owning the field (a taint's
    /// `spec.taints`), else the writers of that version (field managers).
    pub by: Vec<String>,
    /// Whether `by` are the field's owners; else only "one of" them wrote it.
    pub owned: bool,
    /// `since` is the owners' last write in managedFields, not a version's time.
    pub from_fields: bool,
}

/// [`Origin::what`] of a cordon (`spec.unschedulable`).
pub const CORDON: &str = "cordon";

/// One cause of a Pod's unschedulability, named.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Cause {
    /// The scheduler's reason it explains.
    pub reason: String,
    /// `taint`, `cordon`, `selector`, `affinity`, `resources`, `volume`, `spread` or `ports`.
    pub kind: &'static str,
    /// The resource (kind `resources`): `cpu`, `memory`, `nvidia.com/gpu`.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub resource: String,
    /// What the Pod requests of it (kind `resources`; CPU in millicores,
    /// others in units), when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requested: Option<i64>,
    /// The most of it free on any Node (kind `resources`, same units): its
    /// allocatable minus the requests of the non-terminal Pods bound there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub most_free: Option<i64>,
    /// Whether `most_free` left out Pods of other namespaces (live `-n`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
    /// The taint as `key=value:Effect` (kind `taint`).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub taint: String,
    /// The PersistentVolume whose node affinity the Nodes do not meet (kind `volume`).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub volume: String,
    /// The Pod's claim bound to it (kind `volume`).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub claim: String,
    /// What the Pod asks of a Node (kinds `selector`, `affinity`): `disktype=ssd`,
    /// `topology.kubernetes.io/zone In [eu-1a]`; the label key (kind `spread`).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub requirement: String,
    /// The Nodes carrying the taint, cordoned, or lacking what the Pod asks.
    pub nodes: Vec<String>,
    /// Kind `ports`: the Pod (`namespace/name`) that takes the port on each of `nodes`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub held_by: Vec<String>,
    /// How many Nodes there are (kinds `selector`, `affinity`, `volume`, `spread`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub of_nodes: Option<usize>,
    /// Epoch ms: when it began (the earliest over its Nodes), when known.
    #[serde(skip)]
    pub since_ms: Option<i64>,
    /// The writers that put it there, when the recording knows them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub by: Vec<String>,
    /// `by` are only the writers of the version it appeared in, not the
    /// field's owners: one of them wrote it (said "by one of …").
    #[serde(skip)]
    pub by_unsure: bool,
    /// `since_ms` comes from managedFields (the last write of the field's owner).
    #[serde(skip)]
    pub since_from_fields: bool,
}

/// Nodes named in a sentence: up to three, then how many more.
fn node_list(nodes: &[String]) -> String {
    let shown: Vec<&str> = nodes.iter().take(3).map(String::as_str).collect();
    match nodes.len() {
        n if n > 3 => format!("{} and {} more", shown.join(", "), n - 3),
        _ => shown.join(", "),
    }
}

impl Cause {
    /// One sentence, e.g. `taint drill/maintenance=true:NoSchedule on 3 nodes (a, b, c)`.
    pub fn sentence(&self, rfc3339: impl Fn(i64) -> String) -> String {
        let lacking = |label: &str, verb: &str| {
            format!(
                "{label} {}: {} of {} nodes {verb}{}",
                self.requirement,
                self.nodes.len(),
                self.of_nodes.unwrap_or(self.nodes.len()),
                if self.nodes.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", node_list(&self.nodes))
                }
            )
        };
        let what = match self.kind {
            "resources" => return self.resources_sentence(),
            "taint" => format!("taint {}", self.taint),
            "selector" => return lacking("nodeSelector", "lack it"),
            "affinity" => return lacking("node affinity needs", "do not match"),
            "spread" => return lacking("topology spread needs label", "lack it"),
            "ports" => {
                let held: Vec<String> = self
                    .nodes
                    .iter()
                    .zip(&self.held_by)
                    .take(3)
                    .map(|(n, p)| format!("{n} by Pod {p}"))
                    .collect();
                let more = self.nodes.len().saturating_sub(3);
                return format!(
                    "{} already taken on {} of {} nodes ({}{})",
                    self.requirement,
                    self.nodes.len(),
                    self.of_nodes.unwrap_or(self.nodes.len()),
                    held.join(", "),
                    if more > 0 {
                        format!(" and {more} more")
                    } else {
                        String::new()
                    }
                );
            }
            "volume" => {
                let label = format!("volume {} (claim {}) needs", self.volume, self.claim);
                return lacking(&label, "lack it");
            }
            _ => "cordoned".to_string(),
        };
        let mut s = format!(
            "{what} on {} node{} ({})",
            self.nodes.len(),
            if self.nodes.len() == 1 { "" } else { "s" },
            node_list(&self.nodes)
        );
        if let Some(since) = self.since_ms {
            s.push_str(&format!(" since {}", rfc3339(since)));
            if self.since_from_fields {
                s.push_str(" (its writer's last write, managedFields)");
            }
        }
        match (self.by.len(), self.by_unsure) {
            (0, _) => {}
            (1, _) | (_, false) => s.push_str(&format!(" by {}", self.by.join(", "))),
            (_, true) => s.push_str(&format!(" by one of {}", self.by.join(", "))),
        }
        s
    }
}

impl Cause {
    /// `Insufficient cpu: the Pod requests 100 cpu; the most free on any node is 3.5 cpu (n1)`.
    fn resources_sentence(&self) -> String {
        let show = |v: i64| crate::quantity::show(&self.resource, i128::from(v));
        let mut s = format!("{}:", self.reason);
        // NB: every Pod takes one slot of a Node's `pods`; saying so adds nothing.
        if let Some(r) = self.requested.filter(|_| self.resource != "pods") {
            s.push_str(&format!(" the Pod requests {};", show(r)));
        }
        match self.most_free {
            Some(free) => s.push_str(&format!(
                " the most free on any node is {} ({})",
                show(free),
                node_list(&self.nodes)
            )),
            None => s.push_str(&format!(" no node has {} allocatable", self.resource)),
        }
        if self.partial {
            s.push_str(" (Pods of other namespaces not counted)");
        }
        s
    }
}

/// What the Pods bound to each Node request: what `Insufficient R` weighs
/// against the Node's allocatable.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Usage {
    /// Node name -> resource -> the summed requests of its non-terminal Pods;
    /// `pods` counts them.
    pub by_node: BTreeMap<String, BTreeMap<String, i128>>,
    /// Node name -> the ports its non-terminal Pods take, and which Pod
    /// (`namespace/name`) takes each.
    pub ports: BTreeMap<String, Vec<(String, String)>>,
    /// Only Pods of some namespaces were counted: live `check -n` whose
    /// cluster-wide list was forbidden (that namespace), or a recording made
    /// with `record -n` (empty).
    pub only_namespace: Option<String>,
}

impl Usage {
    /// Adds what another list counted (another type's, in a live snapshot).
    pub fn merge(&mut self, other: Usage) {
        for (node, used) in other.by_node {
            let total = self.by_node.entry(node).or_default();
            for (r, v) in used {
                *total.entry(r).or_default() += v;
            }
        }
        for (node, ports) in other.ports {
            self.ports.entry(node).or_default().extend(ports);
        }
    }

    /// Counts `o` if it is a Pod that holds resources on a Node: bound, and
    /// neither Succeeded nor Failed (the scheduler's own rule).
    pub fn add(&mut self, o: &RecordedObject) {
        let s = &o.state;
        if o.object.kind != "Pod"
            || o.object.api_version != "v1"
            || s.node_name.is_empty()
            || matches!(s.phase.as_str(), "Succeeded" | "Failed")
        {
            return;
        }
        let node = self.by_node.entry(s.node_name.clone()).or_default();
        for (r, v) in &s.requests {
            *node.entry(r.clone()).or_default() += i128::from(*v);
        }
        *node.entry("pods".to_string()).or_default() += 1;
        if !s.host_ports.is_empty() {
            let who = format!("{}/{}", o.object.namespace, o.object.name);
            self.ports
                .entry(s.node_name.clone())
                .or_default()
                .extend(s.host_ports.iter().map(|p| (p.clone(), who.clone())));
        }
    }
}

/// The `R` of an `Insufficient R` reason; `pods` for "Too many pods", the
/// NodeResourcesFit wording when a Node's `pods` allocatable is used up.
fn insufficient(reason: &str) -> Option<&str> {
    if reason == "Too many pods" {
        return Some("pods");
    }
    reason
        .strip_prefix("Insufficient ")
        .map(str::trim)
        .filter(|r| !r.is_empty())
}

/// What the Pod requests of `resource` against the most any Node has free.
fn resource_cause(
    reason: &str,
    resource: &str,
    pod: &PodNeeds,
    nodes: &[&RecordedObject],
    usage: &Usage,
) -> Option<Cause> {
    // NB: Nodes recorded before allocatable was kept say nothing; no guess then.
    if nodes.iter().all(|n| n.state.allocatable.is_empty()) {
        return None;
    }
    let requested = if resource == "pods" {
        Some(1)
    } else {
        pod.requests.get(resource).copied()
    };
    let mut best: Option<(i128, Vec<String>)> = None;
    for node in nodes {
        let Some(allocatable) = node.state.allocatable.get(resource) else {
            continue;
        };
        let used = usage
            .by_node
            .get(&node.object.name)
            .and_then(|u| u.get(resource))
            .copied()
            .unwrap_or(0);
        // NB: static Pods and overcommit can leave less than nothing; none is free then.
        let free = (i128::from(*allocatable) - used).max(0);
        match &mut best {
            Some((most, names)) if *most == free => names.push(node.object.name.clone()),
            Some((most, _)) if *most > free => {}
            _ => best = Some((free, vec![node.object.name.clone()])),
        }
    }
    let (most_free, names) = match best {
        Some((free, names)) => (Some(free.min(i128::from(i64::MAX)) as i64), names),
        None => (None, Vec::new()),
    };
    Some(Cause {
        reason: reason.to_string(),
        kind: "resources",
        resource: resource.to_string(),
        requested,
        most_free,
        partial: usage.only_namespace.is_some(),
        nodes: names,
        of_nodes: Some(nodes.len()),
        ..Cause::default()
    })
}

/// Whether a scheduler reason is about taints (new and old wordings).
fn is_taint_reason(reason: &str) -> bool {
    reason.contains("untolerated taint") || reason.contains("taints that the pod didn't tolerate")
}

/// Whether a scheduler reason is about node selectors or affinity (1.18+ and older).
fn is_selector_reason(reason: &str) -> bool {
    reason.contains("node affinity/selector") || reason.contains("match node selector")
}

/// Whether a scheduler reason is about a bound volume's node affinity
/// (VolumeBinding): today "didn't match PersistentVolume's node affinity"
/// (what the test cluster's scheduler writes), formerly "had volume node
/// affinity conflict".
fn is_volume_reason(reason: &str) -> bool {
    reason.contains("volume node affinity conflict")
        || reason.contains("match PersistentVolume's node affinity")
}

/// Whether a scheduler reason is about cordoned Nodes.
fn is_cordon_reason(reason: &str) -> bool {
    reason.contains("were unschedulable")
}

/// What a Pod asks of the Node it may run on.
#[derive(Debug, Clone, Copy)]
pub struct PodNeeds<'a> {
    pub tolerations: &'a [Toleration],
    /// The two tolerations admission adds (`ObjectState::default_tolerations`).
    pub default_tolerations: bool,
    pub node_selector: &'a BTreeMap<String, String>,
    pub node_affinity: &'a [Vec<crate::model::Requirement>],
    /// Per resource, as [`crate::model::ObjectState::requests`].
    pub requests: &'a BTreeMap<String, i64>,
    /// The PersistentVolumes its claims are bound to that only some Nodes
    /// can reach: the snapshot resolves them (Pod → claim → volume).
    pub volumes: &'a [VolumeNeed<'a>],
    /// The topologyKeys of its spread constraints that filter Nodes.
    pub spread: &'a [String],
    /// The Node ports it takes (`8080/TCP`).
    pub host_ports: &'a [String],
}

/// A bound volume's required node affinity, reached through a Pod's claim.
#[derive(Debug, Clone, Copy)]
pub struct VolumeNeed<'a> {
    pub claim: &'a str,
    pub volume: &'a str,
    /// The PersistentVolume's `spec.nodeAffinity.required`: terms ORed.
    pub terms: &'a [Vec<crate::model::Requirement>],
}

/// No requests at all.
static NO_REQUESTS: BTreeMap<String, i64> = BTreeMap::new();

/// No selector at all: what `Default` would give if `&BTreeMap` had one.
static NO_SELECTOR: BTreeMap<String, String> = BTreeMap::new();

impl Default for PodNeeds<'_> {
    fn default() -> Self {
        PodNeeds {
            tolerations: &[],
            default_tolerations: false,
            node_selector: &NO_SELECTOR,
            node_affinity: &[],
            requests: &NO_REQUESTS,
            volumes: &[],
            spread: &[],
            host_ports: &[],
        }
    }
}

impl<'a> PodNeeds<'a> {
    pub fn of(state: &'a crate::model::ObjectState) -> PodNeeds<'a> {
        PodNeeds {
            tolerations: &state.tolerations,
            default_tolerations: state.default_tolerations,
            node_selector: &state.node_selector,
            node_affinity: &state.node_affinity,
            requests: &state.requests,
            volumes: &[],
            spread: &state.spread,
            host_ports: &state.host_ports,
        }
    }
}

/// The causes behind `reasons` for a Pod with these needs, from `nodes`
/// (the snapshot's Nodes), what the recording knows of their history, and
/// what the Pods bound to them request.
pub fn explain(
    reasons: &[String],
    pod: &PodNeeds,
    nodes: &[&RecordedObject],
    origins: &[Origin],
    usage: &Usage,
) -> Vec<Cause> {
    let mut causes = Vec::new();
    if let Some(reason) = reasons.iter().find(|r| is_taint_reason(r)) {
        causes.extend(taint_causes(reason, pod, nodes, origins));
    }
    if let Some(reason) = reasons.iter().find(|r| is_cordon_reason(r)) {
        causes.extend(cordon_cause(reason, nodes, origins));
    }
    if let Some(reason) = reasons.iter().find(|r| is_selector_reason(r)) {
        causes.extend(selector_causes(reason, pod, nodes));
    }
    for reason in reasons {
        if let Some(resource) = insufficient(reason) {
            causes.extend(resource_cause(reason, resource, pod, nodes, usage));
        }
    }
    if let Some(reason) = reasons.iter().find(|r| is_volume_reason(r)) {
        causes.extend(volume_causes(reason, pod, nodes));
    }
    // NB: "node(s) didn't have free ports for the requested pod ports": the
    // scheduler names neither the port nor the Pod that holds it.
    if let Some(reason) = reasons.iter().find(|r| r.contains("free ports")) {
        causes.extend(port_causes(reason, pod, nodes, usage));
    }
    if let Some(reason) = reasons
        .iter()
        .find(|r| r.contains("topology spread constraint"))
    {
        // NB: "(missing required label)": a Node without the constraint's
        // topologyKey cannot take the Pod; the scheduler does not say which key.
        for key in pod.spread {
            let lacking: Vec<String> = nodes
                .iter()
                .filter(|n| !n.state.labels.contains_key(key))
                .map(|n| n.object.name.clone())
                .collect();
            if !lacking.is_empty() {
                causes.push(Cause {
                    reason: reason.clone(),
                    kind: "spread",
                    requirement: key.clone(),
                    nodes: lacking,
                    of_nodes: Some(nodes.len()),
                    ..Cause::default()
                });
            }
        }
    }
    causes
}

/// Where a Node's scheduling-relevant change came from, if the recording knows.
fn origin_of<'a>(origins: &'a [Origin], node: &str, what: &str) -> Option<&'a Origin> {
    origins.iter().find(|o| o.node == node && o.what == what)
}

/// Each taint the Pod does not tolerate, with its Nodes, since when and by
/// whom: the taint on most Nodes first (it is the one that blocks most).
fn taint_causes(
    reason: &str,
    pod: &PodNeeds,
    nodes: &[&RecordedObject],
    origins: &[Origin],
) -> Vec<Cause> {
    let defaults: Vec<Toleration> = if pod.default_tolerations {
        crate::model::DEFAULT_TOLERATION_KEYS
            .iter()
            .map(|k| Toleration::default_for(k))
            .collect()
    } else {
        Vec::new()
    };
    let tolerated = |taint: &crate::model::Taint| {
        pod.tolerations
            .iter()
            .chain(&defaults)
            .any(|t| t.tolerates(taint))
    };
    // Untolerated taint -> (nodes, earliest start, writers).
    let mut by_taint: BTreeMap<String, Cause> = BTreeMap::new();
    for node in nodes {
        for taint in node.state.taints.iter().filter(|t| t.filters()) {
            if tolerated(taint) {
                continue;
            }
            let text = taint.text();
            let cause = by_taint.entry(text.clone()).or_insert_with(|| Cause {
                reason: reason.to_string(),
                kind: "taint",
                taint: text.clone(),
                ..Cause::default()
            });
            cause.nodes.push(node.object.name.clone());
            let (since, by) = match origin_of(origins, &node.object.name, &text) {
                Some(o) => {
                    cause.by_unsure |= !o.owned;
                    if cause.since_ms.is_none_or(|s| o.since < s) {
                        cause.since_from_fields = o.from_fields;
                    }
                    (Some(o.since), o.by.clone())
                }
                None => (taint.added, Vec::new()),
            };
            if let Some(since) = since {
                cause.since_ms = Some(cause.since_ms.map_or(since, |s| s.min(since)));
            }
            for w in by {
                if !cause.by.contains(&w) {
                    cause.by.push(w);
                }
            }
        }
    }
    let mut taints: Vec<Cause> = by_taint.into_values().collect();
    taints.sort_by(|a, b| {
        b.nodes
            .len()
            .cmp(&a.nodes.len())
            .then(a.taint.cmp(&b.taint))
    });
    taints
}

/// The cordoned Nodes, since when and by whom; None when none is.
fn cordon_cause(reason: &str, nodes: &[&RecordedObject], origins: &[Origin]) -> Option<Cause> {
    let mut cordon = Cause {
        reason: reason.to_string(),
        kind: "cordon",
        ..Cause::default()
    };
    for node in nodes.iter().filter(|n| n.state.unschedulable) {
        cordon.nodes.push(node.object.name.clone());
        if let Some(o) = origin_of(origins, &node.object.name, CORDON) {
            cordon.by_unsure |= !o.owned;
            cordon.since_ms = Some(cordon.since_ms.map_or(o.since, |s| s.min(o.since)));
            for w in &o.by {
                if !cordon.by.contains(w) {
                    cordon.by.push(w.clone());
                }
            }
        }
    }
    (!cordon.nodes.is_empty()).then_some(cordon)
}

/// Each host port the Pod asks for, with the Nodes where it is taken and by whom.
fn port_causes(
    reason: &str,
    pod: &PodNeeds,
    nodes: &[&RecordedObject],
    usage: &Usage,
) -> Vec<Cause> {
    let mut causes = Vec::new();
    for port in pod.host_ports {
        let mut cause = Cause {
            reason: reason.to_string(),
            kind: "ports",
            requirement: format!("hostPort {port}"),
            of_nodes: Some(nodes.len()),
            ..Cause::default()
        };
        for node in nodes {
            let held = usage
                .ports
                .get(&node.object.name)
                .and_then(|ps| ps.iter().find(|(p, _)| p == port));
            if let Some((_, who)) = held {
                cause.nodes.push(node.object.name.clone());
                cause.held_by.push(who.clone());
            }
        }
        if !cause.nodes.is_empty() {
            causes.push(cause);
        }
    }
    causes
}

/// A requirement as a label: `key=value` for `In` with one value (what a
/// zonal volume asks), else as written (`key In [a, b]`).
fn label_text(r: &crate::model::Requirement) -> String {
    match (r.operator.as_str(), r.values.as_slice()) {
        ("In", [one]) => format!("{}={one}", r.key),
        _ => r.text(),
    }
}

/// Each bound volume whose required node affinity some Nodes do not meet:
/// what it requires and the Nodes that lack it. The scheduler's
/// VolumeBinding filter rejects a Node that meets none of the volume's terms.
fn volume_causes(reason: &str, pod: &PodNeeds, nodes: &[&RecordedObject]) -> Vec<Cause> {
    let mut causes = Vec::new();
    for v in pod.volumes.iter().filter(|v| !v.terms.is_empty()) {
        let lacking: Vec<String> = nodes
            .iter()
            .filter(|n| {
                !v.terms.iter().any(|term| {
                    term.iter()
                        .all(|r| r.matches(&n.state.labels, &n.object.name))
                })
            })
            .map(|n| n.object.name.clone())
            .collect();
        if lacking.is_empty() {
            continue;
        }
        let requirement = v
            .terms
            .iter()
            .map(|term| term.iter().map(label_text).collect::<Vec<_>>().join(", "))
            .collect::<Vec<_>>()
            .join(" or ");
        causes.push(Cause {
            reason: reason.to_string(),
            kind: "volume",
            volume: v.volume.to_string(),
            claim: v.claim.to_string(),
            requirement,
            nodes: lacking,
            of_nodes: Some(nodes.len()),
            ..Cause::default()
        });
    }
    causes
}

/// The nodeSelector labels, and the required node affinity requirements,
/// that Nodes lack. Only what excludes some Node is named.
fn selector_causes(reason: &str, pod: &PodNeeds, nodes: &[&RecordedObject]) -> Vec<Cause> {
    let mut causes = Vec::new();
    let cause = |kind, requirement: String, lacking: Vec<String>| Cause {
        reason: reason.to_string(),
        kind,
        requirement,
        nodes: lacking,
        of_nodes: Some(nodes.len()),
        ..Cause::default()
    };
    for (key, value) in pod.node_selector {
        let lacking: Vec<String> = nodes
            .iter()
            .filter(|n| n.state.labels.get(key) != Some(value))
            .map(|n| n.object.name.clone())
            .collect();
        if !lacking.is_empty() {
            causes.push(cause("selector", format!("{key}={value}"), lacking));
        }
    }
    // NB: terms are ORed; when some Node meets a whole term, affinity is not
    // what keeps the Pod off the rest.
    let meets = |n: &&RecordedObject, term: &[crate::model::Requirement]| {
        term.iter()
            .all(|r| r.matches(&n.state.labels, &n.object.name))
    };
    let any_term_met = pod
        .node_affinity
        .iter()
        .any(|term| nodes.iter().any(|n| meets(n, term)));
    if !any_term_met {
        for term in pod.node_affinity {
            for r in term {
                let lacking: Vec<String> = nodes
                    .iter()
                    .filter(|n| !r.matches(&n.state.labels, &n.object.name))
                    .map(|n| n.object.name.clone())
                    .collect();
                if !lacking.is_empty() {
                    causes.push(cause("affinity", r.text(), lacking));
                }
            }
        }
    }
    causes
}

/// The origins of every taint and cordon a Node has at the end of
/// `versions` (oldest first): the start of each one's latest unbroken run.
pub fn origins(node: &str, versions: &[crate::model::Version]) -> Vec<Origin> {
    let mut open: BTreeMap<String, Origin> = BTreeMap::new();
    for v in versions {
        let mut present: Vec<String> = v.state.taints.iter().map(|t| t.text()).collect();
        if v.state.unschedulable {
            present.push(CORDON.to_string());
        }
        open.retain(|what, _| present.contains(what));
        for what in present {
            let taint = v.state.taints.iter().find(|t| t.text() == what);
            let owners = taint.map(|t| t.owners.clone()).unwrap_or_default();
            // NB: a run that starts at the first version recorded (a list)
            // began earlier: the owners' last write is the earliest evidence
            // (issue 27.14: "since" was the recording's start).
            let first = std::ptr::eq(v, &versions[0]);
            let since = match taint.and_then(|t| t.written) {
                Some(w) if first && w < v.at => w,
                _ => v.at,
            };
            open.entry(what.clone()).or_insert_with(|| Origin {
                node: node.to_string(),
                what,
                since,
                from_fields: since != v.at,
                owned: !owners.is_empty(),
                by: if owners.is_empty() {
                    v.writers.clone()
                } else {
                    owners
                },
            });
        }
    }
    open.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::fixtures::object;
    use crate::model::{Taint, Version};

    fn taint(key: &str, value: &str, effect: &str) -> Taint {
        Taint {
            key: key.into(),
            value: value.into(),
            effect: effect.into(),
            added: None,
            owners: Vec::new(),
            written: None,
        }
    }

    fn node(name: &str, taints: Vec<Taint>) -> RecordedObject {
        let mut n = object("Node", "", name);
        n.state.taints = taints;
        n
    }

    const TAINTED: &str = "node(s) had untolerated taint(s)";

    #[test]
    fn the_untolerated_taint_is_named_with_its_nodes() {
        let maintenance = taint("drill/maintenance", "true", "NoSchedule");
        let nodes = [
            node("a", vec![maintenance.clone()]),
            node("b", vec![maintenance.clone()]),
            node(
                "c",
                vec![maintenance, taint("dedicated", "batch", "NoSchedule")],
            ),
        ];
        let refs: Vec<&RecordedObject> = nodes.iter().collect();
        let causes = explain(
            &[TAINTED.into()],
            &PodNeeds::default(),
            &refs,
            &[],
            &Usage::default(),
        );
        assert_eq!(causes.len(), 2);
        assert_eq!(causes[0].taint, "drill/maintenance=true:NoSchedule");
        assert_eq!(causes[0].nodes, vec!["a", "b", "c"]);
        assert_eq!(causes[1].taint, "dedicated=batch:NoSchedule");
        assert_eq!(
            causes[0].sentence(|_| String::new()),
            "taint drill/maintenance=true:NoSchedule on 3 nodes (a, b, c)"
        );
    }

    #[test]
    fn tolerated_and_scoring_only_taints_are_not_causes() {
        let nodes = [node(
            "a",
            vec![
                taint("dedicated", "batch", "NoSchedule"),
                taint("soft", "", "PreferNoSchedule"),
            ],
        )];
        let refs: Vec<&RecordedObject> = nodes.iter().collect();
        let tolerate = Toleration {
            key: "dedicated".into(),
            operator: "Equal".into(),
            value: "batch".into(),
            effect: "NoSchedule".into(),
        };
        let tolerations = [tolerate];
        let pod = PodNeeds {
            tolerations: &tolerations,
            ..PodNeeds::default()
        };
        assert!(explain(&[TAINTED.into()], &pod, &refs, &[], &Usage::default()).is_empty());
    }

    #[test]
    fn the_admission_defaults_tolerate_an_unreachable_node() {
        let nodes = [node(
            "a",
            vec![
                taint("node.kubernetes.io/unreachable", "", "NoExecute"),
                taint("node.kubernetes.io/unreachable", "", "NoSchedule"),
            ],
        )];
        let refs: Vec<&RecordedObject> = nodes.iter().collect();
        let pod = PodNeeds {
            default_tolerations: true,
            ..PodNeeds::default()
        };
        let causes = explain(&[TAINTED.into()], &pod, &refs, &[], &Usage::default());
        assert_eq!(causes.len(), 1, "{causes:?}");
        assert_eq!(causes[0].taint, "node.kubernetes.io/unreachable:NoSchedule");
    }

    #[test]
    fn tolerations_follow_the_api_rules() {
        let t = taint("k", "v", "NoExecute");
        let tol = |key: &str, op: &str, value: &str, effect: &str| Toleration {
            key: key.into(),
            operator: op.into(),
            value: value.into(),
            effect: effect.into(),
        };
        assert!(
            tol("", "Exists", "", "").tolerates(&t),
            "empty key and Exists: all"
        );
        assert!(tol("k", "Exists", "", "NoExecute").tolerates(&t));
        assert!(
            tol("k", "", "v", "").tolerates(&t),
            "empty operator is Equal"
        );
        assert!(!tol("k", "Equal", "w", "").tolerates(&t));
        assert!(!tol("k", "Exists", "", "NoSchedule").tolerates(&t));
        assert!(!tol("j", "Exists", "", "").tolerates(&t));
    }

    #[test]
    fn the_recording_says_since_when_and_by_whom() {
        let mut nodes = [node(
            "a",
            vec![taint("drill/maintenance", "true", "NoSchedule")],
        )];
        nodes[0].state.unschedulable = true;
        let version = |at: i64, taints: Vec<Taint>, cordon: bool, by: &str| {
            let mut v = Version {
                at,
                writers: vec![by.into()],
                ..Version::default()
            };
            v.state.taints = taints;
            v.state.unschedulable = cordon;
            v
        };
        let m = || vec![taint("drill/maintenance", "true", "NoSchedule")];
        let history = [
            version(1_000, m(), false, "kubectl-taint"),
            version(2_000, vec![], false, "kubectl-taint"),
            version(3_000, m(), false, "kubectl-taint"),
            version(4_000, m(), true, "kubectl-cordon"),
            version(5_000, m(), true, "kwok"),
        ];
        let origins = origins("a", &history);
        let refs: Vec<&RecordedObject> = nodes.iter().collect();
        let causes = explain(
            &[TAINTED.into(), "1 node(s) were unschedulable".into()],
            &PodNeeds::default(),
            &refs,
            &origins,
            &Usage::default(),
        );
        assert_eq!(causes[0].since_ms, Some(3_000), "the latest unbroken run");
        assert_eq!(causes[0].by, vec!["kubectl-taint"]);
        assert_eq!(causes[1].kind, "cordon");
        assert_eq!(causes[1].since_ms, Some(4_000));
        assert_eq!(
            causes[1].sentence(|ms| format!("t{ms}")),
            "cordoned on 1 node (a) since t4000 by kubectl-cordon"
        );
    }

    /// Issue 27.2: "taint … by kube-controller-manager, kubectl-client-side-apply,
    /// kwok/status" named every writer of the Node's version, though only
    /// kubectl-client-side-apply owned spec.taints.
    #[test]
    fn a_taints_writer_is_the_owner_of_spec_taints_else_one_of_the_versions_writers() {
        let mut owned = taint("dedicated", "batch", "NoSchedule");
        owned.owners = vec!["kubectl-client-side-apply".into()];
        let nodes = [node("a", vec![owned.clone()])];
        let refs: Vec<&RecordedObject> = nodes.iter().collect();
        let writers = vec![
            "kube-controller-manager".to_string(),
            "kubectl-client-side-apply".into(),
            "kwok/status".into(),
        ];
        let mut v = Version {
            at: 1_000,
            writers: writers.clone(),
            ..Version::default()
        };
        v.state.taints = vec![owned];
        let sentence = |history: &[Version]| {
            let causes = explain(
                &[TAINTED.into()],
                &PodNeeds::default(),
                &refs,
                &origins("a", history),
                &Usage::default(),
            );
            causes[0].sentence(|ms| format!("t{ms}"))
        };
        assert_eq!(
            sentence(std::slice::from_ref(&v)),
            "taint dedicated=batch:NoSchedule on 1 node (a) since t1000 by kubectl-client-side-apply"
        );
        // A recording made before owners were kept: only "one of" the writers.
        v.state.taints[0].owners.clear();
        assert_eq!(
            sentence(&[v]),
            "taint dedicated=batch:NoSchedule on 1 node (a) since t1000 by one of kube-controller-manager, kubectl-client-side-apply, kwok/status"
        );
    }

    /// Issue 27.14: a taint first seen in a list had the recording's start as its "since".
    #[test]
    fn a_taint_listed_at_the_start_is_dated_by_its_writers_last_write() {
        let mut t = taint("dedicated", "batch", "NoSchedule");
        t.owners = vec!["kubectl-taint".into()];
        t.written = Some(400);
        let nodes = [node("a", vec![t.clone()])];
        let refs: Vec<&RecordedObject> = nodes.iter().collect();
        let mut listed = Version {
            at: 1_000,
            listed: true,
            ..Version::default()
        };
        listed.state.taints = vec![t];
        let causes = explain(
            &[TAINTED.into()],
            &PodNeeds::default(),
            &refs,
            &origins("a", &[listed]),
            &Usage::default(),
        );
        assert_eq!(causes[0].since_ms, Some(400));
        assert_eq!(
            causes[0].sentence(|ms| format!("t{ms}")),
            "taint dedicated=batch:NoSchedule on 1 node (a) since t400 (its writer's last write, managedFields) by kubectl-taint"
        );
    }

    #[test]
    fn a_spread_constraint_names_the_label_the_nodes_lack() {
        let mut zoned = node("n1", vec![]);
        zoned
            .state
            .labels
            .insert("topology.kubernetes.io/zone".into(), "a".into());
        let (bare1, bare2) = (node("n2", vec![]), node("n3", vec![]));
        let refs = vec![&zoned, &bare1, &bare2];
        let spread = [
            "topology.kubernetes.io/zone".to_string(),
            "rack".to_string(),
        ];
        let pod = PodNeeds {
            spread: &spread,
            ..PodNeeds::default()
        };
        let reason =
            "node(s) didn't match pod topology spread constraints (missing required label)";
        let causes = explain(&[reason.into()], &pod, &refs, &[], &Usage::default());
        let said: Vec<String> = causes
            .iter()
            .map(|c| c.sentence(|_| String::new()))
            .collect();
        assert_eq!(
            said,
            vec![
                "topology spread needs label topology.kubernetes.io/zone: 2 of 3 nodes lack it (n2, n3)",
                "topology spread needs label rack: 3 of 3 nodes lack it (n1, n2, n3)",
            ]
        );
        // Another reason says nothing of spread.
        assert!(
            explain(
                &["node(s) were unschedulable".into()],
                &pod,
                &refs,
                &[],
                &Usage::default()
            )
            .is_empty()
        );
    }

    const VOLUME: &str = "node(s) had volume node affinity conflict";

    #[test]
    fn a_volume_node_affinity_conflict_names_the_volume_and_its_zone() {
        let nodes = [
            labelled("a", &[("topology.kubernetes.io/zone", "eu-1b")]),
            labelled("b", &[("topology.kubernetes.io/zone", "eu-1a")]),
            labelled("c", &[]),
        ];
        let refs: Vec<&RecordedObject> = nodes.iter().collect();
        let zone = |z: &str| crate::model::Requirement {
            key: "topology.kubernetes.io/zone".into(),
            operator: "In".into(),
            values: vec![z.into()],
        };
        let eu1a = [vec![zone("eu-1a")]];
        let anywhere: [Vec<crate::model::Requirement>; 0] = [];
        let volumes = [
            VolumeNeed {
                claim: "data",
                volume: "pv-data",
                terms: &eu1a,
            },
            VolumeNeed {
                claim: "scratch",
                volume: "pv-scratch",
                terms: &anywhere,
            },
        ];
        let pod = PodNeeds {
            volumes: &volumes,
            ..PodNeeds::default()
        };
        let reasons = [format!("2 {VOLUME}")];
        let causes = explain(&reasons, &pod, &refs, &[], &Usage::default());
        assert_eq!(causes.len(), 1, "a volume any Node reaches is no cause");
        let c = &causes[0];
        assert_eq!(
            (c.kind, c.volume.as_str(), c.claim.as_str()),
            ("volume", "pv-data", "data")
        );
        assert_eq!(c.nodes, vec!["a", "c"]);
        assert_eq!(
            c.sentence(|_| String::new()),
            "volume pv-data (claim data) needs topology.kubernetes.io/zone=eu-1a: 2 of 3 nodes lack it (a, c)"
        );
        let json = serde_json::to_value(c).unwrap();
        assert_eq!(json["volume"], "pv-data");
        assert_eq!(json["requirement"], "topology.kubernetes.io/zone=eu-1a");
        assert_eq!(json["of_nodes"], 3);
        // Terms are ORed: a Node meeting either is not in conflict.
        let either = [vec![zone("eu-1a")], vec![zone("eu-1b")]];
        let volumes = [VolumeNeed {
            claim: "data",
            volume: "pv-data",
            terms: &either,
        }];
        let pod = PodNeeds {
            volumes: &volumes,
            ..PodNeeds::default()
        };
        let causes = explain(&reasons, &pod, &refs, &[], &Usage::default());
        assert_eq!(causes[0].nodes, vec!["c"]);
        // Today's wording of the same reason.
        let today = ["3 node(s) didn't match PersistentVolume's node affinity".to_string()];
        assert_eq!(
            explain(&today, &pod, &refs, &[], &Usage::default())[0].volume,
            "pv-data"
        );
        assert_eq!(
            causes[0].requirement,
            "topology.kubernetes.io/zone=eu-1a or topology.kubernetes.io/zone=eu-1b"
        );
    }

    #[test]
    fn without_what_explains_them_reasons_have_no_named_cause() {
        let nodes = [node("a", vec![taint("k", "", "NoSchedule")])];
        let refs: Vec<&RecordedObject> = nodes.iter().collect();
        assert!(
            explain(
                &["node(s) had volume node affinity conflict".into()],
                &PodNeeds::default(),
                &refs,
                &[],
                &Usage::default()
            )
            .is_empty()
        );
        // Nodes recorded before allocatable was kept: nothing to weigh, no guess.
        assert!(
            explain(
                &["Insufficient cpu".into()],
                &PodNeeds::default(),
                &refs,
                &[],
                &Usage::default()
            )
            .is_empty()
        );
    }

    fn sized(name: &str, cpu: i64, gpus: Option<i64>) -> RecordedObject {
        let mut n = object("Node", "", name);
        n.state.allocatable = [("cpu".to_string(), cpu), ("pods".to_string(), 110)].into();
        if let Some(g) = gpus {
            n.state.allocatable.insert("example.com/gpu".into(), g);
        }
        n
    }

    fn bound(node: &str, phase: &str, cpu: i64) -> RecordedObject {
        let mut p = object("Pod", "shop", &format!("on-{node}-{phase}-{cpu}"));
        p.state.node_name = node.into();
        p.state.phase = phase.into();
        p.state.requests = [("cpu".to_string(), cpu)].into();
        p
    }

    #[test]
    fn a_host_port_taken_names_the_nodes_and_the_pods_that_hold_it() {
        let nodes = [
            sized("a", 2_000, None),
            sized("b", 2_000, None),
            sized("c", 2_000, None),
        ];
        let refs: Vec<&RecordedObject> = nodes.iter().collect();
        let mut usage = Usage::default();
        for (node, phase) in [("a", "Running"), ("b", "Running"), ("c", "Succeeded")] {
            let mut p = bound(node, phase, 100);
            p.state.host_ports = vec!["8080/TCP".into()];
            usage.add(&p);
        }
        let ports = vec!["8080/TCP".to_string(), "9090/TCP".to_string()];
        let pod = PodNeeds {
            host_ports: &ports,
            ..PodNeeds::default()
        };
        let reason = "node(s) didn't have free ports for the requested pod ports".to_string();
        let causes = explain(&[reason], &pod, &refs, &[], &usage);
        assert_eq!(causes.len(), 1, "{causes:?}");
        assert_eq!(
            causes[0].sentence(|_| String::new()),
            "hostPort 8080/TCP already taken on 2 of 3 nodes (a by Pod shop/on-a-Running-100, \
             b by Pod shop/on-b-Running-100)"
        );
    }

    #[test]
    fn insufficient_weighs_the_request_against_the_most_free_on_any_node() {
        let nodes = [sized("small", 2_000, None), sized("large", 16_000, Some(1))];
        let refs: Vec<&RecordedObject> = nodes.iter().collect();
        let mut usage = Usage::default();
        for p in [
            bound("large", "Running", 12_500),
            bound("large", "Succeeded", 4_000),
            bound("small", "Pending", 1_000),
            object("Pod", "shop", "unbound"),
        ] {
            usage.add(&p);
        }
        let requests: BTreeMap<String, i64> = [
            ("cpu".to_string(), 100_000),
            ("example.com/gpu".to_string(), 2),
        ]
        .into();
        let pod = PodNeeds {
            requests: &requests,
            ..PodNeeds::default()
        };
        let reasons = [
            "Insufficient cpu".to_string(),
            "Insufficient example.com/gpu".to_string(),
            "Insufficient hugepages-2Mi".to_string(),
        ];
        let causes = explain(&reasons, &pod, &refs, &[], &usage);
        assert_eq!(causes.len(), 3);
        assert_eq!(causes[0].kind, "resources");
        assert_eq!(
            (causes[0].requested, causes[0].most_free),
            (Some(100_000), Some(3_500))
        );
        assert_eq!(
            causes[0].sentence(|_| String::new()),
            "Insufficient cpu: the Pod requests 100 cpu; the most free on any node is 3.5 cpu (large)"
        );
        assert_eq!(
            causes[1].sentence(|_| String::new()),
            "Insufficient example.com/gpu: the Pod requests 2 example.com/gpu; the most free on any node is 1 example.com/gpu (large)"
        );
        assert_eq!(
            causes[2].sentence(|_| String::new()),
            "Insufficient hugepages-2Mi: no node has hugepages-2Mi allocatable"
        );
    }

    #[test]
    fn a_full_node_has_nothing_free_and_ties_are_all_named() {
        let nodes = [
            sized("a", 1_000, None),
            sized("b", 500, None),
            sized("c", 500, None),
        ];
        let refs: Vec<&RecordedObject> = nodes.iter().collect();
        let mut usage = Usage {
            only_namespace: Some("shop".into()),
            ..Usage::default()
        };
        usage.add(&bound("a", "Running", 1_500));
        let requests: BTreeMap<String, i64> = [("cpu".to_string(), 600)].into();
        let pod = PodNeeds {
            requests: &requests,
            ..PodNeeds::default()
        };
        let causes = explain(&["Insufficient cpu".into()], &pod, &refs, &[], &usage);
        assert_eq!(
            causes[0].sentence(|_| String::new()),
            "Insufficient cpu: the Pod requests 600m cpu; the most free on any node is 500m cpu (b, c) (Pods of other namespaces not counted)"
        );
        let pods = explain(
            &["Too many pods".into()],
            &PodNeeds::default(),
            &refs,
            &[],
            &usage,
        );
        assert_eq!(pods[0].requested, Some(1));
        assert_eq!(pods[0].most_free, Some(110));
        assert_eq!(pods[0].nodes, vec!["b", "c"]);
        assert_eq!(
            pods[0].sentence(|_| String::new()),
            "Too many pods: the most free on any node is 110 pods (b, c) (Pods of other namespaces not counted)"
        );
    }

    const SELECTOR: &str = "node(s) didn't match Pod's node affinity/selector";

    fn labelled(name: &str, labels: &[(&str, &str)]) -> RecordedObject {
        let mut n = object("Node", "", name);
        n.state.labels = labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        n
    }

    #[test]
    fn the_missing_node_selector_label_is_named() {
        let nodes = [
            labelled("a", &[("disktype", "hdd")]),
            labelled("b", &[]),
            labelled("c", &[("disktype", "ssd")]),
        ];
        let refs: Vec<&RecordedObject> = nodes.iter().take(2).collect();
        let selector: BTreeMap<String, String> =
            [("disktype".to_string(), "ssd".to_string())].into();
        let pod = PodNeeds {
            node_selector: &selector,
            ..PodNeeds::default()
        };
        let causes = explain(&[SELECTOR.into()], &pod, &refs, &[], &Usage::default());
        assert_eq!(causes.len(), 1);
        assert_eq!(
            causes[0].sentence(|_| String::new()),
            "nodeSelector disktype=ssd: 2 of 2 nodes lack it (a, b)"
        );
    }

    #[test]
    fn affinity_is_named_only_when_no_node_meets_any_term() {
        let nodes = [
            labelled("a", &[("zone", "eu-1a")]),
            labelled("b", &[("zone", "eu-1b")]),
        ];
        let refs: Vec<&RecordedObject> = nodes.iter().collect();
        let term = |zone: &str| {
            vec![crate::model::Requirement {
                key: "zone".into(),
                operator: "In".into(),
                values: vec![zone.into()],
            }]
        };
        let unmet = [term("us-1a")];
        let selector = BTreeMap::new();
        let pod = PodNeeds {
            node_selector: &selector,
            node_affinity: &unmet,
            ..PodNeeds::default()
        };
        let causes = explain(&[SELECTOR.into()], &pod, &refs, &[], &Usage::default());
        assert_eq!(
            causes[0].sentence(|_| String::new()),
            "node affinity needs zone In [us-1a]: 2 of 2 nodes do not match (a, b)"
        );
        let met = [term("us-1a"), term("eu-1b")];
        let pod = PodNeeds {
            node_affinity: &met,
            ..pod
        };
        assert!(explain(&[SELECTOR.into()], &pod, &refs, &[], &Usage::default()).is_empty());
    }

    #[test]
    fn requirements_follow_the_scheduler_rules() {
        use crate::model::Requirement;
        let labels: BTreeMap<String, String> = [
            ("gpu".to_string(), "4".to_string()),
            ("zone".to_string(), "a".to_string()),
        ]
        .into();
        let r = |key: &str, op: &str, values: &[&str]| Requirement {
            key: key.into(),
            operator: op.into(),
            values: values.iter().map(|v| v.to_string()).collect(),
        };
        assert!(r("zone", "In", &["a", "b"]).matches(&labels, "n"));
        assert!(!r("zone", "NotIn", &["a"]).matches(&labels, "n"));
        assert!(r("missing", "NotIn", &["a"]).matches(&labels, "n"));
        assert!(r("gpu", "Gt", &["3"]).matches(&labels, "n"));
        assert!(!r("gpu", "Lt", &["3"]).matches(&labels, "n"));
        assert!(r("missing", "DoesNotExist", &[]).matches(&labels, "n"));
        assert!(r("metadata.name", "In", &["n"]).matches(&labels, "n"));
        assert!(!r("zone", "Bogus", &["a"]).matches(&labels, "n"));
    }

    #[test]
    fn many_nodes_are_counted_not_listed() {
        let names: Vec<String> = (0..5).map(|i| format!("n{i}")).collect();
        assert_eq!(node_list(&names), "n0, n1, n2 and 2 more");
    }
}
