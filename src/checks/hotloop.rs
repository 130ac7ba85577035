//! `hotloop`: objects rewritten faster than `--rate` per minute, and Event storms.
//!
//! Codes: H001 a spec fight (updates move `metadata.generation`); H002
//! status or metadata churn (no generation change); H003 an Event storm
//! (occurrences faster than the rate, or the client's "(combined from similar
//! events)" aggregate). Leases, Endpoints, EndpointSlices, Events and Nodes
//! (heartbeats) churn by design and are left out unless asked for.

use serde_json::json;

use super::{Code, Finding, ObjectUpdates, Options, Severity, Snapshot};

/// Fewer updates than this are not called a loop, whatever their rate: a
/// small Deployment's rollout writes its status 5–10 times in seconds, which
/// over a short window (a live `--sample` of 30 s, `--window 1m`) reads as
/// tens a minute. A loop at the default 10/min over 10m makes 100.
pub const MIN_UPDATES: i64 = 20;

/// Kinds that are rewritten constantly by design.
pub const NOISY: &[&str] = &["Lease", "Endpoints", "EndpointSlice", "Event", "Node"];

const COMBINED: &str = "(combined from similar events)";

/// Fields named after "over" in a fight: the most contested first.
const MAX_CONTESTED: usize = 3;

/// "fight between A and B" when two or more writers each made at least a
/// quarter of the updates (and, when the order is known, kept alternating),
/// "over FIELD" when the sample saw which fields kept changing hands.
fn fight(u: &ObjectUpdates) -> Option<String> {
    let big: Vec<&str> = u
        .managers
        .iter()
        .filter(|(m, n)| !m.is_empty() && *n * 4 >= u.updates)
        .map(|(m, _)| m.as_str())
        .collect();
    let alternating = u.alternations.is_none_or(|a| a * 2 >= u.updates);
    if big.len() < 2 || !alternating {
        return None;
    }
    let mut text = format!("fight between {}", big.join(" and "));
    if !u.contested.is_empty() {
        let fields: Vec<&str> = u
            .contested
            .iter()
            .take(MAX_CONTESTED)
            .map(|(f, _)| f.as_str())
            .collect();
        text.push_str(&format!(" over {}", fields.join(", ")));
    }
    Some(text)
}

/// The busiest minute and the first and last minute above `rate`, when the
/// window spans more than one minute (else the window figure says it all).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Burst {
    peak: i64,
    /// Start of the first and of the last minute above the rate (epoch ms).
    above: Option<(i64, i64)>,
}

fn burst(u: &ObjectUpdates, window_ms: i64, rate: f64) -> Option<Burst> {
    if window_ms <= 60_000 || u.per_minute.is_empty() {
        return None;
    }
    let peak = u.per_minute.iter().map(|(_, n)| *n).max()?;
    let mut over = u.per_minute.iter().filter(|(_, n)| *n as f64 > rate);
    let first = over.next().map(|(m, _)| *m);
    let last = over.next_back().map(|(m, _)| *m).or(first);
    Some(Burst {
        peak,
        above: first.zip(last),
    })
}

fn hh_mm(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.format("%H:%M").to_string())
        .unwrap_or_default()
}

/// `, peak 300/min, above 10/min from 13:02 to 13:03 UTC`.
fn burst_text(b: &Burst, rate: f64) -> String {
    let mut s = format!(", peak {}/min", b.peak);
    match b.above {
        Some((first, last)) if first == last => {
            s.push_str(&format!(
                ", above {rate}/min only in the minute of {} UTC",
                hh_mm(first)
            ));
        }
        Some((first, last)) => s.push_str(&format!(
            ", above {rate}/min from {} to {} UTC",
            hh_mm(first),
            hh_mm(last + 60_000)
        )),
        None => {}
    }
    s
}

/// Who writes the object, or why that cannot be told.
fn writers_text(u: &ObjectUpdates) -> String {
    // NB: the writer is told from managedFields; an object created without
    // any (an empty ConfigMap) never gets them, later updates included.
    if u.managers.iter().all(|(m, _)| m.is_empty()) {
        return "writers unknown: the object has no managedFields, so the apiserver does not say who writes it".to_string();
    }
    let list = u
        .managers
        .iter()
        .map(|(m, n)| {
            if m.is_empty() {
                format!("unknown, no managedFields ({n})")
            } else {
                format!("{m} ({n})")
            }
        })
        .collect::<Vec<_>>()
        .join(", ");
    format!("writers: {list}")
}

pub fn check(s: &Snapshot, o: &Options) -> Vec<Finding> {
    let minutes = (s.window_ms as f64 / 60_000.0).max(1.0 / 60.0);
    let mut found = Vec::new();
    for u in &s.updates {
        if !o.include_noisy && NOISY.contains(&u.object.kind.as_str()) {
            continue;
        }
        let rate = u.updates as f64 / minutes;
        if rate <= o.rate_per_minute || u.updates < MIN_UPDATES {
            continue;
        }
        // NB: one spec change is a rollout, not a fight: the updates around it
        // are its controller catching up, churn at most (H002, a warning).
        let spec = u.generation_moves > 1;
        let fight = fight(u);
        let burst = burst(u, s.window_ms, o.rate_per_minute);
        let what = match u.generation_moves {
            0 => "generation never moved: status/metadata churn".to_string(),
            1 => "the spec changed once, the rest is status/metadata churn".to_string(),
            n => format!("the spec changed {n} time(s)"),
        };
        found.push(Finding::new(
            if spec { Code::H001 } else { Code::H002 },
            &u.object,
            format!(
                "{rate:.0} updates/min over {}{}: {what}; {}",
                crate::units::human_duration(s.window_ms),
                burst
                    .map(|b| burst_text(&b, o.rate_per_minute))
                    .unwrap_or_default(),
                fight.clone().unwrap_or_else(|| writers_text(u))
            ),
            Some(
                burst
                    .and_then(|b| b.above)
                    .map_or(s.at - s.window_ms, |(first, _)| first),
            ),
            json!({
                "rate_per_minute": (rate * 10.0).round() / 10.0,
                "peak_per_minute": burst.map(|b| b.peak),
                "above_rate_from": burst.and_then(|b| b.above).map(|(f, _)| crate::units::rfc3339(f)),
                "above_rate_until": burst.and_then(|b| b.above).map(|(_, l)| crate::units::rfc3339(l + 60_000)),
                "updates": u.updates,
                "generation_changes": u.generation_moves,
                "managers": u.managers.iter().map(|(m, n)| json!({"manager": m, "updates": n})).collect::<Vec<_>>(),
                "fight": fight,
                "contested_fields": u.contested.iter().map(|(f, n)| json!({"field": f, "changes_of_owner": n})).collect::<Vec<_>>(),
            }),
        ));
    }
    for e in &s.events {
        let rate = e.in_window as f64 / minutes;
        let combined = e.message.contains(COMBINED);
        if rate <= o.storm_per_minute && !combined {
            continue;
        }
        let storm = Finding::new(
            Code::H003,
            &e.involved,
            format!(
                "Event storm: {} {} ×{} ({rate:.0}/min){}",
                e.type_,
                e.reason,
                e.count,
                if combined {
                    ", combined from similar events by the client"
                } else {
                    ""
                }
            ),
            Some(e.first),
            json!({
                "reason": e.reason, "type": e.type_, "count": e.count, "in_window": e.in_window,
                "rate_per_minute": (rate * 10.0).round() / 10.0, "message": e.message,
                "reporting_controller": e.reporting,
            }),
        );
        // NB: only "combined", not faster than the rate: the client said it, nothing measured it.
        found.push(if rate > o.storm_per_minute {
            storm
        } else {
            storm.with_severity(Severity::Info)
        });
    }
    found.extend(refused(s));
    found
}

/// Refusals of one writer's writes of one object below this are not a loop.
pub const MIN_REFUSALS: usize = 3;

/// Refusals that a controller meets in its normal work (409 Conflict on a
/// stale read, 429) are a loop only when they go on: this many, over at
/// least [`SUSTAINED_MS`].
pub const MIN_RETRIED: usize = 5;
pub const SUSTAINED_MS: i64 = 60_000;

/// Whether one writer's refused writes of one object (in time order) are a
/// loop. A 403 never heals by itself: three say it. A 404 says the object is
/// gone (a delete that raced another), never a loop. Anything else is retried
/// by controllers as a matter of course: only when it goes on.
pub fn a_loop(list: &[&crate::model::Refusal]) -> bool {
    let (Some(first), Some(last)) = (list.first(), list.last()) else {
        return false;
    };
    match first.code {
        404 => false,
        401 | 403 => list.len() >= MIN_REFUSALS,
        _ => list.len() >= MIN_RETRIED && last.at - first.at >= SUSTAINED_MS,
    }
}

/// Built-in kinds whose plural a guess gets wrong.
const BUILT_IN: &[(&str, &str)] = &[
    ("replicasets", "ReplicaSet"),
    ("statefulsets", "StatefulSet"),
    ("daemonsets", "DaemonSet"),
    ("cronjobs", "CronJob"),
    ("configmaps", "ConfigMap"),
    ("serviceaccounts", "ServiceAccount"),
    ("persistentvolumeclaims", "PersistentVolumeClaim"),
    ("persistentvolumes", "PersistentVolume"),
    ("horizontalpodautoscalers", "HorizontalPodAutoscaler"),
    ("poddisruptionbudgets", "PodDisruptionBudget"),
    ("networkpolicies", "NetworkPolicy"),
    ("ingresses", "Ingress"),
    ("endpointslices", "EndpointSlice"),
    ("rolebindings", "RoleBinding"),
    ("clusterroles", "ClusterRole"),
    ("clusterrolebindings", "ClusterRoleBinding"),
    ("customresourcedefinitions", "CustomResourceDefinition"),
    ("resourcequotas", "ResourceQuota"),
    ("limitranges", "LimitRange"),
    ("priorityclasses", "PriorityClass"),
    ("storageclasses", "StorageClass"),
    (
        "mutatingwebhookconfigurations",
        "MutatingWebhookConfiguration",
    ),
    (
        "validatingwebhookconfigurations",
        "ValidatingWebhookConfiguration",
    ),
];

/// An object's kind from its resource's plural, for a refusal (which names
/// the resource, not the kind): the recorded types first, else a guess.
fn kind_of(s: &Snapshot, group: &str, resource: &str) -> String {
    kind_of_resource(&s.kinds, group, resource)
}

/// [`kind_of`] from a map of recorded kinds by full resource name.
pub fn kind_of_resource(
    kinds: &std::collections::HashMap<String, String>,
    group: &str,
    resource: &str,
) -> String {
    let full = if group.is_empty() {
        resource.to_string()
    } else {
        format!("{resource}.{group}")
    };
    if let Some(k) = kinds.get(&full) {
        return k.clone();
    }
    if let Some((_, k)) = BUILT_IN.iter().find(|(r, _)| *r == resource) {
        return (*k).to_string();
    }
    let singular = resource
        .strip_suffix("ies")
        .map(|r| format!("{r}y"))
        .or_else(|| resource.strip_suffix("sses").map(|r| format!("{r}ss")))
        .or_else(|| resource.strip_suffix('s').map(str::to_string))
        .unwrap_or_else(|| resource.to_string());
    let mut c = singular.chars();
    c.next()
        .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
        .unwrap_or_default()
}

/// H004: the same writer refused again and again on one object.
fn refused(s: &Snapshot) -> Vec<Finding> {
    let from = s.at - s.window_ms;
    let mut groups: std::collections::BTreeMap<_, Vec<&crate::model::Refusal>> = Default::default();
    for r in s.refusals.iter().filter(|r| r.at >= from && r.at <= s.at) {
        let key = (
            r.group.as_str(),
            r.resource.as_str(),
            r.namespace.as_str(),
            r.name.as_str(),
            r.subresource.as_str(),
            r.verb.as_str(),
            r.user.as_str(),
            r.code,
        );
        groups.entry(key).or_default().push(r);
    }
    let mut found = Vec::new();
    for (_, list) in groups {
        if !a_loop(&list) {
            continue;
        }
        let (first, last) = (list[0], list[list.len() - 1]);
        let object = crate::model::ObjectRef {
            api_version: String::new(),
            kind: kind_of(s, &first.group, &first.resource),
            namespace: first.namespace.clone(),
            // NB: a create refused by RBAC names no object (the body was never read).
            name: match (first.name.is_empty(), first.verb.as_str()) {
                (false, _) => first.name.clone(),
                (true, "create") => "(new)".into(),
                (true, _) => "(all)".into(),
            },
            uid: String::new(),
            field_path: String::new(),
        };
        found.push(Finding::new(
            Code::H004,
            &object,
            format!(
                "{} refused {} times in {} ({}{}): {}: {}",
                first.request(),
                list.len(),
                crate::units::human_duration((last.at - first.at).max(1000)),
                first.status(),
                if last.refused_by.is_empty() {
                    String::new()
                } else {
                    format!(" by {}", last.refused_by)
                },
                first.user,
                last.message
            ),
            Some(first.at),
            json!({
                "verb": first.verb, "resource": first.resource, "subresource": first.subresource,
                "user": first.user, "code": first.code, "reason": first.reason,
                "refused_by": last.refused_by,
                "refusals": list.len(), "first": crate::units::rfc3339(first.at),
                "last": crate::units::rfc3339(last.at), "message": last.message,
            }),
        ));
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::EventSummary;
    use crate::model::ObjectRef;

    fn updates(
        kind: &str,
        updates: i64,
        generation: i64,
        managers: &[(&str, i64)],
    ) -> ObjectUpdates {
        ObjectUpdates {
            object: ObjectRef {
                kind: kind.into(),
                name: "x".into(),
                ..ObjectRef::default()
            },
            updates,
            generation_moves: generation,
            managers: managers.iter().map(|(m, n)| (m.to_string(), *n)).collect(),
            alternations: None,
            per_minute: Vec::new(),
            contested: Vec::new(),
        }
    }

    fn snapshot(updates: Vec<ObjectUpdates>) -> Snapshot {
        Snapshot {
            at: 600_000,
            window_ms: 300_000,
            updates,
            ..Snapshot::default()
        }
    }

    #[test]
    fn a_writer_refused_again_and_again_is_h004() {
        let refusal = |at: i64, user: &str| crate::model::Refusal {
            at,
            verb: "update".into(),
            user: user.into(),
            group: "apps".into(),
            resource: "deployments".into(),
            subresource: "status".into(),
            namespace: "shop".into(),
            name: "web".into(),
            code: 409,
            reason: "Conflict".into(),
            message: "the object has been modified".into(),
            refused_by: String::new(),
        };
        let mut s = snapshot(Vec::new());
        s.refusals = (0..6)
            .map(|i| refusal(400_000 + i * 15_000, "bot (rollout-bot)"))
            .collect();
        s.refusals.push(refusal(450_000, "alice (kubectl-edit)"));
        let f = check(&s, &Options::default());
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].code, Code::H004);
        assert_eq!(
            (f[0].object.kind.as_str(), f[0].object.name.as_str()),
            ("Deployment", "web")
        );
        assert_eq!(
            f[0].summary,
            "update deployments/web/status refused 6 times in 1m (409 Conflict): bot (rollout-bot): the object has been modified"
        );
        assert_eq!(kind_of(&s, "networking.k8s.io", "ingresses"), "Ingress");
        assert_eq!(kind_of(&s, "example.com", "widgets"), "Widget");
        s.kinds
            .insert("widgets.example.com".into(), "Gadget".into());
        assert_eq!(kind_of(&s, "example.com", "widgets"), "Gadget");
    }

    /// Regression: a rollout's controller met six 409s within two seconds (its
    /// reads were stale) and that was called a loop on the first screen.
    #[test]
    fn conflicts_a_controller_retries_past_are_not_a_loop_but_forbidden_is() {
        let refusal = |at: i64, code: u16| crate::model::Refusal {
            at,
            verb: "update".into(),
            user: "kube-controller-manager".into(),
            resource: "deployments".into(),
            namespace: "shop".into(),
            name: "web".into(),
            code,
            ..crate::model::Refusal::default()
        };
        let mut s = snapshot(Vec::new());
        s.refusals = (0..6).map(|i| refusal(500_000 + i * 300, 409)).collect();
        s.refusals
            .extend((0..9).map(|i| refusal(500_000 + i * 10_000, 404)));
        assert!(check(&s, &Options::default()).is_empty());
        s.refusals = (0..3).map(|i| refusal(500_000 + i * 300, 403)).collect();
        assert_eq!(check(&s, &Options::default())[0].code, Code::H004);
    }

    #[test]
    fn two_managers_fighting_over_metadata() {
        let s = snapshot(vec![updates(
            "ConfigMap",
            1500,
            0,
            &[("fighter-a", 750), ("fighter-b", 750)],
        )]);
        let f = check(&s, &Options::default());
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].code, Code::H002);
        assert!(
            f[0].summary.starts_with("300 updates/min over 5m"),
            "{}",
            f[0].summary
        );
        assert_eq!(
            f[0].details["fight"],
            "fight between fighter-a and fighter-b"
        );
    }

    #[test]
    fn a_fight_names_the_fields_that_keep_changing_hands() {
        let mut u = updates("ConfigMap", 300, 0, &[("team-a", 150), ("team-b", 150)]);
        u.contested = vec![("metadata.labels.owner".into(), 298)];
        let f = check(&snapshot(vec![u]), &Options::default());
        assert!(
            f[0].summary
                .ends_with("fight between team-a and team-b over metadata.labels.owner"),
            "{}",
            f[0].summary
        );
        assert_eq!(
            f[0].details["contested_fields"][0]["field"],
            "metadata.labels.owner"
        );
    }

    #[test]
    fn a_spec_fight_is_an_error_and_quiet_objects_and_leases_are_silent() {
        let s = snapshot(vec![
            updates("Deployment", 100, 50, &[("helm", 50), ("argocd", 50)]),
            updates("Deployment", 20, 0, &[("kube-controller-manager", 20)]),
            updates("Lease", 600, 0, &[("kubelet", 600)]),
        ]);
        let f = check(&s, &Options::default());
        assert_eq!(f.len(), 1);
        assert_eq!((f[0].code, f[0].severity), (Code::H001, Severity::Error));
        let noisy = Options {
            include_noisy: true,
            ..Options::default()
        };
        assert_eq!(check(&s, &noisy).len(), 2);
    }

    /// A Deployment created and rolled once within `check --window 1m` made 11
    /// updates (7 of them its controller's status): that was an H001 error,
    /// "the spec changed 1 time(s)", a spec fight that was a rollout.
    #[test]
    fn a_rollout_is_not_a_hot_loop_and_one_spec_change_is_not_a_fight() {
        let mut s = snapshot(vec![updates(
            "Deployment",
            11,
            1,
            &[
                ("kube-controller-manager/status", 7),
                ("demo-ci", 2),
                ("kubectl-create", 2),
            ],
        )]);
        s.window_ms = 60_000;
        assert!(check(&s, &Options::default()).is_empty(), "too few updates");
        // A controller that keeps rewriting status after one spec change: churn, a warning.
        s.updates[0].updates = 300;
        s.updates[0].managers = vec![
            ("kube-controller-manager/status".into(), 298),
            ("demo-ci".into(), 2),
        ];
        let f = check(&s, &Options::default());
        assert_eq!((f[0].code, f[0].severity), (Code::H002, Severity::Warning));
        assert!(
            f[0].summary
                .contains("the spec changed once, the rest is status/metadata churn"),
            "{}",
            f[0].summary
        );
    }

    #[test]
    fn a_short_burst_shows_its_peak_and_span_next_to_the_window_average() {
        // 300 writes/min for 30 s, then quiet: 150 updates over 10 minutes.
        let mut u = updates("ConfigMap", 150, 0, &[("fighter-a", 75), ("fighter-b", 75)]);
        let minute = 29_000_000 * 60_000;
        u.per_minute = vec![(minute, 100), (minute + 60_000, 50)];
        let s = Snapshot {
            at: minute + 600_000,
            window_ms: 600_000,
            updates: vec![u],
            ..Snapshot::default()
        };
        let f = check(&s, &Options::default());
        assert_eq!(
            f[0].summary,
            format!(
                "15 updates/min over 10m, peak 100/min, above 10/min from {} to {} UTC: generation never moved: status/metadata churn; fight between fighter-a and fighter-b",
                hh_mm(minute),
                hh_mm(minute + 120_000)
            )
        );
        assert_eq!(f[0].details["peak_per_minute"], 100);
        assert_eq!(
            f[0].details["above_rate_from"],
            crate::units::rfc3339(minute)
        );
        assert_eq!(
            f[0].since_ms,
            Some(minute),
            "since the burst began, not the window"
        );
        let mut one = s.clone();
        one.updates[0].per_minute = vec![(minute, 150)];
        assert!(
            check(&one, &Options::default())[0]
                .summary
                .contains(&format!(
                    ", peak 150/min, above 10/min only in the minute of {} UTC:",
                    hh_mm(minute)
                ))
        );
    }

    #[test]
    fn unknown_writers_say_why() {
        let s = snapshot(vec![updates("ConfigMap", 100, 0, &[("", 100)])]);
        let f = check(&s, &Options::default());
        assert!(
            f[0].summary.ends_with(
                "; writers unknown: the object has no managedFields, so the apiserver does not say who writes it"
            ),
            "{}",
            f[0].summary
        );
        let s = snapshot(vec![updates(
            "ConfigMap",
            100,
            0,
            &[("kubectl", 90), ("", 10)],
        )]);
        assert!(
            check(&s, &Options::default())[0]
                .summary
                .ends_with("writers: kubectl (90), unknown, no managedFields (10)")
        );
    }

    #[test]
    fn a_window_of_one_minute_needs_no_peak() {
        let mut u = updates("ConfigMap", 100, 0, &[("a", 100)]);
        u.per_minute = vec![(0, 100)];
        let s = Snapshot {
            at: 60_000,
            window_ms: 60_000,
            updates: vec![u],
            ..Snapshot::default()
        };
        let f = check(&s, &Options::default());
        assert_eq!(
            f[0].summary,
            "100 updates/min over 1m: generation never moved: status/metadata churn; writers: a (100)"
        );
        assert_eq!(f[0].details["peak_per_minute"], serde_json::Value::Null);
    }

    #[test]
    fn one_writer_at_a_time_is_no_fight_and_event_storms_are_found() {
        let mut u = updates("ConfigMap", 200, 0, &[("a", 100), ("b", 100)]);
        u.alternations = Some(1);
        let mut s = snapshot(vec![u]);
        s.events = vec![EventSummary {
            reason: "BackOff".into(),
            type_: "Warning".into(),
            count: 900,
            in_window: 300,
            ..EventSummary::default()
        }];
        let f = check(&s, &Options::default());
        assert_eq!(f[0].details["fight"], serde_json::Value::Null);
        assert_eq!(f[1].code, Code::H003);
    }
}
