//! Causes along the edges that owner references do not carry (issue 47): a
//! Service whose selector matches no Pod or no ready Pod (L001), a disruption
//! budget that allows no disruption and the cordoned Node it keeps from
//! draining (L002), Pods preempted and who took their room (L003), and a Pod
//! template that needs a ConfigMap, Secret, claim or ServiceAccount that does
//! not exist (L004).
//!
//! Most Pods are healthy and [`super::Relevance`] drops them, so what these
//! checks need of every Pod (labels, readiness, node, priority) and of every
//! named object (that it exists) is tallied into an [`Index`] while the
//! snapshot is built, whichever the source, before the Pods are dropped.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use serde_json::json;

use super::{Code, Finding, Options, Snapshot};
use crate::model::{ObjectRef, RecordedObject, Requirement};

/// What one Pod is for the relationship checks. NB: 150,000 of them are
/// held at once: label sets and Node names are shared.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PodEntry {
    pub name: String,
    /// What a preemption names it by.
    pub uid: String,
    /// Index of its Node's name in [`Index::nodes`].
    node: u32,
    /// Index of its labels in [`Index::sets`].
    set: u32,
    /// Ready, and not terminating: what an EndpointSlice serves.
    pub ready: bool,
    pub priority: i64,
    pub priority_class: String,
}

/// The kinds whose existence a reference needs (core v1), IngressClass
/// (cluster-scoped, `networking.k8s.io`) and a route's Gateway.
const NAMED: &[&str] = &[
    "ConfigMap",
    "Secret",
    "ServiceAccount",
    "PersistentVolumeClaim",
    "Service",
];

/// Every Pod's labels, readiness, node and priority, every named object's
/// existence, and every reference to one: tallied object by object.
#[derive(Debug, Clone, Default)]
pub struct Index {
    /// Distinct label sets (a ReplicaSet's Pods share one).
    sets: Vec<BTreeMap<String, String>>,
    set_ids: HashMap<BTreeMap<String, String>, u32>,
    /// Node names, each once.
    nodes: Vec<String>,
    node_ids: HashMap<String, u32>,
    /// The Pods, by namespace.
    pods: HashMap<String, Vec<PodEntry>>,
    /// (kind, namespace, name) of each ConfigMap, Secret, ServiceAccount and claim.
    names: HashSet<(String, String, String)>,
    /// The kinds of which at least one object was seen: a reference is
    /// called missing only when its kind was read at all.
    kinds: BTreeSet<String>,
    /// Objects that need others to exist, with what they need.
    referrers: Vec<(ObjectRef, Vec<String>)>,
    /// Each Service's ports (`80`, `80/http`), by (namespace, name).
    service_ports: HashMap<(String, String), Vec<String>>,
    /// Ingresses and routes, with the Service ports they send to.
    port_referrers: Vec<(ObjectRef, Vec<String>)>,
    /// Types read whole (full plural names, `secrets`): live, those listed
    /// (`Snapshot::examined`); from a recording, those its recorder watched.
    read_types: BTreeSet<String>,
}

impl Index {
    fn intern(&mut self, labels: &BTreeMap<String, String>) -> u32 {
        if let Some(id) = self.set_ids.get(labels) {
            return *id;
        }
        let id = self.sets.len() as u32;
        self.sets.push(labels.clone());
        self.set_ids.insert(labels.clone(), id);
        id
    }

    fn node_id(&mut self, node: &str) -> u32 {
        if let Some(id) = self.node_ids.get(node) {
            return *id;
        }
        let id = self.nodes.len() as u32;
        self.nodes.push(node.to_string());
        self.node_ids.insert(node.to_string(), id);
        id
    }

    /// The labels of a Pod of this index.
    pub fn labels(&self, p: &PodEntry) -> &BTreeMap<String, String> {
        &self.sets[p.set as usize]
    }

    /// The name of a Pod's Node (empty: not scheduled).
    pub fn node(&self, p: &PodEntry) -> &str {
        &self.nodes[p.node as usize]
    }

    /// Tallies one object (call for every object of the snapshot's moment).
    pub fn add(&mut self, o: &RecordedObject) {
        let s = &o.state;
        let kind = o.object.kind.as_str();
        let core = o.object.api_version == "v1";
        let named = (core && NAMED.contains(&kind))
            || (kind == "IngressClass" && o.object.api_version.starts_with("networking.k8s.io/"))
            || (matches!(kind, "Gateway" | "GatewayClass")
                && o.object
                    .api_version
                    .starts_with("gateway.networking.k8s.io/"));
        if named {
            self.kinds.insert(kind.to_string());
            self.names.insert((
                kind.to_string(),
                o.object.namespace.clone(),
                o.object.name.clone(),
            ));
            // NB: the default class also answers the nameless reference of
            // an Ingress that names none (`model::DEFAULT_INGRESS_CLASS_REF`).
            if kind == "IngressClass" && s.is_default && s.deletion.is_none() {
                self.names
                    .insert((kind.to_string(), String::new(), String::new()));
            }
        }
        let finished = match kind {
            "Pod" => matches!(s.phase.as_str(), "Succeeded" | "Failed"),
            "Job" => s
                .conditions
                .iter()
                .any(|c| matches!(c.type_.as_str(), "Complete" | "Failed") && c.status == "True"),
            _ => false,
        };
        if core && kind == "Pod" {
            self.kinds.insert("Pod".into());
            if finished {
                return;
            }
            let set = self.intern(&s.labels);
            let node = self.node_id(&s.node_name);
            let entry = PodEntry {
                name: o.object.name.clone(),
                uid: o.object.uid.clone(),
                node,
                set,
                ready: s.deletion.is_none()
                    && s.conditions
                        .iter()
                        .any(|c| c.type_ == "Ready" && c.status == "True"),
                priority: s.priority,
                priority_class: s.priority_class.clone(),
            };
            match self.pods.get_mut(&o.object.namespace) {
                Some(list) => list.push(entry),
                None => {
                    self.pods.insert(o.object.namespace.clone(), vec![entry]);
                }
            }
        }
        if !s.refs.is_empty() && !finished && s.deletion.is_none() {
            self.referrers.push((o.object.clone(), s.refs.clone()));
        }
        if core && kind == "Service" && !s.service_ports.is_empty() && s.deletion.is_none() {
            self.service_ports.insert(
                (o.object.namespace.clone(), o.object.name.clone()),
                s.service_ports.clone(),
            );
        }
        if !s.port_refs.is_empty() && s.deletion.is_none() {
            self.port_referrers
                .push((o.object.clone(), s.port_refs.clone()));
        }
    }

    /// Adds what another list tallied (another type's, in a live snapshot).
    pub fn merge(&mut self, other: Index) {
        for (ns, pods) in other.pods {
            let list: Vec<PodEntry> = pods
                .into_iter()
                .map(|mut p| {
                    p.set = self.intern(&other.sets[p.set as usize]);
                    p.node = self.node_id(&other.nodes[p.node as usize]);
                    p
                })
                .collect();
            self.pods.entry(ns).or_default().extend(list);
        }
        self.names.extend(other.names);
        self.kinds.extend(other.kinds);
        self.referrers.extend(other.referrers);
        self.service_ports.extend(other.service_ports);
        self.port_referrers.extend(other.port_referrers);
        self.read_types.extend(other.read_types);
    }

    /// Notes that every object of type `plural` (its full name) was read:
    /// a recording's watched types.
    pub fn mark_read(&mut self, plural: &str) {
        self.read_types.insert(plural.to_string());
    }

    /// Whether objects of `kind` were read: live, its type was listed; from a
    /// recording, its recorder watched it (or at least one was recorded).
    fn read(&self, snapshot: &Snapshot, kind: &str, plural: &str) -> bool {
        self.kinds.contains(kind)
            || self.read_types.contains(plural)
            || snapshot.examined.iter().any(|t| t == plural)
    }

    fn pods_of<'a>(&'a self, ns: &str) -> impl Iterator<Item = &'a PodEntry> + 'a {
        self.pods.get(ns).into_iter().flatten()
    }
}

/// Whether a Pod with `labels` is selected by all of `selector`.
fn selects(selector: &[Requirement], labels: &BTreeMap<String, String>) -> bool {
    selector.iter().all(|r| r.matches(labels, ""))
}

/// `app=web, tier=front`: a selector as `kubectl get -l` takes it, where it can.
fn selector_text(selector: &[Requirement]) -> String {
    selector
        .iter()
        .map(|r| match (r.operator.as_str(), r.values.as_slice()) {
            ("In", [v]) => format!("{}={v}", r.key),
            _ => r.text(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn names(pods: &[&PodEntry], at_most: usize) -> String {
    let mut out: Vec<&str> = pods.iter().take(at_most).map(|p| p.name.as_str()).collect();
    out.sort_unstable();
    let more = pods.len().saturating_sub(at_most);
    let mut text = out.join(", ");
    if more > 0 {
        text.push_str(&format!(" and {more} more"));
    }
    text
}

/// When a recorded object's current version began, when that was a change
/// the recording saw (not its first listing), with who wrote it.
fn changed(o: &RecordedObject) -> Option<(i64, String)> {
    let recorded_change = o.first_seen.is_some_and(|f| o.state_at > f);
    let at = if recorded_change {
        Some(o.state_at)
    } else {
        o.generation_since
    }?;
    Some((at, o.writers.join(", ")))
}

/// Runs the relationship checks.
pub fn check(snapshot: &Snapshot, _options: &Options) -> Vec<Finding> {
    let mut out = Vec::new();
    services(snapshot, &mut out);
    budgets(snapshot, &mut out);
    preempted(snapshot, &mut out);
    missing(snapshot, &mut out);
    ports(snapshot, &mut out);
    webhooks(snapshot, &mut out);
    volumes(snapshot, &mut out);
    // NB: what blocks now first, what only may (infos) after.
    out.sort_by_key(|f| std::cmp::Reverse(f.severity));
    out
}

/// L001: a Service whose selector matches no Pod, or none that is ready.
fn services(snapshot: &Snapshot, out: &mut Vec<Finding>) {
    let index = &snapshot.index;
    if !index.read(snapshot, "Pod", "pods") {
        return;
    }
    for o in &snapshot.objects {
        let s = &o.state;
        if o.object.kind != "Service" || o.object.api_version != "v1" || s.pod_selector.is_empty() {
            continue;
        }
        let ns = o.object.namespace.as_str();
        let matching: Vec<&PodEntry> = index
            .pods_of(ns)
            .filter(|p| selects(&s.pod_selector, index.labels(p)))
            .collect();
        let ready = matching.iter().filter(|p| p.ready).count();
        let wanted = selector_text(&s.pod_selector);
        let change = changed(o);
        let last_change = change
            .as_ref()
            .map(|(at, by)| {
                let by = if by.is_empty() {
                    String::new()
                } else {
                    format!(" by {by}")
                };
                format!("; its spec last changed {}{by}", crate::units::rfc3339(*at))
            })
            .unwrap_or_default();
        if matching.is_empty() {
            let (closest, groups) = closest(index, ns, &s.pod_selector);
            let instead = match closest {
                Some(text) => format!("; closest: {text}"),
                None if groups == 0 => format!("; namespace {ns} has no Pods"),
                None => "; no Pod here has any of these labels".to_string(),
            };
            out.push(Finding::new(
                Code::L001,
                &o.object,
                format!(
                    "selects {wanted}: no Pod matches, it has no endpoints{instead}{last_change}"
                ),
                change.as_ref().map(|(at, _)| *at),
                json!({"selector": wanted, "matching": 0, "ready": 0}),
            ));
        } else if ready == 0 && !s.publish_not_ready {
            // NB: with publishNotReadyAddresses, not-ready Pods are endpoints.
            out.push(Finding::new(
                Code::L001,
                &o.object,
                format!(
                    "selects {wanted}: {} Pod(s) match ({}), none is Ready: it has no ready endpoints{last_change}",
                    matching.len(),
                    names(&matching, 3)
                ),
                change.as_ref().map(|(at, _)| *at),
                json!({"selector": wanted, "matching": matching.len(), "ready": 0}),
            ));
        }
    }
}

/// The label set of `ns` that meets most of `selector` (at least one
/// requirement), said as "N Pod(s) with k=v … (not k2=v2)"; and how many
/// label sets the namespace has.
fn closest(index: &Index, ns: &str, selector: &[Requirement]) -> (Option<String>, usize) {
    let mut by_set: BTreeMap<u32, usize> = BTreeMap::new();
    for p in index.pods_of(ns) {
        *by_set.entry(p.set).or_default() += 1;
    }
    let best = by_set
        .iter()
        .map(|(set, n)| {
            let labels = &index.sets[*set as usize];
            let met = selector.iter().filter(|r| r.matches(labels, "")).count();
            (met, *n, *set)
        })
        .filter(|(met, _, _)| *met > 0)
        .max_by_key(|(met, n, set)| (*met, *n, std::cmp::Reverse(*set)));
    let text = best.map(|(_, n, set)| {
        let labels = &index.sets[set as usize];
        let unmet: Vec<String> = selector
            .iter()
            .filter(|r| !r.matches(labels, ""))
            .map(|r| match labels.get(&r.key) {
                Some(v) => format!("{}={v}", r.key),
                None => format!("no {}", r.key),
            })
            .collect();
        format!(
            "{n} Pod(s) with {} but {}",
            selector_text(
                &selector
                    .iter()
                    .filter(|r| r.matches(labels, ""))
                    .cloned()
                    .collect::<Vec<_>>()
            ),
            unmet.join(", ")
        )
    });
    (text, by_set.len())
}

/// L002: a disruption budget that allows no disruption; a warning when a
/// cordoned Node runs Pods it covers (a drain that cannot finish).
fn budgets(snapshot: &Snapshot, out: &mut Vec<Finding>) {
    let index = &snapshot.index;
    let pods_read = index.read(snapshot, "Pod", "pods");
    let cordoned: BTreeMap<&str, &RecordedObject> = snapshot
        .objects
        .iter()
        .filter(|n| n.object.kind == "Node" && n.state.unschedulable)
        .map(|n| (n.object.name.as_str(), n))
        .collect();
    for o in &snapshot.objects {
        if o.object.kind != "PodDisruptionBudget" {
            continue;
        }
        let s = &o.state;
        let Some(&allowed) = s.replicas.get("disruptionsAllowed") else {
            continue;
        };
        let count = |k: &str| s.replicas.get(k).copied().unwrap_or(0);
        let (healthy, desired, expected) = (
            count("currentHealthy"),
            count("desiredHealthy"),
            count("expectedPods"),
        );
        let ns = o.object.namespace.as_str();
        let covered: Vec<&PodEntry> = if pods_read {
            index
                .pods_of(ns)
                .filter(|p| s.selects(index.labels(p)))
                .collect()
        } else {
            Vec::new()
        };
        let wanted = if s.selects_all {
            "every Pod".to_string()
        } else {
            selector_text(&s.pod_selector)
        };
        if expected == 0 && (!pods_read || covered.is_empty()) {
            out.push(
                Finding::new(
                    Code::L002,
                    &o.object,
                    format!("selects {wanted}: no Pod matches, so it protects nothing"),
                    None,
                    json!({"selector": wanted, "expected": 0}),
                )
                .with_severity(super::Severity::Info),
            );
            continue;
        }
        if allowed > 0 {
            continue;
        }
        let health = if healthy < desired {
            format!("only {healthy} of the {desired} Pods it requires are healthy")
        } else {
            format!("{healthy} healthy, {desired} required")
        };
        let mut stuck: BTreeMap<&str, Vec<&PodEntry>> = BTreeMap::new();
        for p in &covered {
            let node = index.node(p);
            // NB: what the budget protects is a ready Pod; a terminating or
            // pending one is no part of what keeps the drain waiting.
            if p.ready && cordoned.contains_key(node) {
                stuck.entry(node).or_default().push(p);
            }
        }
        if stuck.is_empty() {
            out.push(
                Finding::new(
                    Code::L002,
                    &o.object,
                    format!("allows 0 disruptions ({health}): a drain of any Node that runs its Pods will wait"),
                    None,
                    json!({"selector": wanted, "allowed": 0, "healthy": healthy, "desired": desired}),
                )
                .with_severity(super::Severity::Info),
            );
            continue;
        }
        let origin = |node: &str| {
            snapshot
                .origins
                .iter()
                .find(|g| g.node == node && g.what == super::scheduling_causes::CORDON)
        };
        let nodes: Vec<String> = stuck
            .iter()
            .map(|(node, pods)| {
                let since = origin(node)
                    .map(|g| {
                        let by = if g.by.is_empty() {
                            String::new()
                        } else {
                            format!(" by {}", g.by.join(", "))
                        };
                        format!(" (cordoned {}{by})", crate::units::rfc3339(g.since))
                    })
                    .unwrap_or_default();
                format!("Node {node}{since} cannot drain {}", names(pods, 3))
            })
            .collect();
        let since = stuck
            .keys()
            .filter_map(|n| origin(n))
            .map(|g| g.since)
            .min();
        out.push(Finding::new(
            Code::L002,
            &o.object,
            format!("allows 0 disruptions ({health}): {}", nodes.join("; ")),
            since,
            json!({
                "selector": wanted, "allowed": 0, "healthy": healthy, "desired": desired,
                "cordoned": stuck.iter().map(|(n, pods)| json!({
                    "node": n, "pods": pods.iter().map(|p| &p.name).collect::<Vec<_>>()
                })).collect::<Vec<_>>(),
            }),
        ));
    }
}

/// Who preempted, from the scheduler's Event on the victim: `Preempted by pod
/// <uid> on node <node>` (1.28 and later), or `Preempted by <ns>/<name> on
/// node <node>` (before). Returns (preemptor, node).
pub fn preemptor(message: &str) -> Option<(&str, &str)> {
    let rest = message.strip_prefix("Preempted by ")?;
    let rest = rest
        .strip_prefix("pod ")
        .or_else(|| rest.strip_prefix("podgroup "))
        .unwrap_or(rest);
    let (who, node) = rest.split_once(" on node ")?;
    Some((who.trim(), node.trim()))
}

/// L003: Pods the scheduler preempted in the hour before the moment, with
/// the Pod that took their room, by name and priority.
fn preempted(snapshot: &Snapshot, out: &mut Vec<Finding>) {
    let index = &snapshot.index;
    // (victims' namespace, preemptor, node) -> victims
    let mut groups: BTreeMap<(String, String, String), Vec<&crate::model::EventSummary>> =
        BTreeMap::new();
    for e in &snapshot.events {
        if e.reason != "Preempted"
            || e.involved.kind != "Pod"
            || e.last < snapshot.at - 3_600_000
            || e.last > snapshot.at
        {
            continue;
        }
        let Some((who, node)) = preemptor(&e.message) else {
            continue;
        };
        groups
            .entry((
                e.involved.namespace.clone(),
                who.to_string(),
                node.to_string(),
            ))
            .or_default()
            .push(e);
    }
    let whole = index.read(snapshot, "Pod", "pods") && snapshot.usage.only_namespace.is_none();
    for ((_, who, node), victims) in groups {
        let found = index.pods.iter().find_map(|(ns, pods)| {
            pods.iter()
                .find(|p| (!p.uid.is_empty() && p.uid == who) || format!("{ns}/{}", p.name) == who)
                .map(|p| (ns.as_str(), p))
        });
        let by = match found {
            Some((ns, p)) => {
                let class = if p.priority_class.is_empty() {
                    String::new()
                } else {
                    format!(", class {}", p.priority_class)
                };
                format!("Pod {ns}/{} (priority {}{class})", p.name, p.priority)
            }
            // NB: gone only if every Pod was read: `check -n` lists one
            // namespace's, an import of Events none.
            None if !whole => format!("Pod {who} (not among the Pods read)"),
            None if who.contains('/') => format!("Pod {who} (gone, priority unknown)"),
            None => format!("the Pod with uid {who} (gone, name unknown)"),
        };
        let mut victims = victims;
        victims.sort_by(|a, b| a.involved.name.cmp(&b.involved.name));
        let mut victim_names: Vec<&str> =
            victims.iter().map(|e| e.involved.name.as_str()).collect();
        victim_names.dedup();
        let since = victims.iter().map(|e| e.first).min();
        let shown = victim_names
            .iter()
            .take(3)
            .copied()
            .collect::<Vec<_>>()
            .join(", ");
        let more = victim_names.len().saturating_sub(3);
        let more = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        out.push(Finding::new(
            Code::L003,
            &victims[0].involved,
            format!(
                "{} Pod(s) preempted by {by} on node {node}: {shown}{more}",
                victim_names.len()
            ),
            since,
            json!({
                "preemptor": found.map(|(ns, p)| format!("{ns}/{}", p.name)),
                "preemptor_uid": found.map_or(who.as_str(), |(_, p)| p.uid.as_str()),
                "priority": found.map(|(_, p)| p.priority),
                "node": node,
                "victims": victim_names,
            }),
        ));
    }
}

/// L004: a Pod or a Pod template that needs objects that do not exist.
fn missing(snapshot: &Snapshot, out: &mut Vec<Finding>) {
    let index = &snapshot.index;
    let plural = |kind: &str| match kind {
        "ConfigMap" => "configmaps",
        "Secret" => "secrets",
        "ServiceAccount" => "serviceaccounts",
        "Service" => "services",
        "IngressClass" => "ingressclasses.networking.k8s.io",
        "Gateway" => "gateways.gateway.networking.k8s.io",
        "GatewayClass" => "gatewayclasses.gateway.networking.k8s.io",
        _ => "persistentvolumeclaims",
    };
    for (object, refs) in &index.referrers {
        let absent: Vec<&str> = refs
            .iter()
            .filter(|r| {
                let Some((kind, name)) = r.split_once('/') else {
                    return false;
                };
                // NB: the classes are cluster-scoped.
                let ns = if crate::model::cluster_scoped_ref(kind) {
                    String::new()
                } else {
                    object.namespace.clone()
                };
                index.read(snapshot, kind, plural(kind))
                    && !index
                        .names
                        .contains(&(kind.to_string(), ns, name.to_string()))
            })
            .map(String::as_str)
            .collect();
        if absent.is_empty() {
            continue;
        }
        let (no_default, named): (Vec<&str>, Vec<&str>) = absent
            .iter()
            .partition(|r| **r == crate::model::DEFAULT_INGRESS_CLASS_REF);
        let whose = match object.kind.as_str() {
            "Pod" | "Ingress" | "Gateway" | "HTTPRoute" | "GRPCRoute" | "TLSRoute" | "TCPRoute"
            | "UDPRoute" => "it needs",
            "StatefulSet" if named.iter().all(|r| r.starts_with("Service/")) => "it needs",
            _ => "its Pod template needs",
        };
        let mut said = Vec::new();
        if !named.is_empty() {
            // NB: a class is the cluster's, not the namespace's.
            let class = named
                .iter()
                .filter_map(|r| r.split_once('/'))
                .find(|(kind, _)| crate::model::cluster_scoped_ref(kind))
                .map(|(kind, _)| {
                    let a = if kind.starts_with(['A', 'E', 'I', 'O', 'U']) {
                        "an"
                    } else {
                        "a"
                    };
                    format!(" ({a} {kind}: in the cluster)")
                })
                .unwrap_or_default();
            said.push(format!(
                "{whose} {} that {} not exist in {}{class}",
                named.join(", "),
                if named.len() == 1 { "does" } else { "do" },
                object.namespace,
            ));
        }
        if !no_default.is_empty() {
            said.push(
                "it names no IngressClass and none is marked the cluster's default: \
                 no Ingress controller is bound to serve it"
                    .to_string(),
            );
        }
        out.push(Finding::new(
            Code::L004,
            object,
            said.join("; "),
            None,
            json!({"missing": absent}),
        ));
    }
}

/// L004 too: an Ingress or a Gateway API route that sends to a port its
/// Service does not have (the Service's ports were renumbered or renamed, or
/// the route was written for another): its requests fail while the Service
/// and its Pods look healthy. Said only of a Service that was read and
/// declares ports; one that does not exist is [`missing`]'s.
fn ports(snapshot: &Snapshot, out: &mut Vec<Finding>) {
    let index = &snapshot.index;
    for (object, refs) in &index.port_referrers {
        let mut said = Vec::new();
        let mut wrong = Vec::new();
        for r in refs {
            let Some((service, port)) = r.strip_prefix("Service/").and_then(|r| r.rsplit_once(':'))
            else {
                continue;
            };
            let key = (object.namespace.clone(), service.to_string());
            let Some(has) = index.service_ports.get(&key) else {
                continue;
            };
            // NB: an Ingress may name the port; a route always numbers it.
            let by_name = port.parse::<i64>().is_err();
            let served = has.iter().any(|p| {
                let (number, name) = p.split_once('/').unwrap_or((p.as_str(), ""));
                if by_name {
                    name == port
                } else {
                    number == port
                }
            });
            if served {
                continue;
            }
            let shown: Vec<String> = has
                .iter()
                .map(|p| match p.split_once('/') {
                    Some((number, name)) => format!("{number} ({name})"),
                    None => p.clone(),
                })
                .collect();
            said.push(format!(
                "port {port} of Service/{service}, which has only {}",
                shown.join(", ")
            ));
            wrong.push(json!({"service": service, "port": port, "has": has}));
        }
        if said.is_empty() {
            continue;
        }
        out.push(Finding::new(
            Code::L004,
            object,
            format!("it sends to {}: its requests fail", said.join("; ")),
            None,
            json!({"ports": wrong}),
        ));
    }
}

/// L005: an admission webhook whose Service does not exist or has no ready
/// Pod. Said only of a Service whose namespace was read whole (live `-n`
/// lists one namespace's Services and Pods).
fn webhooks(snapshot: &Snapshot, out: &mut Vec<Finding>) {
    let index = &snapshot.index;
    if !index.read(snapshot, "Service", "services") || !index.read(snapshot, "Pod", "pods") {
        return;
    }
    let only = snapshot.usage.only_namespace.as_deref();
    for o in snapshot
        .objects
        .iter()
        .filter(|o| !o.state.webhooks.is_empty())
    {
        for w in &o.state.webhooks {
            let Some((ns, name)) = w.service.split_once('/') else {
                continue;
            };
            if only.is_some_and(|only| only != ns) {
                continue;
            }
            let service = snapshot.objects.iter().find(|s| {
                s.object.kind == "Service" && s.object.namespace == ns && s.object.name == name
            });
            let exists = service.is_some()
                || index
                    .names
                    .contains(&("Service".to_string(), ns.to_string(), name.to_string()));
            let why = if !exists {
                format!("its Service {ns}/{name} does not exist")
            } else {
                // NB: a Service without selector has endpoints by hand: not judged.
                let Some(svc) = service.filter(|s| !s.state.pod_selector.is_empty()) else {
                    continue;
                };
                let matching: Vec<&PodEntry> = index
                    .pods_of(ns)
                    .filter(|p| selects(&svc.state.pod_selector, index.labels(p)))
                    .collect();
                if matching.iter().any(|p| p.ready)
                    || (svc.state.publish_not_ready && !matching.is_empty())
                {
                    continue;
                }
                if matching.is_empty() {
                    format!(
                        "its Service {ns}/{name} selects {}: no Pod matches",
                        selector_text(&svc.state.pod_selector)
                    )
                } else {
                    format!(
                        "its Service {ns}/{name} has no ready Pod ({} match, none Ready)",
                        matching.len()
                    )
                }
            };
            let effect = if w.fail {
                "failurePolicy Fail: every write it matches is refused"
            } else {
                "failurePolicy Ignore: its checks are skipped"
            };
            let finding = Finding::new(
                Code::L005,
                &o.object,
                format!("webhook {}: {why}; {effect}", w.name),
                None,
                json!({"webhook": w.name, "service": w.service, "fail": w.fail}),
            );
            out.push(if w.fail {
                finding
            } else {
                finding.with_severity(super::Severity::Warning)
            });
        }
    }
}

/// L006: a claim Lost (its volume gone), a volume Failed (its reclaim failed).
fn volumes(snapshot: &Snapshot, out: &mut Vec<Finding>) {
    for o in &snapshot.objects {
        let s = &o.state;
        match (o.object.kind.as_str(), s.phase.as_str()) {
            ("PersistentVolumeClaim", "Lost") => out.push(Finding::new(
                Code::L006,
                &o.object,
                format!(
                    "claim Lost: its PersistentVolume {} no longer exists; Pods that mount it cannot start (recreate the claim, or restore the volume)",
                    if s.volume_name.is_empty() { "?" } else { &s.volume_name }
                ),
                None,
                json!({"phase": "Lost", "volume": s.volume_name, "claim_namespace": o.object.namespace}),
            )),
            ("PersistentVolume", "Failed") => {
                let claim = snapshot.objects.iter().find(|c| {
                    c.object.kind == "PersistentVolumeClaim" && c.state.volume_name == o.object.name
                });
                let why = if s.phase_reason.is_empty() {
                    String::new()
                } else {
                    format!(": {}", s.phase_reason)
                };
                let of = claim
                    .map(|c| format!(" (claim {}/{})", c.object.namespace, c.object.name))
                    .unwrap_or_default();
                out.push(Finding::new(
                    Code::L006,
                    &o.object,
                    format!("volume Failed{of}{why}"),
                    None,
                    json!({
                        "phase": "Failed",
                        "claim_namespace": claim.map(|c| c.object.namespace.clone()),
                        "claim": claim.map(|c| c.object.name.clone()),
                    }),
                ));
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{condition, object};
    use super::*;

    fn pod(
        ns: &str,
        name: &str,
        labels: &[(&str, &str)],
        ready: bool,
        node: &str,
    ) -> RecordedObject {
        let mut p = object("Pod", ns, name);
        p.state.labels = labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        p.state.node_name = node.into();
        p.state.phase = "Running".into();
        p.state.conditions = vec![condition(
            "Ready",
            if ready { "True" } else { "False" },
            "",
            "",
        )];
        p
    }

    fn snapshot(objects: Vec<RecordedObject>) -> Snapshot {
        let mut index = Index::default();
        for o in &objects {
            index.add(o);
        }
        let relevance = super::super::Relevance::default();
        Snapshot {
            at: 10_000_000,
            objects: objects
                .into_iter()
                .filter(|o| relevance.wanted(o))
                .collect(),
            index,
            ..Snapshot::default()
        }
    }

    fn service(ns: &str, name: &str, selector: &[(&str, &str)]) -> RecordedObject {
        let mut s = object("Service", ns, name);
        s.state.pod_selector = selector
            .iter()
            .map(|(k, v)| Requirement {
                key: k.to_string(),
                operator: "In".into(),
                values: vec![v.to_string()],
            })
            .collect();
        s
    }

    #[test]
    fn a_service_that_selects_no_pod_names_the_labels_the_pods_have_instead() {
        let snap = snapshot(vec![
            service("shop", "web", &[("app", "web"), ("track", "stable")]),
            pod(
                "shop",
                "web-1",
                &[("app", "web"), ("track", "canary")],
                true,
                "n1",
            ),
            pod(
                "shop",
                "web-2",
                &[("app", "web"), ("track", "canary")],
                true,
                "n1",
            ),
            pod(
                "other",
                "web-3",
                &[("app", "web"), ("track", "stable")],
                true,
                "n1",
            ),
        ]);
        let f = check(&snap, &Options::default());
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].code, Code::L001);
        assert_eq!(
            f[0].summary,
            "selects app=web, track=stable: no Pod matches, it has no endpoints; closest: 2 Pod(s) with app=web but track=canary"
        );
    }

    #[test]
    fn a_service_whose_pods_are_not_ready_and_one_that_serves_are_told_apart() {
        let snap = snapshot(vec![
            service("shop", "web", &[("app", "web")]),
            service("shop", "api", &[("app", "api")]),
            pod("shop", "web-1", &[("app", "web")], false, "n1"),
            pod("shop", "api-1", &[("app", "api")], true, "n1"),
            pod("shop", "api-2", &[("app", "api")], false, "n1"),
        ]);
        let f = check(&snap, &Options::default());
        assert_eq!(f.len(), 1, "only web: api has a ready endpoint: {f:#?}");
        assert!(
            f[0].summary
                .contains("1 Pod(s) match (web-1), none is Ready"),
            "{}",
            f[0].summary
        );
    }

    #[test]
    fn a_service_publishing_not_ready_addresses_has_endpoints_while_its_pods_start() {
        let mut headless = service("db", "peers", &[("app", "db")]);
        headless.state.publish_not_ready = true;
        let snap = snapshot(vec![
            headless,
            pod("db", "db-0", &[("app", "db")], false, "n1"),
        ]);
        assert!(check(&snap, &Options::default()).is_empty());
    }

    #[test]
    fn no_pods_read_means_no_claim_about_selectors() {
        let mut snap = snapshot(vec![service("shop", "web", &[("app", "web")])]);
        snap.index = Index::default();
        assert!(check(&snap, &Options::default()).is_empty());
    }

    #[test]
    fn a_budget_blocking_a_cordoned_node_is_a_warning_naming_node_and_pods() {
        let mut pdb = object("PodDisruptionBudget", "db", "pg");
        pdb.object.api_version = "policy/v1".into();
        pdb.state.pod_selector = vec![Requirement {
            key: "app".into(),
            operator: "In".into(),
            values: vec!["pg".into()],
        }];
        for (k, v) in [
            ("disruptionsAllowed", 0),
            ("currentHealthy", 2),
            ("desiredHealthy", 2),
            ("expectedPods", 2),
        ] {
            pdb.state.replicas.insert(k.into(), v);
        }
        let mut node = object("Node", "", "n1");
        node.state.unschedulable = true;
        let snap = snapshot(vec![
            pdb.clone(),
            node,
            pod("db", "pg-0", &[("app", "pg")], true, "n1"),
            pod("db", "pg-1", &[("app", "pg")], true, "n2"),
        ]);
        let f = check(&snap, &Options::default());
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].severity, super::super::Severity::Warning);
        assert_eq!(
            f[0].summary,
            "allows 0 disruptions (2 healthy, 2 required): Node n1 cannot drain pg-0"
        );
        // Without the cordon: an info that the next drain will wait.
        let snap = snapshot(vec![pdb, pod("db", "pg-0", &[("app", "pg")], true, "n1")]);
        let f = check(&snap, &Options::default());
        assert_eq!(f[0].severity, super::super::Severity::Info);
    }

    #[test]
    fn a_preemption_names_the_preemptor_by_name_and_priority() {
        let mut hi = pod("prod", "critical", &[], true, "n1");
        hi.object.uid = "u-crit".into();
        hi.state.priority = 1_000_000;
        hi.state.priority_class = "high".into();
        let mut snap = snapshot(vec![hi]);
        for v in ["batch-a", "batch-b"] {
            snap.events.push(crate::model::EventSummary {
                involved: object("Pod", "batch", v).object,
                reason: "Preempted".into(),
                type_: "Normal".into(),
                message: "Preempted by pod u-crit on node n1".into(),
                first: 9_000_000,
                last: 9_000_000,
                count: 1,
                ..Default::default()
            });
        }
        let f = check(&snap, &Options::default());
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(
            f[0].summary,
            "2 Pod(s) preempted by Pod prod/critical (priority 1000000, class high) on node n1: batch-a, batch-b"
        );
        assert_eq!(
            preemptor("Preempted by ns1/p on node n2"),
            Some(("ns1/p", "n2"))
        );
    }

    #[test]
    fn a_webhook_whose_service_has_no_ready_pod_refuses_writes_and_is_an_error() {
        let mut config = object("ValidatingWebhookConfiguration", "", "policy");
        config.state.webhooks = vec![
            crate::model::WebhookRef {
                name: "a.example.com".into(),
                service: "hooks/gate".into(),
                fail: true,
            },
            crate::model::WebhookRef {
                name: "b.example.com".into(),
                service: "hooks/gone".into(),
                fail: false,
            },
            crate::model::WebhookRef {
                name: "c.example.com".into(),
                service: "hooks/ok".into(),
                fail: true,
            },
        ];
        let snap = snapshot(vec![
            config,
            service("hooks", "gate", &[("app", "gate")]),
            service("hooks", "ok", &[("app", "ok")]),
            pod("hooks", "gate-1", &[("app", "gate")], false, "n1"),
            pod("hooks", "ok-1", &[("app", "ok")], true, "n1"),
        ]);
        let mut f: Vec<Finding> = check(&snap, &Options::default())
            .into_iter()
            .filter(|f| f.code == Code::L005)
            .collect();
        f.sort_by(|a, b| a.summary.cmp(&b.summary));
        assert_eq!(f.len(), 2, "{f:#?}");
        assert_eq!(
            f[0].summary,
            "webhook a.example.com: its Service hooks/gate has no ready Pod (1 match, none Ready); failurePolicy Fail: every write it matches is refused"
        );
        assert_eq!(f[0].severity, super::super::Severity::Error);
        assert!(
            super::super::concerns(&f[0], "shop"),
            "it refuses writes anywhere"
        );
        assert_eq!(f[1].severity, super::super::Severity::Warning);
        assert!(
            f[1].summary
                .contains("its Service hooks/gone does not exist")
        );
    }

    #[test]
    fn a_lost_claim_and_a_failed_volume_are_named_at_once_under_the_claims_namespace() {
        let mut lost = object("PersistentVolumeClaim", "shop", "data");
        lost.state.phase = "Lost".into();
        lost.state.volume_name = "pv-data".into();
        let mut failed = object("PersistentVolume", "", "pv-old");
        failed.state.phase = "Failed".into();
        failed.state.phase_reason =
            "VolumeFailedDelete: host_path deleter only supports /tmp/.+".into();
        let mut claim = object("PersistentVolumeClaim", "shop", "old");
        claim.state.volume_name = "pv-old".into();
        let f = check(&snapshot(vec![lost, failed, claim]), &Options::default());
        assert_eq!(f.len(), 2, "{f:#?}");
        assert!(
            f[0].summary
                .starts_with("claim Lost: its PersistentVolume pv-data no longer exists")
        );
        assert_eq!(
            f[1].summary,
            "volume Failed (claim shop/old): VolumeFailedDelete: host_path deleter only supports /tmp/.+"
        );
        assert!(super::super::concerns(&f[1], "shop"));
    }

    #[test]
    fn a_template_reference_to_what_does_not_exist_is_named_only_when_its_kind_was_read() {
        let mut d = object("Deployment", "shop", "web");
        d.state.refs = vec!["ConfigMap/settings".into(), "Secret/tls".into()];
        let mut cm = object("ConfigMap", "shop", "other");
        cm.object.api_version = "v1".into();
        let f = check(&snapshot(vec![d.clone(), cm]), &Options::default());
        assert_eq!(f.len(), 1);
        assert_eq!(
            f[0].summary, "its Pod template needs ConfigMap/settings that does not exist in shop",
            "Secrets were not read: no claim about Secret/tls"
        );
        let mut there = object("ConfigMap", "shop", "settings");
        there.object.api_version = "v1".into();
        assert!(check(&snapshot(vec![d, there]), &Options::default()).is_empty());
    }

    /// Issue 47: a route attached to a Gateway, or sending to a Service, that
    /// does not exist was no finding (k8sgpt flags both); said only once
    /// Gateways were read at all.
    #[test]
    fn a_route_naming_a_gateway_or_service_that_does_not_exist_is_l004() {
        let mut route = object("HTTPRoute", "shop", "web");
        route.object.api_version = "gateway.networking.k8s.io/v1".into();
        route.state.refs = vec!["Gateway/public".into(), "Service/web".into()];
        let mut gw = object("Gateway", "shop", "internal");
        gw.object.api_version = "gateway.networking.k8s.io/v1".into();
        let mut svc = object("Service", "shop", "api");
        svc.object.api_version = "v1".into();
        let f = check(
            &snapshot(vec![route.clone(), gw.clone(), svc]),
            &Options::default(),
        );
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].code, Code::L004);
        assert_eq!(
            f[0].summary,
            "it needs Gateway/public, Service/web that do not exist in shop"
        );
        // No Gateway was read (the API is not installed, or not listed): no claim.
        let f = check(&snapshot(vec![route]), &Options::default());
        assert!(f.is_empty(), "{f:?}");
    }

    /// Issue 47 (k8sgpt's HTTPRoute port row): a route or an Ingress that
    /// sends to a port its Service does not have fails every request while
    /// the Service and its Pods look healthy; it was no finding. A port by
    /// number or by name that the Service has, a Service not read, and a
    /// Service that does not exist (the other L004) make no port claim.
    #[test]
    fn a_route_or_ingress_to_a_port_the_service_does_not_have_is_l004() {
        let mut route = object("HTTPRoute", "shop", "web");
        route.object.api_version = "gateway.networking.k8s.io/v1".into();
        route.state.refs = vec!["Service/web".into()];
        route.state.port_refs = vec!["Service/web:8080".into()];
        let mut ingress = object("Ingress", "shop", "web");
        ingress.object.api_version = "networking.k8s.io/v1".into();
        ingress.state.refs = vec!["Service/web".into()];
        ingress.state.port_refs = vec!["Service/web:grpc".into(), "Service/web:http".into()];
        let mut svc = object("Service", "shop", "web");
        svc.object.api_version = "v1".into();
        svc.state.service_ports = vec!["80/http".into(), "9090".into()];
        let f = check(
            &snapshot(vec![route.clone(), ingress.clone(), svc.clone()]),
            &Options::default(),
        );
        let got: Vec<(Code, &str, &str)> = f
            .iter()
            .map(|f| (f.code, f.object.kind.as_str(), f.summary.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                (
                    Code::L004,
                    "HTTPRoute",
                    "it sends to port 8080 of Service/web, which has only 80 (http), 9090: its requests fail"
                ),
                (
                    Code::L004,
                    "Ingress",
                    "it sends to port grpc of Service/web, which has only 80 (http), 9090: its requests fail"
                ),
            ]
        );
        assert_eq!(
            f[0].details,
            json!({"ports": [{"service": "web", "port": "8080", "has": ["80/http", "9090"]}]})
        );
        // Ports it has, by number and by name: silent.
        route.state.port_refs = vec!["Service/web:9090".into()];
        ingress.state.port_refs = vec!["Service/web:http".into()];
        let f = check(
            &snapshot(vec![route.clone(), ingress.clone(), svc]),
            &Options::default(),
        );
        assert!(f.is_empty(), "{f:?}");
        // No Service read: no claim about its ports (nor its existence).
        route.state.port_refs = vec!["Service/web:8080".into()];
        let f = check(&snapshot(vec![route]), &Options::default());
        assert!(f.is_empty(), "{f:?}");
    }

    /// Issue 47: an Ingress that names no class, in a cluster with no
    /// IngressClass marked default, is served by no controller and nothing
    /// said so (k8sgpt flags it); a Gateway's GatewayClass that does not
    /// exist was no finding either. Either is said only once its kind was
    /// read, and a default class (or the named class) clears it.
    #[test]
    fn an_ingress_with_no_class_and_no_default_and_a_gateway_with_a_missing_class_are_l004() {
        let mut bare = object("Ingress", "shop", "bare");
        bare.object.api_version = "networking.k8s.io/v1".into();
        bare.state.refs = vec![crate::model::DEFAULT_INGRESS_CLASS_REF.into()];
        let mut nginx = object("IngressClass", "", "nginx");
        nginx.object.api_version = "networking.k8s.io/v1".into();
        let mut gw = object("Gateway", "shop", "edge");
        gw.object.api_version = "gateway.networking.k8s.io/v1".into();
        gw.state.refs = vec!["GatewayClass/istio".into()];
        let mut class = object("GatewayClass", "", "cilium");
        class.object.api_version = "gateway.networking.k8s.io/v1".into();
        let f = check(
            &snapshot(vec![bare.clone(), nginx.clone(), gw.clone(), class.clone()]),
            &Options::default(),
        );
        let said: Vec<(&str, &str)> = f
            .iter()
            .map(|f| (f.object.name.as_str(), f.summary.as_str()))
            .collect();
        assert_eq!(
            said,
            [
                (
                    "bare",
                    "it names no IngressClass and none is marked the cluster's default: \
                     no Ingress controller is bound to serve it"
                ),
                (
                    "edge",
                    "it needs GatewayClass/istio that does not exist in shop (a GatewayClass: in the cluster)"
                ),
            ],
            "{f:#?}"
        );
        // The default class serves it; the named class exists.
        nginx.state.is_default = true;
        let mut istio = class.clone();
        istio.object.name = "istio".into();
        let f = check(
            &snapshot(vec![bare.clone(), nginx, gw.clone(), istio]),
            &Options::default(),
        );
        assert!(f.is_empty(), "{f:#?}");
        // Neither class kind was read: no claim.
        assert!(check(&snapshot(vec![bare, gw]), &Options::default()).is_empty());
    }
}
