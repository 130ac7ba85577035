//! `scheduling`: Pods that nothing can schedule, and why, per Pod and in
//! aggregate ("why can't anything schedule?").
//!
//! Code S001: one finding per unschedulable Pod. The Pod's
//! `PodScheduled=False/Unschedulable` condition holds the scheduler's full
//! message; a FailedScheduling Event's note is cut at 1024 bytes, so the
//! condition wins when both exist. From a recording that holds only Events,
//! a Pod whose last scheduling Event is FailedScheduling (no later Scheduled)
//! counts as unschedulable as of that Event.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;
use serde_json::json;

use super::scheduling_causes::{Cause, PodNeeds, VolumeNeed, explain};
use super::scheduling_message::{Parsed, parse};
use super::{Code, Finding, Options, Snapshot};
use crate::model::{ObjectRef, RecordedObject};

/// Per reason: how many Pods it affects and the most nodes that gave it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ReasonSummary {
    pub reason: String,
    pub pods: u32,
    /// The most nodes rejecting one Pod for this reason (None: the message gave no count).
    pub nodes: Option<u32>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    pub unschedulable_pods: u32,
    /// Most Pods first.
    pub reasons: Vec<ReasonSummary>,
}

fn details(message: &str) -> (serde_json::Value, Vec<(String, Option<u32>)>) {
    match parse(message) {
        Parsed::Scheduler(m) => {
            let reasons = m
                .reasons
                .iter()
                .map(|r| (r.reason.clone(), r.nodes))
                .collect();
            (
                json!({
                    "total_nodes": m.total_nodes, "reasons": m.reasons, "preemption": m.preemption,
                    "preemption_message": m.preemption_message, "message": message,
                }),
                reasons,
            )
        }
        Parsed::Raw(raw) => (
            json!({"total_nodes": null, "reasons": [], "preemption": null, "preemption_message": null, "message": raw}),
            Vec::new(),
        ),
    }
}

/// The summary of S001 findings: per reason, the Pods it affects and the most
/// Nodes that gave it for one Pod. From the findings, so that it always covers
/// exactly what is reported (`-n` included).
pub fn summarize(findings: &[Finding]) -> Summary {
    let mut by_reason: BTreeMap<String, ReasonSummary> = BTreeMap::new();
    let mut pods = 0;
    for f in findings.iter().filter(|f| f.code == Code::S001) {
        pods += 1;
        for r in f.details["reasons"].as_array().into_iter().flatten() {
            let Some(reason) = r["reason"].as_str() else {
                continue;
            };
            let entry = by_reason
                .entry(reason.to_string())
                .or_insert_with(|| ReasonSummary {
                    reason: reason.to_string(),
                    ..ReasonSummary::default()
                });
            entry.pods += 1;
            entry.nodes = entry.nodes.max(r["nodes"].as_u64().map(|n| n as u32));
        }
    }
    let mut reasons: Vec<ReasonSummary> = by_reason.into_values().collect();
    reasons.sort_by(|a, b| b.pods.cmp(&a.pods).then(a.reason.cmp(&b.reason)));
    Summary {
        unschedulable_pods: pods,
        reasons,
    }
}

/// Pod → claim → the PersistentVolume it is bound to, with the volume's
/// required node affinity: what the scheduler's VolumeBinding filter weighs.
fn bound_volumes<'a>(s: &'a Snapshot, pod: &'a RecordedObject) -> Vec<VolumeNeed<'a>> {
    let core =
        |o: &RecordedObject, kind: &str| o.object.kind == kind && o.object.api_version == "v1";
    pod.state
        .claims
        .iter()
        .filter_map(|claim| {
            let pvc = s.objects.iter().find(|o| {
                core(o, "PersistentVolumeClaim")
                    && o.object.namespace == pod.object.namespace
                    && o.object.name == *claim
            })?;
            let pv = s.objects.iter().find(|o| {
                core(o, "PersistentVolume")
                    && !pvc.state.volume_name.is_empty()
                    && o.object.name == pvc.state.volume_name
            })?;
            Some(VolumeNeed {
                claim,
                volume: &pv.object.name,
                terms: &pv.state.node_affinity,
            })
        })
        .collect()
}

pub fn check(s: &Snapshot, _: &Options) -> (Vec<Finding>, Summary) {
    let nodes: Vec<&crate::model::RecordedObject> = s
        .objects
        .iter()
        .filter(|o| o.object.kind == "Node" && o.object.api_version == "v1")
        .collect();
    let controller = |pod: &ObjectRef| {
        s.objects
            .iter()
            .find(|o| o.object.kind == "Pod" && o.object.uid == pod.uid && !pod.uid.is_empty())
            .and_then(|o| o.state.owners.iter().find(|r| r.controller))
            .map(|r| format!("{}/{}", r.kind, r.name))
    };
    let pod_object = |pod: &ObjectRef| {
        s.objects
            .iter()
            .find(|o| o.object.kind == "Pod" && o.object.uid == pod.uid && !pod.uid.is_empty())
    };
    // Unschedulable Pods: (object, message, since).
    let mut pods: Vec<(ObjectRef, String, Option<i64>)> = Vec::new();
    for o in s
        .objects
        .iter()
        .filter(|o| o.object.kind == "Pod" && o.object.api_version == "v1")
    {
        if !o.state.node_name.is_empty() || o.state.deletion.is_some() {
            continue;
        }
        let condition = o.state.conditions.iter().find(|c| {
            c.type_ == "PodScheduled" && c.status == "False" && c.reason == "Unschedulable"
        });
        if let Some(c) = condition {
            pods.push((o.object.clone(), c.message.clone(), c.last_transition));
        }
        // NB: a Pod held by scheduling gates never reaches the scheduler:
        // no FailedScheduling Event, only this condition (issue 47).
        if let Some(c) = o.state.conditions.iter().find(|c| {
            c.type_ == "PodScheduled" && c.status == "False" && c.reason == "SchedulingGated"
        }) {
            let said = if c.message.is_empty() {
                "its spec.schedulingGates are not empty".to_string()
            } else {
                c.message.clone()
            };
            pods.push((
                o.object.clone(),
                format!("held by scheduling gates (SchedulingGated): {said}; whoever set them must remove them"),
                c.last_transition.or(o.created),
            ));
        }
    }
    // Events: the last scheduling Event per Pod.
    let mut last: HashMap<(String, String), &crate::model::EventSummary> = HashMap::new();
    for e in s.events.iter().filter(|e| {
        e.involved.kind == "Pod" && matches!(e.reason.as_str(), "FailedScheduling" | "Scheduled")
    }) {
        let key = (e.involved.namespace.clone(), e.involved.name.clone());
        if last.get(&key).is_none_or(|prev| prev.last <= e.last) {
            last.insert(key, e);
        }
    }
    let mut keyed: Vec<_> = last.into_iter().collect();
    keyed.sort_by(|a, b| a.0.cmp(&b.0));
    for ((namespace, name), e) in keyed {
        if e.reason != "FailedScheduling" {
            continue;
        }
        if let Some(found) = pods
            .iter_mut()
            .find(|p| p.0.namespace == namespace && p.0.name == name)
        {
            // NB: the condition has the full text; the Event's note may be cut at 1024 bytes.
            if found.1.is_empty() {
                found.1 = e.message.clone();
            }
            continue;
        }
        // With object history, a Pod absent or scheduled in the snapshot is not unschedulable.
        if s.has_objects {
            continue;
        }
        pods.push((
            e.involved.clone(),
            e.message.clone(),
            Some(e.first.min(e.last)),
        ));
    }

    let mut findings = Vec::new();
    for (object, message, since) in &pods {
        let (mut details, reasons) = details(message);
        let names: Vec<String> = reasons.iter().map(|(r, _)| r.clone()).collect();
        let pod = pod_object(object);
        let bound: Vec<VolumeNeed> = pod.map(|p| bound_volumes(s, p)).unwrap_or_default();
        let needs = PodNeeds {
            volumes: &bound,
            ..pod.map(|o| PodNeeds::of(&o.state)).unwrap_or_default()
        };
        let causes: Vec<Cause> = explain(&names, &needs, &nodes, &s.origins, &s.usage);
        let summary = if message.starts_with("held by scheduling gates") {
            message.clone()
        } else if reasons.is_empty() {
            format!("unschedulable: {message}")
        } else {
            format!(
                "unschedulable on all {} nodes: {}",
                details["total_nodes"],
                reasons
                    .iter()
                    .map(|(r, n)| match n {
                        Some(n) => format!("{r} ({n})"),
                        None => r.clone(),
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        let summary = if causes.is_empty() {
            summary
        } else {
            let named: Vec<String> = causes
                .iter()
                .map(|c| c.sentence(crate::units::rfc3339))
                .collect();
            format!("{summary}; {}", named.join("; "))
        };
        if !causes.is_empty() {
            details["causes"] = json!(
                causes
                    .iter()
                    .map(|c| {
                        let mut v = json!(c);
                        v["since"] = json!(c.since_ms.map(crate::units::rfc3339));
                        v
                    })
                    .collect::<Vec<_>>()
            );
        }
        let mut finding = Finding::new(Code::S001, object, summary, *since, details);
        finding.owner = controller(object);
        findings.push(finding);
    }
    let summary = summarize(&findings);
    (findings, summary)
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{condition, object};
    use super::*;
    use crate::model::EventSummary;

    const FULL: &str = "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.";

    fn event(name: &str, reason: &str, message: &str, last: i64) -> EventSummary {
        EventSummary {
            involved: ObjectRef {
                api_version: "v1".into(),
                kind: "Pod".into(),
                namespace: "shop".into(),
                name: name.into(),
                ..ObjectRef::default()
            },
            reason: reason.into(),
            message: message.into(),
            first: last,
            last,
            count: 1,
            ..EventSummary::default()
        }
    }

    #[test]
    fn the_condition_wins_over_the_cut_event_note() {
        let mut pod = object("Pod", "shop", "big");
        pod.state.phase = "Pending".into();
        pod.state.conditions = vec![condition("PodScheduled", "False", "Unschedulable", FULL)];
        let s = Snapshot {
            objects: vec![pod],
            has_objects: true,
            events: vec![event("big", "FailedScheduling", &FULL[..60], 5)],
            ..Snapshot::default()
        };
        let (f, summary) = check(&s, &Options::default());
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].details["total_nodes"], 3);
        assert_eq!(
            f[0].details["reasons"],
            json!([{"reason": "node(s) had untolerated taint(s)", "nodes": 1}, {"reason": "Insufficient cpu", "nodes": 2}])
        );
        assert_eq!(f[0].details["preemption"]["total_nodes"], 3);
        assert_eq!(summary.unschedulable_pods, 1);
        assert_eq!(summary.reasons.len(), 2);
    }

    /// Issue 47: a Pod held by scheduling gates is never tried by the
    /// scheduler (no FailedScheduling): it got no finding at all.
    #[test]
    fn a_pod_held_by_scheduling_gates_is_s001_saying_so() {
        let mut pod = object("Pod", "shop", "gated");
        pod.state.phase = "Pending".into();
        pod.state.conditions = vec![condition(
            "PodScheduled",
            "False",
            "SchedulingGated",
            "Scheduling is blocked due to non-empty scheduling gates",
        )];
        let s = Snapshot {
            objects: vec![pod],
            has_objects: true,
            ..Snapshot::default()
        };
        let (f, _) = check(&s, &Options::default());
        assert_eq!(f.len(), 1);
        assert_eq!(
            f[0].summary,
            "held by scheduling gates (SchedulingGated): Scheduling is blocked due to non-empty scheduling gates; whoever set them must remove them"
        );
    }

    #[test]
    fn from_events_only_the_last_scheduling_event_decides() {
        let s = Snapshot {
            events: vec![
                event("a", "FailedScheduling", FULL, 10),
                event("b", "FailedScheduling", FULL, 10),
                event("b", "Scheduled", "Successfully assigned shop/b to n1", 20),
                event(
                    "c",
                    "FailedScheduling",
                    "0/3 nodes are available: 3 Insufficient memory.",
                    30,
                ),
            ],
            ..Snapshot::default()
        };
        let (f, summary) = check(&s, &Options::default());
        let names: Vec<&str> = f.iter().map(|f| f.object.name.as_str()).collect();
        assert_eq!(names, vec!["a", "c"]);
        assert_eq!(
            summary.reasons[0],
            ReasonSummary {
                reason: "Insufficient cpu".into(),
                pods: 1,
                nodes: Some(2)
            }
        );
        assert!(
            summary
                .reasons
                .iter()
                .any(|r| r.reason == "Insufficient memory" && r.nodes == Some(3))
        );
    }

    #[test]
    fn a_pod_that_may_not_preempt_keeps_its_reasons() {
        let mut pod = object("Pod", "shop", "never");
        pod.state.conditions = vec![condition(
            "PodScheduled",
            "False",
            "Unschedulable",
            "0/3 nodes are available: 3 Insufficient memory. preemption: not eligible due to preemptionPolicy=Never.",
        )];
        let s = Snapshot {
            objects: vec![pod],
            has_objects: true,
            ..Snapshot::default()
        };
        let (f, summary) = check(&s, &Options::default());
        assert_eq!(
            f[0].summary,
            "unschedulable on all 3 nodes: Insufficient memory (3)"
        );
        assert_eq!(
            f[0].details["preemption_message"],
            "not eligible due to preemptionPolicy=Never"
        );
        assert_eq!(summary.reasons[0].reason, "Insufficient memory");
    }

    #[test]
    fn another_schedulers_message_is_kept_raw_and_scheduled_pods_are_silent() {
        let mut pod = object("Pod", "shop", "odd");
        pod.state.conditions = vec![condition(
            "PodScheduled",
            "False",
            "Unschedulable",
            "no fitting GPU slice",
        )];
        let mut running = object("Pod", "shop", "ok");
        running.state.node_name = "n1".into();
        let s = Snapshot {
            objects: vec![pod, running],
            ..Snapshot::default()
        };
        let (f, _) = check(&s, &Options::default());
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].details["message"], "no fitting GPU slice");
        assert_eq!(f[0].details["total_nodes"], serde_json::Value::Null);
    }
}
