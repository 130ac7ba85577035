//! `controllers`: a leader that stopped renewing its Lease. Every controller
//! that runs with leader election (kube-controller-manager, kube-scheduler,
//! most operators) renews a `coordination.k8s.io` Lease every few seconds.
//! One whose last renewal is older than twice the Lease's duration (and at
//! least [`MIN_STALE_MS`]) is not running, or cannot reach the apiserver:
//! nothing it reconciles moves, and no Event says so, because the component
//! that would write it is the one that is gone.
//!
//! Code C001: error for the control plane's own components
//! ([`CONTROL_PLANE`]), warning for any other holder. Node heartbeats
//! (`kube-node-lease`) are the Node's Ready condition's business, and the
//! apiserver's identity Leases (`kube-system/apiserver-…`) expire by design
//! when an apiserver restarts; neither is reported. A Lease of another
//! holder that has not been renewed for over [`ABANDONED_MS`] is taken for
//! a component that was uninstalled and left it behind.
//!
//! Other checks ask [`down`] whether the controller they expect to act is
//! running: `generation` names it in G001's expected observer, `progress`
//! makes it the first cause of a stall (the Deployment that never gets a
//! ReplicaSet, the Pod that is never scheduled).

use serde_json::json;

use super::{Code, Finding, Severity, Snapshot};
use crate::model::RecordedObject;
use crate::units::{human_duration, rfc3339};

/// The least time without a renewal that counts as stale, whatever the
/// Lease's duration: leader election renews every 2 s by default, and a
/// busy apiserver may hold a renewal for seconds.
pub const MIN_STALE_MS: i64 = 30_000;

/// A non-control-plane Lease unrenewed for longer than this is left behind
/// by an uninstalled component, not news.
pub const ABANDONED_MS: i64 = 24 * 3_600_000;

/// The control plane's leader Leases, in `kube-system`, named as their
/// components.
pub const CONTROL_PLANE: &[&str] = &[
    "kube-controller-manager",
    "kube-scheduler",
    "cloud-controller-manager",
];

/// A Lease its holder stopped renewing.
#[derive(Debug)]
pub struct Stale<'a> {
    pub object: &'a RecordedObject,
    pub holder: &'a str,
    pub renewed: i64,
    /// When the Lease expired (renewal + duration).
    pub expired: i64,
    pub control_plane: bool,
}

impl Stale<'_> {
    /// "kube-controller-manager has not renewed its Lease kube-system/kube-controller-manager
    /// since 10:02:13 (3m ago; holder …): it is not running, or cannot reach the apiserver".
    pub fn sentence(&self, at: i64) -> String {
        let o = &self.object.object;
        let who = if self.control_plane {
            o.name.clone()
        } else if self.holder.is_empty() {
            "its last holder".to_string()
        } else {
            self.holder.to_string()
        };
        let holder = if self.control_plane && !self.holder.is_empty() {
            format!("; holder {}", self.holder)
        } else {
            String::new()
        };
        format!(
            "{who} has not renewed its Lease {}/{} since {} ({} ago{holder}): it is not running, or cannot reach the apiserver",
            o.namespace,
            o.name,
            rfc3339(self.renewed),
            human_duration(at - self.renewed)
        )
    }
}

/// The Leases of `s` whose holder stopped renewing them, oldest renewal first.
pub fn stale(s: &Snapshot) -> Vec<Stale<'_>> {
    let mut found: Vec<Stale<'_>> = s
        .objects
        .iter()
        .filter(|o| o.object.kind == "Lease" && o.state.deletion.is_none())
        .filter_map(|o| {
            let lease = o.state.lease.as_ref()?;
            let renewed = lease.renewed?;
            let ns = o.object.namespace.as_str();
            if ns == "kube-node-lease"
                || (ns == "kube-system" && o.object.name.starts_with("apiserver-"))
            {
                return None;
            }
            let control_plane =
                ns == "kube-system" && CONTROL_PLANE.contains(&o.object.name.as_str());
            // NB: a Lease released on a clean stop has no holder: for the
            // control plane that still means no leader; for others, a stop
            // someone chose.
            if lease.holder.is_empty() && !control_plane {
                return None;
            }
            let duration_ms = lease.duration_s.max(1) * 1000;
            let silent = s.at - renewed;
            if silent <= (2 * duration_ms).max(MIN_STALE_MS)
                || (!control_plane && silent > ABANDONED_MS)
            {
                return None;
            }
            Some(Stale {
                object: o,
                holder: &lease.holder,
                renewed,
                expired: renewed + duration_ms,
                control_plane,
            })
        })
        .collect();
    found.sort_by_key(|l| l.renewed);
    found
}

/// Why `component` (a [`CONTROL_PLANE`] name) does nothing, when its Lease
/// says so: the sentence, and its last renewal.
pub fn down(s: &Snapshot, component: &str) -> Option<(String, i64)> {
    stale(s)
        .into_iter()
        .find(|l| l.control_plane && l.object.object.name == component)
        .map(|l| (l.sentence(s.at), l.renewed))
}

/// The control-plane component a controller description names
/// ("the deployment controller (kube-controller-manager)").
pub fn component_of(controller: &str) -> Option<&'static str> {
    CONTROL_PLANE
        .iter()
        .copied()
        .find(|c| controller.contains(&format!("({c})")))
}

pub fn check(s: &Snapshot) -> Vec<Finding> {
    stale(s)
        .into_iter()
        .map(|l| {
            let f = Finding::new(
                Code::C001,
                &l.object.object,
                l.sentence(s.at),
                Some(l.expired),
                json!({
                    "holder": l.holder,
                    "renewed": rfc3339(l.renewed),
                    "silent_seconds": (s.at - l.renewed) / 1000,
                    "control_plane": l.control_plane,
                }),
            );
            if l.control_plane {
                f.with_severity(Severity::Error)
            } else {
                f
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::object;
    use super::*;
    use crate::model::LeaseSpec;

    const SEC: i64 = 1000;

    fn lease(ns: &str, name: &str, holder: &str, renewed: i64) -> RecordedObject {
        let mut o = object("Lease", ns, name);
        o.object.api_version = "coordination.k8s.io/v1".into();
        o.state.lease = Some(LeaseSpec {
            holder: holder.into(),
            renewed: Some(renewed),
            duration_s: 15,
        });
        o
    }

    fn snap(at: i64, objects: Vec<RecordedObject>) -> Snapshot {
        Snapshot {
            at,
            objects,
            ..Snapshot::default()
        }
    }

    #[test]
    fn a_stopped_controller_manager_is_an_error_and_names_its_lease() {
        let s = snap(
            1_000 * SEC,
            vec![lease(
                "kube-system",
                "kube-controller-manager",
                "cp-1_abc",
                800 * SEC,
            )],
        );
        let f = check(&s);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].code, Code::C001);
        assert_eq!(f[0].severity, Severity::Error);
        assert!(
            f[0].summary.starts_with(
                "kube-controller-manager has not renewed its Lease kube-system/kube-controller-manager since"
            ),
            "{}",
            f[0].summary
        );
        assert!(
            f[0].summary.contains("(3m ago; holder cp-1_abc)"),
            "{}",
            f[0].summary
        );
        assert!(down(&s, "kube-controller-manager").is_some());
        assert!(down(&s, "kube-scheduler").is_none());
    }

    #[test]
    fn a_renewing_leader_node_heartbeats_apiserver_identities_and_abandoned_leases_are_silent() {
        let at = 100_000 * SEC;
        let s = snap(
            at,
            vec![
                lease("kube-system", "kube-scheduler", "cp-1", at - 5 * SEC),
                // Within twice its duration (and the 30 s floor).
                lease(
                    "kube-system",
                    "kube-controller-manager",
                    "cp-1",
                    at - 29 * SEC,
                ),
                lease("kube-node-lease", "node-1", "node-1", at - 600 * SEC),
                lease(
                    "kube-system",
                    "apiserver-x7",
                    "apiserver-x7_1",
                    at - 9_000 * SEC,
                ),
                lease(
                    "operators",
                    "old-operator.example.com",
                    "gone",
                    at - 90_000 * SEC,
                ),
                lease("operators", "released.example.com", "", at - 600 * SEC),
            ],
        );
        assert!(check(&s).is_empty(), "{:?}", check(&s));
    }

    #[test]
    fn an_operator_that_stopped_renewing_is_a_warning_named_by_its_holder() {
        let at = 10_000 * SEC;
        let s = snap(
            at,
            vec![lease(
                "cert-manager",
                "cert-manager-controller",
                "cm-7d9f_1",
                at - 120 * SEC,
            )],
        );
        let f = check(&s);
        assert_eq!(f[0].severity, Severity::Warning);
        assert!(
            f[0].summary.starts_with(
                "cm-7d9f_1 has not renewed its Lease cert-manager/cert-manager-controller"
            ),
            "{}",
            f[0].summary
        );
    }

    #[test]
    fn a_controller_description_names_its_component() {
        assert_eq!(
            component_of("the deployment controller (kube-controller-manager)"),
            Some("kube-controller-manager")
        );
        assert_eq!(component_of("no controller found for example.com"), None);
    }
}
