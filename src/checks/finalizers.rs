//! `finalizers`: objects whose deletion has waited longer than `--stuck-after`.
//!
//! Codes: F001 an object held by finalizers; F002 a namespace stuck
//! Terminating (with what remains in it and why); F003 a Pod terminating with
//! no finalizers on a node that is not Ready (the kubelet cannot confirm).

use serde_json::json;

use super::controllers::{describe_operator, for_finalizer, group_of};
use super::{Code, Finding, Options, Snapshot};
use crate::model::RecordedObject;
use crate::units::human_duration;

/// The namespace conditions that explain a stuck deletion.
const NAMESPACE_CONDITIONS: &[&str] = &[
    "NamespaceDeletionDiscoveryFailure",
    "NamespaceDeletionGroupVersionParsingFailure",
    "NamespaceDeletionContentFailure",
    "NamespaceContentRemaining",
    "NamespaceFinalizersRemaining",
];

fn expected_remover(finalizer: &str, o: &RecordedObject, s: &Snapshot) -> String {
    if finalizer == "kubernetes.io/pvc-protection" {
        let users: Vec<String> = s
            .objects
            .iter()
            .filter(|p| {
                p.object.kind == "Pod"
                    && p.object.namespace == o.object.namespace
                    && p.state.claims.contains(&o.object.name)
                    && !matches!(p.state.phase.as_str(), "Succeeded" | "Failed")
            })
            .map(|p| format!("Pod {}", p.object.name))
            .collect();
        if !users.is_empty() {
            return format!(
                "the pvc-protection controller, once no Pod uses the claim; still used by {}",
                users.join(", ")
            );
        }
    }
    if let Some(known) = for_finalizer(finalizer) {
        return known.to_string();
    }
    match group_of(finalizer) {
        Some(group) => describe_operator(group, &s.objects),
        None => "unknown: a finalizer without a domain names no controller".to_string(),
    }
}

fn node_ready(s: &Snapshot, node: &str) -> Option<bool> {
    s.objects
        .iter()
        .find(|n| n.object.kind == "Node" && n.object.name == node)
        .map(|n| {
            n.state
                .conditions
                .iter()
                .any(|c| c.type_ == "Ready" && c.status == "True")
        })
}

fn namespace_finding(ns: &RecordedObject, since: i64, s: &Snapshot) -> Finding {
    let conditions: Vec<_> = ns
        .state
        .conditions
        .iter()
        .filter(|c| NAMESPACE_CONDITIONS.contains(&c.type_.as_str()) && c.status == "True")
        .map(|c| json!({"type": c.type_, "reason": c.reason, "message": c.message}))
        .collect();
    let remaining: Vec<_> = s
        .objects
        .iter()
        .filter(|o| o.object.namespace == ns.object.name && !o.object.namespace.is_empty())
        .map(|o| {
            json!({
                "apiVersion": o.object.api_version, "kind": o.object.kind, "name": o.object.name,
                "finalizers": o.state.finalizers.iter().map(|f| json!({
                    "finalizer": f, "expected_remover": expected_remover(f, o, s),
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    let discovery_blocked = ns
        .state
        .conditions
        .iter()
        .any(|c| c.type_ == "NamespaceDeletionDiscoveryFailure" && c.status == "True");
    let unavailable: Vec<&String> = if discovery_blocked {
        s.stale_groups.iter().collect()
    } else {
        Vec::new()
    };
    let held: Vec<String> = s
        .objects
        .iter()
        .filter(|o| o.object.namespace == ns.object.name && !o.state.finalizers.is_empty())
        .map(|o| {
            // NB: who should remove the finalizer is the next question; one
            // remover (the first finalizer's) keeps the line short.
            format!(
                "{}/{} ({}; expected remover: {})",
                o.object.kind,
                o.object.name,
                o.state.finalizers.join(", "),
                expected_remover(&o.state.finalizers[0], o, s)
            )
        })
        .collect();
    let why = if discovery_blocked {
        if unavailable.is_empty() {
            "discovery failed (an aggregated API is unavailable)".to_string()
        } else {
            format!(
                "discovery failed: API {} unavailable",
                unavailable
                    .iter()
                    .map(|g| g.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    } else if !held.is_empty() {
        format!(
            "{} object(s) held by finalizers: {}",
            held.len(),
            held.join("; ")
        )
    } else if let Some(c) = conditions.first() {
        c["message"].as_str().unwrap_or_default().to_string()
    } else if !ns.state.finalizers.is_empty() {
        format!("finalizers {} remain", ns.state.finalizers.join(", "))
    } else {
        // NB: no sentence with an empty list in it: say what is not known.
        "nothing left in it is known to hold it (no finalizer, condition or held object seen)"
            .to_string()
    };
    Finding::new(
        Code::F002,
        &ns.object,
        format!(
            "namespace Terminating for {}: {why}",
            human_duration(s.at - since)
        ),
        Some(since),
        json!({
            "finalizers": ns.state.finalizers,
            "conditions": conditions,
            "remaining": remaining,
            "unavailable_api_groups": unavailable,
        }),
    )
}

pub fn check(s: &Snapshot, o: &Options) -> Vec<Finding> {
    let mut found = Vec::new();
    for obj in &s.objects {
        let Some(since) = obj.state.deletion else {
            continue;
        };
        if s.at - since < o.stuck_after_ms {
            continue;
        }
        let waited = human_duration(s.at - since);
        if obj.object.kind == "Namespace" && obj.object.api_version == "v1" {
            found.push(namespace_finding(obj, since, s));
        } else if !obj.state.finalizers.is_empty() {
            let finalizers: Vec<_> = obj
                .state
                .finalizers
                .iter()
                .map(|f| json!({"finalizer": f, "expected_remover": expected_remover(f, obj, s)}))
                .collect();
            let first = &obj.state.finalizers[0];
            found.push(Finding::new(
                Code::F001,
                &obj.object,
                format!(
                    "deleting for {waited}, held by finalizer(s) {}: expected remover of {first}: {}",
                    obj.state.finalizers.join(", "),
                    expected_remover(first, obj, s)
                ),
                Some(since),
                json!({"finalizers": finalizers}),
            ));
        } else if obj.object.kind == "Pod" && !obj.state.node_name.is_empty() {
            let node = &obj.state.node_name;
            if node_ready(s, node) != Some(true) {
                let node_state = match node_ready(s, node) {
                    Some(_) => "NotReady",
                    None => "gone",
                };
                found.push(Finding::new(
                    Code::F003,
                    &obj.object,
                    format!(
                        "terminating for {waited} with no finalizers on node {node}, which is {node_state}: no kubelet confirms the deletion"
                    ),
                    Some(since),
                    json!({"node": node, "node_state": node_state}),
                ));
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{condition, object};
    use super::*;
    use crate::checks::Severity;

    const MIN: i64 = 60_000;

    fn snapshot(objects: Vec<RecordedObject>) -> Snapshot {
        Snapshot {
            at: 100 * MIN,
            objects,
            ..Snapshot::default()
        }
    }

    #[test]
    fn a_custom_resource_held_by_an_operator_that_is_gone() {
        let mut w = object("Widget", "shop", "w1");
        w.state.deletion = Some(90 * MIN);
        w.state.finalizers = vec!["example.com/cleanup".into()];
        let f = check(&snapshot(vec![w]), &Options::default());
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].code, Code::F001);
        assert_eq!(
            f[0].details["finalizers"][0]["expected_remover"],
            "no controller found for example.com"
        );
        assert!(
            f[0].summary.contains("deleting for 10m"),
            "{}",
            f[0].summary
        );
    }

    #[test]
    fn recent_deletions_and_healthy_objects_are_silent() {
        let mut w = object("Widget", "shop", "w1");
        w.state.deletion = Some(98 * MIN);
        w.state.finalizers = vec!["example.com/cleanup".into()];
        let healthy = object("Deployment", "shop", "web");
        assert!(check(&snapshot(vec![w, healthy]), &Options::default()).is_empty());
    }

    #[test]
    fn a_terminating_namespace_with_nothing_known_prints_no_empty_list() {
        let mut ns = object("Namespace", "", "gone");
        ns.state.deletion = Some(0);
        let findings = check(&snapshot(vec![ns]), &Options::default());
        let f = findings.iter().find(|f| f.code == Code::F002).unwrap();
        assert!(!f.summary.contains("finalizers  remain"), "{}", f.summary);
        assert!(
            f.summary.contains("nothing left in it is known to hold it"),
            "{}",
            f.summary
        );
    }

    #[test]
    fn a_namespace_lists_what_remains_and_why() {
        let mut ns = object("Namespace", "", "shop");
        ns.state.deletion = Some(80 * MIN);
        ns.state.finalizers = vec!["kubernetes".into()];
        ns.state.conditions = vec![
            condition(
                "NamespaceContentRemaining",
                "True",
                "SomeResourcesRemain",
                "Some resources are remaining: widgets.example.com has 1 resource instances",
            ),
            condition(
                "NamespaceFinalizersRemaining",
                "True",
                "SomeFinalizersRemain",
                "Some content in the namespace has finalizers remaining: example.com/cleanup in 1 resource instances",
            ),
        ];
        let mut w = object("Widget", "shop", "w1");
        w.state.deletion = Some(80 * MIN);
        w.state.finalizers = vec!["example.com/cleanup".into()];
        let mut operator = object("Deployment", "example-system", "example-operator");
        operator.state.replicas.insert("readyReplicas".into(), 1);
        let f = check(&snapshot(vec![ns, w, operator]), &Options::default());
        let ns_finding = f.iter().find(|f| f.code == Code::F002).unwrap();
        assert_eq!(ns_finding.severity, Severity::Error);
        assert!(
            ns_finding
                .summary
                .contains("Widget/w1 (example.com/cleanup; expected remover: the controller of example.com: probably Deployment example-system/example-operator"),
            "{}",
            ns_finding.summary
        );
        assert_eq!(
            ns_finding.details["conditions"].as_array().unwrap().len(),
            2
        );
        assert!(
            ns_finding.details["remaining"][0]["finalizers"][0]["expected_remover"]
                .as_str()
                .unwrap()
                .contains("example-system/example-operator")
        );
    }

    #[test]
    fn discovery_failure_names_the_unavailable_api() {
        let mut ns = object("Namespace", "", "shop");
        ns.state.deletion = Some(80 * MIN);
        ns.state.conditions = vec![condition(
            "NamespaceDeletionDiscoveryFailure",
            "True",
            "DiscoveryFailed",
            "Discovery failed for some groups, 1 failing: unable to retrieve the complete list of server APIs: metrics.k8s.io/v1beta1: stale GroupVersion discovery",
        )];
        let mut s = snapshot(vec![ns]);
        s.stale_groups = vec!["metrics.k8s.io/v1beta1".into()];
        let f = check(&s, &Options::default());
        assert!(
            f[0].summary
                .contains("API metrics.k8s.io/v1beta1 unavailable"),
            "{}",
            f[0].summary
        );
    }

    #[test]
    fn a_pod_on_a_not_ready_node_and_a_claim_still_in_use() {
        let mut node = object("Node", "", "n1");
        node.state.conditions = vec![condition("Ready", "Unknown", "NodeStatusUnknown", "")];
        let mut pod = object("Pod", "shop", "web-1");
        pod.state.deletion = Some(50 * MIN);
        pod.state.node_name = "n1".into();
        pod.state.claims = vec!["data".into()];
        pod.state.phase = "Running".into();
        let mut pvc = object("PersistentVolumeClaim", "shop", "data");
        pvc.state.deletion = Some(50 * MIN);
        pvc.state.finalizers = vec!["kubernetes.io/pvc-protection".into()];
        let f = check(&snapshot(vec![node, pod, pvc]), &Options::default());
        let pod_f = f.iter().find(|f| f.code == Code::F003).unwrap();
        assert!(
            pod_f.summary.contains("n1, which is NotReady"),
            "{}",
            pod_f.summary
        );
        let pvc_f = f.iter().find(|f| f.code == Code::F001).unwrap();
        assert!(
            pvc_f.summary.contains("still used by Pod web-1"),
            "{}",
            pvc_f.summary
        );
    }
}
