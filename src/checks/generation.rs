//! `generation`: status that does not reflect the latest spec.
//!
//! Codes: G001 `status.observedGeneration` behind `metadata.generation`; G002
//! a condition whose `observedGeneration` is behind. Either for longer than
//! `--lag-after`, on any kind, custom resources included.

use serde_json::json;

use super::controllers::{describe_operator, for_kind};
use super::{Code, Finding, Options, Severity, Snapshot};
use crate::model::RecordedObject;
use crate::units::human_duration;

fn observer(o: &RecordedObject, s: &Snapshot) -> String {
    if let Some(known) = for_kind(&o.object.api_version, &o.object.kind) {
        // The controller that would observe it may be the one that is gone.
        return match super::leases::component_of(known).and_then(|c| super::leases::down(s, c)) {
            Some((down, _)) => format!("{known} — {down}"),
            None => known.to_string(),
        };
    }
    match o.object.api_version.rsplit_once('/') {
        Some((group, _)) if group.contains('.') => describe_operator(group, &s.objects),
        _ => format!("the controller of {}", o.object.kind),
    }
}

pub fn check(s: &Snapshot, o: &Options) -> Vec<Finding> {
    let mut found = Vec::new();
    for obj in &s.objects {
        let generation = obj.state.generation;
        if generation == 0 {
            continue;
        }
        let lag = obj.generation_since.map(|since| s.at - since);
        if lag.is_some_and(|l| l < o.lag_after_ms) {
            continue;
        }
        let how_long = lag.map_or_else(
            || "for an unknown time".to_string(),
            |l| format!("for {}", human_duration(l)),
        );
        // NB: a lag of unknown length may be a rollout in progress: info, not the code's warning.
        let settle = |f: Finding| {
            if lag.is_some() {
                f
            } else {
                f.with_severity(Severity::Info)
            }
        };
        if let Some(observed) = obj.state.observed_generation.filter(|og| *og < generation) {
            found.push(settle(Finding::new(
                Code::G001,
                &obj.object,
                format!(
                    "generation {generation} not observed {how_long} (status.observedGeneration {observed}); expected observer: {}",
                    observer(obj, s)
                ),
                obj.generation_since,
                json!({
                    "generation": generation, "observed_generation": observed,
                    "lag_seconds": lag.map(|l| l / 1000), "expected_observer": observer(obj, s),
                }),
            )));
        }
        let behind: Vec<_> = obj
            .state
            .conditions
            .iter()
            .filter(|c| c.observed_generation.is_some_and(|og| og < generation))
            .collect();
        if !behind.is_empty() {
            found.push(settle(Finding::new(
                Code::G002,
                &obj.object,
                format!(
                    "condition(s) {} describe an older generation than {generation} {how_long}",
                    behind.iter().map(|c| format!("{}={}", c.type_, c.status)).collect::<Vec<_>>().join(", ")
                ),
                obj.generation_since,
                json!({
                    "generation": generation,
                    "conditions": behind.iter().map(|c| json!({
                        "type": c.type_, "status": c.status, "observed_generation": c.observed_generation,
                    })).collect::<Vec<_>>(),
                    "lag_seconds": lag.map(|l| l / 1000), "expected_observer": observer(obj, s),
                }),
            )));
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{condition, object};
    use super::*;

    const MIN: i64 = 60_000;

    #[test]
    fn a_custom_resource_whose_status_stays_behind() {
        let mut w = object("Widget", "shop", "w1");
        w.state.generation = 3;
        w.state.observed_generation = Some(2);
        w.generation_since = Some(10 * MIN);
        let mut ready = condition("Ready", "True", "Reconciled", "");
        ready.observed_generation = Some(2);
        w.state.conditions = vec![ready];
        let s = Snapshot {
            at: 30 * MIN,
            objects: vec![w],
            ..Snapshot::default()
        };
        let f = check(&s, &Options::default());
        assert_eq!(
            f.iter().map(|f| f.code).collect::<Vec<_>>(),
            vec![Code::G001, Code::G002]
        );
        assert!(
            f[0].summary.contains("generation 3 not observed for 20m"),
            "{}",
            f[0].summary
        );
        assert!(
            f[0].summary.contains("no controller found for example.com"),
            "{}",
            f[0].summary
        );
        assert_eq!(f[0].details["lag_seconds"], 1200);
    }

    #[test]
    fn a_short_lag_and_a_caught_up_object_are_silent() {
        let mut rolling = object("Deployment", "shop", "web");
        rolling.state.generation = 2;
        rolling.state.observed_generation = Some(1);
        rolling.generation_since = Some(29 * MIN);
        let mut done = object("Deployment", "shop", "api");
        done.state.generation = 5;
        done.state.observed_generation = Some(5);
        done.generation_since = Some(0);
        let s = Snapshot {
            at: 30 * MIN,
            objects: vec![rolling, done],
            ..Snapshot::default()
        };
        assert!(check(&s, &Options::default()).is_empty());
    }
}
