//! `hotloop`: objects rewritten faster than `--rate` per minute, and Event storms.
//!
//! Codes: H001 a spec fight (updates move `metadata.generation`); H002
//! status or metadata churn (no generation change); H003 an Event storm
//! (occurrences faster than the rate, or the client's "(combined from similar
//! events)" aggregate). Leases, Endpoints, EndpointSlices, Events and Nodes
//! (heartbeats) churn by design and are left out unless asked for.

use serde_json::json;

use super::{Finding, ObjectUpdates, Options, Severity, Snapshot};

const CHECK: &str = "hotloop";

/// Kinds that are rewritten constantly by design.
pub const NOISY: &[&str] = &["Lease", "Endpoints", "EndpointSlice", "Event", "Node"];

const COMBINED: &str = "(combined from similar events)";

/// "fight between A and B" when two or more writers each made at least a
/// quarter of the updates (and, when the order is known, kept alternating).
fn fight(u: &ObjectUpdates) -> Option<String> {
    let big: Vec<&str> = u
        .managers
        .iter()
        .filter(|(m, n)| !m.is_empty() && *n * 4 >= u.updates)
        .map(|(m, _)| m.as_str())
        .collect();
    let alternating = u.alternations.is_none_or(|a| a * 2 >= u.updates);
    (big.len() >= 2 && alternating).then(|| format!("fight between {}", big.join(" and ")))
}

pub fn check(s: &Snapshot, o: &Options) -> Vec<Finding> {
    let minutes = (s.window_ms as f64 / 60_000.0).max(1.0 / 60.0);
    let mut found = Vec::new();
    for u in &s.updates {
        if !o.include_noisy && NOISY.contains(&u.object.kind.as_str()) {
            continue;
        }
        let rate = u.updates as f64 / minutes;
        if rate <= o.rate_per_minute {
            continue;
        }
        let spec = u.generation_moves > 0;
        let fight = fight(u);
        let writers = u
            .managers
            .iter()
            .map(|(m, n)| format!("{} ({n})", if m.is_empty() { "unknown" } else { m }))
            .collect::<Vec<_>>()
            .join(", ");
        let what = if spec {
            format!("the spec changed {} time(s)", u.generation_moves)
        } else {
            "generation never moved: status/metadata churn".to_string()
        };
        found.push(Finding::new(
            CHECK,
            if spec { "H001" } else { "H002" },
            if spec { Severity::Error } else { Severity::Warning },
            &u.object,
            format!(
                "{rate:.0} updates/min over {}: {what}; {}",
                crate::units::human_duration(s.window_ms),
                fight.clone().unwrap_or_else(|| format!("writers: {writers}"))
            ),
            Some(s.at - s.window_ms),
            json!({
                "rate_per_minute": (rate * 10.0).round() / 10.0,
                "updates": u.updates,
                "generation_changes": u.generation_moves,
                "managers": u.managers.iter().map(|(m, n)| json!({"manager": m, "updates": n})).collect::<Vec<_>>(),
                "fight": fight,
            }),
        ));
    }
    for e in &s.events {
        let rate = e.in_window as f64 / minutes;
        let combined = e.message.contains(COMBINED);
        if rate <= o.storm_per_minute && !combined {
            continue;
        }
        found.push(Finding::new(
            CHECK,
            "H003",
            if rate > o.storm_per_minute {
                Severity::Warning
            } else {
                Severity::Info
            },
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
        ));
    }
    found
}

#[cfg(test)]
mod tests {
    use super::super::SnapEvent;
    use super::*;
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
    fn two_managers_fighting_over_metadata() {
        let s = snapshot(vec![updates(
            "ConfigMap",
            1500,
            0,
            &[("fighter-a", 750), ("fighter-b", 750)],
        )]);
        let f = check(&s, &Options::default());
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].code, "H002");
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
    fn a_spec_fight_is_an_error_and_quiet_objects_and_leases_are_silent() {
        let s = snapshot(vec![
            updates("Deployment", 100, 50, &[("helm", 50), ("argocd", 50)]),
            updates("Deployment", 20, 0, &[("kube-controller-manager", 20)]),
            updates("Lease", 600, 0, &[("kubelet", 600)]),
        ]);
        let f = check(&s, &Options::default());
        assert_eq!(f.len(), 1);
        assert_eq!((f[0].code, f[0].severity), ("H001", Severity::Error));
        let noisy = Options {
            include_noisy: true,
            ..Options::default()
        };
        assert_eq!(check(&s, &noisy).len(), 2);
    }

    #[test]
    fn one_writer_at_a_time_is_no_fight_and_event_storms_are_found() {
        let mut u = updates("ConfigMap", 200, 0, &[("a", 100), ("b", 100)]);
        u.alternations = Some(1);
        let mut s = snapshot(vec![u]);
        s.events = vec![SnapEvent {
            reason: "BackOff".into(),
            type_: "Warning".into(),
            count: 900,
            in_window: 300,
            ..SnapEvent::default()
        }];
        let f = check(&s, &Options::default());
        assert_eq!(f[0].details["fight"], serde_json::Value::Null);
        assert_eq!(f[1].code, "H003");
    }
}
