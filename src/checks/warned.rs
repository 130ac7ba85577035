//! `progress` R004: an object its controllers keep warning about. The other
//! progress codes start from a state (replicas short, a condition False); this
//! one starts from what a controller said. A kind with neither replica
//! counters nor conditions (a CronJob whose Jobs the apiserver refuses, a claim
//! nobody mounts whose class does not exist, a Service whose load balancer
//! cannot be made, an operator's resource that only speaks in Events) still
//! gets its line, with the controller's own words, when nothing else
//! (S001, P001, R001–R003, F00x, …) already tells of the object or quotes it.
//!
//! "Keeps warning": a Warning (or a Normal `Failed*`, see
//! [`causes::troubling`]) that happened at least twice (the controller retried
//! and failed again) and last happened less than [`RECENT_MS`] before the
//! snapshot's moment. A single Warning is a blip; an old one has stopped; one
//! followed by the controller's success (a Normal `Successful*`/`*Succeeded`
//! Event of the same object, later than the last Warning) is mended. A
//! workload's (Deployment, ReplicaSet, StatefulSet, DaemonSet, Job) is left to
//! R001/R002 whenever the snapshot holds objects: its replicas are the judge.

use std::collections::{HashMap, HashSet};

use serde_json::json;

use super::causes;
use super::{Code, Finding, Snapshot};
use crate::model::EventSummary;
use crate::model::ObjectRef;
use crate::units::human_duration;

/// How recent the last occurrence must be for the warning to be going on.
pub const RECENT_MS: i64 = 10 * 60_000;

/// Reasons another check reads for itself (S001 explains the scheduler's).
const OTHERS: &[&str] = &["FailedScheduling"];

/// Kinds whose state R001/R002 judge (the workloads, Jobs): with objects in
/// the snapshot, their Warnings are evidence of a stall or history of one that is over.
fn judged_by_state(kind: &str) -> bool {
    super::progress::WORKLOADS.contains(&kind) || kind == "Job"
}

pub use crate::model::event::success;

/// The words of one Warning for the first screen: a `FailedCreate` is read for
/// the apiserver's refusal (a quota, a policy) as R001 reads it, anything else is quoted.
fn words(e: &EventSummary) -> String {
    match super::progress::event_text(&e.reason, &e.message) {
        (text, true) => format!("not created: {text}"),
        (text, false) => text,
    }
}

fn recurs(e: &EventSummary) -> bool {
    e.count >= 2 || e.message.contains("(combined from similar events)")
}

/// The R004 findings of `s`, given every other finding of the same snapshot
/// (their objects, and the objects progress findings quote, are left alone).
pub fn check(s: &Snapshot, others: &[Finding]) -> Vec<Finding> {
    let mut told: HashSet<(String, String)> = others
        .iter()
        .filter(|f| f.code != Code::H003)
        .map(|f| {
            (
                f.object.namespace.clone(),
                format!("{}/{}", f.object.kind, f.object.name),
            )
        })
        .collect();
    told.extend(super::progress::explained(others));
    // A Pod's Warnings are its controller's evidence (R001 reads them): only a
    // Pod nobody controls speaks for itself here.
    let bare_pods: HashSet<(&str, &str)> = s
        .objects
        .iter()
        .filter(|o| o.object.kind == "Pod" && !o.state.owners.iter().any(|r| r.controller))
        .map(|o| (o.object.namespace.as_str(), o.object.name.as_str()))
        .collect();
    // NB: a snapshot with objects keeps only the claims that are Pending: one
    // not among them is bound (or gone), and its provisioning Events are over.
    let pending_claims: HashSet<(&str, &str)> = s
        .objects
        .iter()
        .filter(|o| o.object.kind == "PersistentVolumeClaim")
        .map(|o| (o.object.namespace.as_str(), o.object.name.as_str()))
        .collect();
    // The last success each object's controller reported.
    let mut succeeded: HashMap<(&str, &str, &str), i64> = HashMap::new();
    for e in s.events.iter().filter(|e| success(&e.type_, &e.reason)) {
        let i = &e.involved;
        let at = succeeded
            .entry((&i.kind, &i.namespace, &i.name))
            .or_default();
        *at = (*at).max(e.last.min(s.at));
    }
    let mut by_object: HashMap<(&str, &str, &str), Vec<&EventSummary>> = HashMap::new();
    for e in &s.events {
        let i = &e.involved;
        if !causes::troubling(&e.type_, &e.reason)
            || OTHERS.contains(&e.reason.as_str())
            || e.first > s.at
            || i.kind.is_empty()
            || (s.has_objects && judged_by_state(&i.kind))
            // NB: with no objects at all (Events imported alone: a pasted
            // `kubectl events`), no R001 reads a Pod's Warnings: they speak.
            || (i.kind == "Pod"
                && s.has_objects
                && !bare_pods.contains(&(i.namespace.as_str(), i.name.as_str())))
            || (i.kind == "PersistentVolumeClaim"
                && s.has_objects
                && !pending_claims.contains(&(i.namespace.as_str(), i.name.as_str())))
            || told.contains(&(i.namespace.clone(), format!("{}/{}", i.kind, i.name)))
        {
            continue;
        }
        by_object
            .entry((&i.kind, &i.namespace, &i.name))
            .or_default()
            .push(e);
    }
    let mut found = Vec::new();
    for (key, events) in by_object {
        // The same words from several Events (a CronJob's refusal names each
        // Job it tried: one Event a Job) are one cause, counted.
        let mut list: Vec<(EventSummary, String)> = Vec::new();
        for e in events {
            let w = words(e);
            match list
                .iter_mut()
                .find(|(x, xw)| x.reason == e.reason && *xw == w)
            {
                Some((x, _)) => {
                    x.count = x.count.max(1) + e.count.max(1);
                    x.first = x.first.min(e.first);
                    x.last = x.last.max(e.last);
                }
                None => list.push((e.clone(), w)),
            }
        }
        let last = list
            .iter()
            .map(|(e, _)| e.last.min(s.at))
            .max()
            .unwrap_or(0);
        if s.at - last > RECENT_MS
            || !list.iter().any(|(e, _)| recurs(e))
            || succeeded.get(&key).is_some_and(|ok| *ok > last)
        {
            continue;
        }
        list.sort_by_key(|(e, _)| {
            (
                !recurs(e),
                causes::rank(&e.reason),
                std::cmp::Reverse(e.count),
                std::cmp::Reverse(e.last),
            )
        });
        let (head, head_words) = &list[0];
        let since = list
            .iter()
            .map(|(e, _)| e.first)
            .min()
            .unwrap_or(head.first);
        let span = if head.last > head.first {
            format!(" over {}", human_duration(head.last.min(s.at) - head.first))
        } else {
            String::new()
        };
        let cause = format!(
            "{} ×{}{span} (last {} ago): {}",
            head.reason,
            head.count.max(1),
            human_duration((s.at - head.last).max(0)),
            head_words
        );
        let object: &ObjectRef = &head.involved;
        let via = format!("{}/{}", object.kind, object.name);
        let details = json!({
            "cause": cause,
            "causes": list.iter().map(|(e, w)| json!({
                "object": via, "reason": e.reason, "count": e.count.max(1),
                "message": w, "last": crate::units::rfc3339(e.last),
            })).collect::<Vec<_>>(),
            "explains": [via],
            "reporting": head.reporting,
        });
        found.push(Finding::new(
            Code::R004,
            object,
            cause,
            Some(since),
            details,
        ));
    }
    found.sort_by(|a, b| {
        (&a.object.namespace, &a.object.kind, &a.object.name).cmp(&(
            &b.object.namespace,
            &b.object.kind,
            &b.object.name,
        ))
    });
    found
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::object;
    use super::*;
    use crate::checks::Severity;

    const MIN: i64 = 60_000;
    const NOW: i64 = 60 * MIN;

    fn warning(kind: &str, name: &str, reason: &str, message: &str, count: i64) -> EventSummary {
        EventSummary {
            involved: ObjectRef {
                api_version: "v1".into(),
                kind: kind.into(),
                namespace: "shop".into(),
                name: name.into(),
                uid: format!("uid-{name}"),
                ..ObjectRef::default()
            },
            reason: reason.into(),
            type_: "Warning".into(),
            message: message.into(),
            reporting: "cronjob-controller".into(),
            first: NOW - 12 * MIN,
            last: NOW - MIN,
            count,
            in_window: 0,
            host: String::new(),
        }
    }

    fn snapshot(events: Vec<EventSummary>) -> Snapshot {
        Snapshot {
            at: NOW,
            events,
            ..Snapshot::default()
        }
    }

    #[test]
    fn a_cronjob_whose_jobs_are_refused_is_named_with_the_quota() {
        let s = snapshot(vec![warning(
            "CronJob",
            "nightly",
            "FailedCreate",
            "Error creating job: jobs.batch \"nightly-29400001\" is forbidden: exceeded quota: no-jobs, requested: count/jobs.batch=1, used: count/jobs.batch=0, limited: count/jobs.batch=0",
            12,
        )]);
        let f = check(&s, &[]);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].code, Code::R004);
        assert_eq!(f[0].severity, Severity::Warning);
        assert_eq!(f[0].object.kind, "CronJob");
        assert_eq!(
            f[0].summary,
            "FailedCreate ×12 over 11m (last 1m ago): not created: exceeded quota no-jobs (count/jobs.batch: used 0, hard 0, requested 1)"
        );
        assert_eq!(f[0].since_ms, Some(NOW - 12 * MIN));
    }

    #[test]
    fn the_same_refusal_of_each_job_is_one_cause_counted() {
        let refused = |job: &str, count: i64, last: i64| {
            let mut e = warning(
                "CronJob",
                "nightly",
                "FailedCreate",
                &format!(
                    "Error creating job: jobs.batch \"{job}\" is forbidden: exceeded quota: no-jobs, requested: count/jobs.batch=1, used: count/jobs.batch=0, limited: count/jobs.batch=0"
                ),
                count,
            );
            e.last = last;
            e
        };
        let s = snapshot(vec![
            refused("nightly-1", 14, NOW - 2 * MIN),
            refused("nightly-2", 1, NOW - MIN),
        ]);
        let f = check(&s, &[]);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].details["causes"].as_array().unwrap().len(), 1);
        assert!(
            f[0].summary
                .starts_with("FailedCreate ×15 over 11m (last 1m ago)"),
            "{}",
            f[0].summary
        );
    }

    /// Regression (a pasted `kubectl events` table, imported alone): a Pod
    /// in ImagePullBackOff ×42 was "No findings", since a Pod's Warnings
    /// were left to its controller's R001, which needs objects that an
    /// Events-only import does not have. With objects, they still are.
    #[test]
    fn a_pods_recurring_warnings_speak_when_only_events_are_known() {
        let mut pulled = warning(
            "Pod",
            "web-7d9c6b5f4-2xkqp",
            "Failed",
            "Error: ImagePullBackOff",
            42,
        );
        pulled.reporting = "kubelet".into();
        let s = snapshot(vec![pulled]);
        let f = check(&s, &[]);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].code, Code::R004);
        assert_eq!(f[0].object.name, "web-7d9c6b5f4-2xkqp");
        assert!(
            f[0].summary.contains("Failed ×42") && f[0].summary.contains("ImagePullBackOff"),
            "{}",
            f[0].summary
        );
        let mut with_objects = s.clone();
        with_objects.has_objects = true;
        assert!(check(&with_objects, &[]).is_empty());
    }

    /// Regression guard: a quota raised, the CronJob's next Job created; its
    /// Warnings of minutes ago are history, not a finding.
    #[test]
    fn a_warning_followed_by_its_controllers_success_is_mended() {
        let refused = warning(
            "CronJob",
            "nightly",
            "FailedCreate",
            "Error creating job: jobs.batch \"n-1\" is forbidden: exceeded quota: q, requested: count/jobs.batch=1, used: count/jobs.batch=0, limited: count/jobs.batch=0",
            5,
        );
        let mut created = warning(
            "CronJob",
            "nightly",
            "SuccessfulCreate",
            "Created job n-2",
            1,
        );
        created.type_ = "Normal".into();
        created.first = NOW - 30_000;
        created.last = NOW - 30_000;
        assert!(check(&snapshot(vec![refused.clone(), created.clone()]), &[]).is_empty());
        // A success before the last refusal mends nothing.
        created.last = NOW - 2 * MIN;
        assert_eq!(check(&snapshot(vec![refused, created]), &[]).len(), 1);
    }

    #[test]
    fn a_workloads_warnings_are_left_to_its_replicas_when_objects_were_read() {
        let rs = warning(
            "ReplicaSet",
            "web-1",
            "FailedCreate",
            "Error creating: x",
            7,
        );
        let mut s = snapshot(vec![rs]);
        assert_eq!(
            check(&s, &[]).len(),
            1,
            "from Events alone (an import) R004 is all there is"
        );
        s.has_objects = true;
        assert!(
            check(&s, &[]).is_empty(),
            "not stalled: its Warnings are over"
        );
    }

    #[test]
    fn a_single_or_an_old_warning_is_not_a_finding() {
        let once = warning("Service", "lb", "SyncLoadBalancerFailed", "no cloud", 1);
        let mut old = warning("Service", "lb2", "SyncLoadBalancerFailed", "no cloud", 5);
        old.last = NOW - RECENT_MS - MIN;
        assert!(check(&snapshot(vec![once, old]), &[]).is_empty());
    }

    #[test]
    fn a_claim_no_provisioner_serves_is_named_until_it_is_bound() {
        let mut waiting = warning(
            "PersistentVolumeClaim",
            "data",
            "ExternalProvisioning",
            "Waiting for a volume to be created either by the external provisioner 'ebs.csi.aws.com' or manually by the system administrator.",
            9,
        );
        waiting.type_ = "Normal".into();
        let mut s = snapshot(vec![waiting]);
        s.has_objects = true;
        // Bound since: a snapshot with objects holds only Pending claims.
        assert!(check(&s, &[]).is_empty());
        let mut claim = object("PersistentVolumeClaim", "shop", "data");
        claim.state.phase = "Pending".into();
        s.objects.push(claim);
        let f = check(&s, &[]);
        assert_eq!(f.len(), 1);
        assert!(
            f[0].summary.contains("ExternalProvisioning ×9")
                && f[0].summary.contains("'ebs.csi.aws.com'"),
            "{}",
            f[0].summary
        );
    }

    #[test]
    fn what_another_finding_tells_or_quotes_is_left_to_it() {
        let claim = warning(
            "PersistentVolumeClaim",
            "data",
            "ProvisioningFailed",
            "storageclass.storage.k8s.io \"nope\" not found",
            7,
        );
        let rs = warning(
            "ReplicaSet",
            "web-1",
            "FailedCreate",
            "Error creating: x",
            7,
        );
        let s = snapshot(vec![claim.clone(), rs]);
        let r001 = Finding::new(
            Code::R001,
            &object("Deployment", "shop", "web").object,
            "0 of 1 ready".into(),
            None,
            json!({"explains": ["ReplicaSet/web-1"]}),
        );
        let mut storm = Finding::new(Code::H003, &claim.involved, "storm".into(), None, json!({}));
        storm.severity = Severity::Info;
        let f = check(&s, &[r001, storm]);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].object.kind, "PersistentVolumeClaim");
        assert!(
            f[0].summary.contains("ProvisioningFailed ×7"),
            "{}",
            f[0].summary
        );
    }

    #[test]
    fn a_pods_warnings_speak_only_for_a_pod_nobody_controls() {
        let probe =
            |name: &str| warning("Pod", name, "Unhealthy", "Readiness probe failed: 503", 30);
        let mut bare = object("Pod", "shop", "debug");
        bare.state.phase = "Running".into();
        let mut owned = object("Pod", "shop", "web-1-abc");
        owned.state.owners = vec![crate::model::OwnerRef {
            kind: "ReplicaSet".into(),
            name: "web-1".into(),
            controller: true,
            ..Default::default()
        }];
        let mut s = snapshot(vec![probe("debug"), probe("web-1-abc"), probe("gone")]);
        s.objects = vec![bare, owned];
        s.has_objects = true;
        let f = check(&s, &[]);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].object.name, "debug");
    }

    #[test]
    fn the_closest_recurring_reason_leads_and_the_rest_follow() {
        let s = snapshot(vec![
            warning("Widget", "w", "SyncFailed", "backend timeout", 3),
            warning(
                "Widget",
                "w",
                "FailedCreate",
                "Error creating: secrets \"w-tls\" is forbidden: exceeded quota: q, requested: secrets=1, used: secrets=5, limited: secrets=5",
                4,
            ),
            warning("Widget", "w", "Oddity", "once", 1),
        ]);
        let f = check(&s, &[]);
        let causes = f[0].details["causes"].as_array().unwrap();
        assert!(
            f[0].summary.starts_with("FailedCreate ×4"),
            "{}",
            f[0].summary
        );
        assert_eq!(causes.len(), 3);
        assert_eq!(causes[1]["reason"], "SyncFailed");
    }
}
