//! `pods`: Pods whose containers cannot start by themselves.
//!
//! Code: P001 a container waiting in a reason that does not pass without a
//! fix (ImagePullBackOff, ErrImagePull, CrashLoopBackOff, CreateContainer…
//! errors) for longer than `--stuck-after`; at once for a back-off the
//! kubelet entered after a failure it saw ([`AT_ONCE`]). The summary names the container,
//! the reason, the image it runs and, for a crash loop, the restarts and the
//! last exit, so that a bad image or a crashing release is on the first
//! screen; table output folds the Pods of one controller into one line.
//! P002 a Pod that failed for good with nothing to replace it; P003 a
//! container that exited with a failure in a Pod that runs on without it
//! (`restartPolicy: Never`). Both at once: their states are final.

use serde_json::json;

use super::{Code, Finding, Options, Snapshot};
use crate::model::{BAD_WAITING, ContainerState, ObjectState};
use crate::units::human_duration;

/// Waiting reasons that are a failure already seen, not a state that may
/// still pass: the kubelet backs off after a crash or a failed pull, and an
/// invalid name never pulls. Reported at once, whatever `--stuck-after`
/// (issue 47: waiting only helps a state that may still converge). NB: the
/// first `ErrImagePull` (a registry's blip) and `CreateContainerConfigError`
/// (a ConfigMap about to be created) still wait.
pub const AT_ONCE: &[&str] = &[
    "CrashLoopBackOff",
    "ImagePullBackOff",
    "InvalidImageName",
    "ErrImageNeverPull",
];

/// The first container of a Pod that is stuck waiting, if one is.
pub fn stuck_container(s: &ObjectState) -> Option<&ContainerState> {
    s.containers
        .iter()
        .find(|c| c.state == "waiting" && BAD_WAITING.contains(&c.reason.as_str()))
}

/// What the Pod runs: its images, init containers first, as the spec lists them.
fn images(s: &ObjectState) -> String {
    let mut images = s.images.clone();
    images.dedup();
    images.join(", ")
}

/// When the Pod stopped (or never began) being ready: its Ready condition's
/// last transition, else its creation. NB: container states carry no time;
/// the Ready condition turned False when a container failed or ended.
fn not_ready_since(pod: &crate::model::RecordedObject) -> Option<i64> {
    pod.state
        .conditions
        .iter()
        .find(|c| c.type_ == "Ready" && c.status != "True")
        .and_then(|c| c.last_transition)
        .or(pod.created)
}

/// P002: a Pod that Failed with no controller to replace it (a bare Pod),
/// or that was Evicted, told at once: the phase is final (issue 47). A Job's
/// Pods are left to R002, which names their exits.
fn failed(pod: &crate::model::RecordedObject) -> Option<Finding> {
    let state = &pod.state;
    if state.phase != "Failed" || state.deletion.is_some() {
        return None;
    }
    let controller = state.owners.iter().find(|r| r.controller);
    let evicted = state.phase_reason.starts_with("Evicted");
    if controller.is_some_and(|r| r.kind == "Job") || (controller.is_some() && !evicted) {
        return None;
    }
    let exit = state
        .containers
        .iter()
        .find(|c| c.state == "terminated" && c.exit_code.is_some_and(|x| x != 0))
        .map(|c| {
            format!(
                "container {} exited {}{}",
                c.name,
                c.exit_code.unwrap_or_default(),
                if c.reason.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", c.reason)
                }
            )
        });
    let why = match (state.phase_reason.as_str(), exit) {
        ("", Some(exit)) => exit,
        ("", None) => "no reason given".to_string(),
        (said, Some(exit)) => format!("{said}; {exit}"),
        (said, None) => said.to_string(),
    };
    let whose = match controller {
        Some(r) => format!(
            " (of {}/{}: it makes another, this one stays)",
            r.kind, r.name
        ),
        None => " (a bare Pod: nothing will replace it)".to_string(),
    };
    let since = not_ready_since(pod);
    let mut finding = Finding::new(
        Code::P002,
        &pod.object,
        format!("failed: {why}{whose}"),
        since,
        json!({"phase": state.phase, "reason": state.phase_reason, "node": state.node_name}),
    );
    finding.owner = controller.map(|r| format!("{}/{}", r.kind, r.name));
    Some(finding)
}

/// P003: a container of a Pod that still runs exited with a failure, and
/// `restartPolicy: Never` means nothing starts it again: the Pod stays
/// Running on its other containers (a sidecar), and a Job that waits for it
/// to end never ends. Told at once: the state is final. An init container
/// is not one (a failed one fails the Pod, P002; a native sidecar restarts
/// whatever the Pod's policy).
fn exited_for_good(pod: &crate::model::RecordedObject) -> Option<Finding> {
    let state = &pod.state;
    if state.phase != "Running" || state.deletion.is_some() || state.restart_policy != "Never" {
        return None;
    }
    let exited = state
        .containers
        .iter()
        .find(|c| !c.init && c.state == "terminated" && c.exit_code.is_some_and(|x| x != 0))?;
    let running: Vec<&str> = state
        .containers
        .iter()
        .filter(|c| c.state == "running")
        .map(|c| c.name.as_str())
        .collect();
    let still = if running.is_empty() {
        String::new()
    } else {
        format!("; still running: {}", running.join(", "))
    };
    let reason = if exited.reason.is_empty() {
        String::new()
    } else {
        format!(" ({})", exited.reason)
    };
    let controller = state.owners.iter().find(|r| r.controller);
    let waits = match controller {
        Some(r) if r.kind == "Job" => format!("; Job/{} counts it only once the Pod ends", r.name),
        _ => String::new(),
    };
    let since = not_ready_since(pod);
    let mut finding = Finding::new(
        Code::P003,
        &pod.object,
        format!(
            "container {} exited {}{reason} and will not be started again (restartPolicy Never){still}{waits}",
            exited.name,
            exited.exit_code.unwrap_or_default(),
        ),
        since,
        json!({
            "container": exited.name, "reason": exited.reason, "exit_code": exited.exit_code,
            "running": running, "restart_policy": state.restart_policy, "node": state.node_name,
        }),
    );
    finding.owner = controller.map(|r| format!("{}/{}", r.kind, r.name));
    Some(finding)
}

pub fn check(s: &Snapshot, o: &Options) -> Vec<Finding> {
    let pods = || s.objects.iter().filter(|p| p.object.kind == "Pod");
    let mut found: Vec<Finding> = pods().filter_map(failed).collect();
    found.extend(pods().filter_map(exited_for_good));
    for pod in s.objects.iter().filter(|p| p.object.kind == "Pod") {
        let state = &pod.state;
        if state.deletion.is_some() || matches!(state.phase.as_str(), "Succeeded" | "Failed") {
            continue;
        }
        let Some(stuck) = stuck_container(state) else {
            continue;
        };
        let since = not_ready_since(pod);
        if !AT_ONCE.contains(&stuck.reason.as_str())
            && since.is_some_and(|t| s.at - t < o.stuck_after_ms)
        {
            continue;
        }
        let how_long = since
            .map(|t| format!(" for {}", human_duration(s.at - t)))
            .unwrap_or_default();
        let crash = if stuck.restarts > 0 {
            let last = match (stuck.last_reason.as_str(), stuck.last_exit_code) {
                ("", None) => String::new(),
                (reason, Some(code)) if !reason.is_empty() => {
                    format!(", last exit {code} ({reason})")
                }
                (_, Some(code)) => format!(", last exit {code}"),
                (reason, None) => format!(", last {reason}"),
            };
            format!(" after {} restart(s){last}", stuck.restarts)
        } else {
            String::new()
        };
        let kind = if stuck.init {
            "init container"
        } else {
            "container"
        };
        let image = images(state);
        let image = if image.is_empty() {
            String::new()
        } else {
            format!("; image {image}")
        };
        let mut finding = Finding::new(
            Code::P001,
            &pod.object,
            format!(
                "{kind} {} waiting ({}){how_long}{crash}{image}",
                stuck.name, stuck.reason
            ),
            since,
            json!({
                "container": stuck.name, "init": stuck.init, "reason": stuck.reason,
                "restarts": stuck.restarts, "last_reason": stuck.last_reason,
                "last_exit_code": stuck.last_exit_code, "images": state.images,
                "node": state.node_name,
            }),
        );
        finding.owner = state
            .owners
            .iter()
            .find(|r| r.controller)
            .map(|r| format!("{}/{}", r.kind, r.name));
        found.push(finding);
    }
    found
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::object;
    use super::*;
    use crate::model::{Condition, OwnerRef};

    const MIN: i64 = 60_000;

    fn pod(name: &str, reason: &str, restarts: i64) -> crate::model::RecordedObject {
        let mut p = object("Pod", "shop", name);
        p.created = Some(0);
        p.state.node_name = "kwok-small".into();
        p.state.phase = "Running".into();
        p.state.images = vec!["web:broken".into()];
        p.state.containers = vec![ContainerState {
            name: "web".into(),
            state: "waiting".into(),
            reason: reason.into(),
            restarts,
            last_reason: if restarts > 0 {
                "Error".into()
            } else {
                String::new()
            },
            last_exit_code: (restarts > 0).then_some(1),
            ..ContainerState::default()
        }];
        p.state.conditions = vec![Condition {
            type_: "Ready".into(),
            status: "False".into(),
            last_transition: Some(2 * MIN),
            ..Condition::default()
        }];
        p.state.owners = vec![OwnerRef {
            kind: "ReplicaSet".into(),
            name: "web-5d8f6c".into(),
            controller: true,
            ..OwnerRef::default()
        }];
        p
    }

    fn snapshot(objects: Vec<crate::model::RecordedObject>) -> Snapshot {
        Snapshot {
            at: 30 * MIN,
            objects,
            has_objects: true,
            ..Snapshot::default()
        }
    }

    #[test]
    fn a_bad_image_names_the_container_the_reason_and_the_image() {
        let f = check(
            &snapshot(vec![pod("web-1", "ImagePullBackOff", 0)]),
            &Options::default(),
        );
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].code, Code::P001);
        assert_eq!(
            f[0].summary,
            "container web waiting (ImagePullBackOff) for 28m; image web:broken"
        );
        assert_eq!(f[0].owner.as_deref(), Some("ReplicaSet/web-5d8f6c"));
    }

    #[test]
    fn a_crash_loop_says_how_often_and_how_it_last_ended() {
        let f = check(
            &snapshot(vec![pod("web-1", "CrashLoopBackOff", 7)]),
            &Options::default(),
        );
        assert_eq!(
            f[0].summary,
            "container web waiting (CrashLoopBackOff) for 28m after 7 restart(s), last exit 1 (Error); image web:broken"
        );
    }

    /// Issue 47: a back-off the kubelet entered after a failure it saw
    /// waited five minutes for `--stuck-after` while peers report it at once.
    #[test]
    fn a_crash_loop_and_an_image_back_off_are_reported_at_once() {
        let mut crash = pod("crash", "CrashLoopBackOff", 2);
        crash.state.conditions[0].last_transition = Some(29 * MIN);
        crash.state.containers[0].last_reason = "OOMKilled".into();
        crash.state.containers[0].last_exit_code = Some(137);
        let mut pull = pod("pull", "ImagePullBackOff", 0);
        pull.state.conditions[0].last_transition = Some(29 * MIN);
        let f = check(&snapshot(vec![crash, pull]), &Options::default());
        assert_eq!(f.len(), 2, "{f:?}");
        assert_eq!(
            f[0].summary,
            "container web waiting (CrashLoopBackOff) for 1m after 2 restart(s), last exit 137 (OOMKilled); image web:broken"
        );
        assert!(
            f[1].summary
                .starts_with("container web waiting (ImagePullBackOff) for 1m")
        );
    }

    /// `ErrImageNeverPull` was on the at-once list but not among the waiting
    /// reasons P001 reads: never reported (found mapping k8sgpt's analyzers).
    #[test]
    fn err_image_never_pull_is_reported_at_once() {
        let mut never = pod("never", "ErrImageNeverPull", 0);
        never.state.conditions[0].last_transition = Some(29 * MIN);
        let f = check(&snapshot(vec![never]), &Options::default());
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(
            f[0].summary
                .starts_with("container web waiting (ErrImageNeverPull) for 1m")
        );
    }

    /// Issue 47: a bare Pod that failed, or an evicted one, got no finding.
    #[test]
    fn a_bare_pod_that_failed_and_an_evicted_pod_are_p002_at_once() {
        let mut bare = pod("once", "", 0);
        bare.state.owners.clear();
        bare.state.phase = "Failed".into();
        bare.state.containers = vec![ContainerState {
            name: "job".into(),
            state: "terminated".into(),
            reason: "Error".into(),
            exit_code: Some(2),
            ..ContainerState::default()
        }];
        let mut evicted = pod("web-1", "", 0);
        evicted.state.phase = "Failed".into();
        evicted.state.containers.clear();
        evicted.state.phase_reason = "Evicted: The node was low on resource: memory.".into();
        let mut of_job = pod("migrate-x", "", 0);
        of_job.state.phase = "Failed".into();
        of_job.state.owners[0].kind = "Job".into();
        let f = check(&snapshot(vec![bare, evicted, of_job]), &Options::default());
        let said: Vec<(Code, &str)> = f.iter().map(|f| (f.code, f.summary.as_str())).collect();
        assert_eq!(
            said,
            [
                (
                    Code::P002,
                    "failed: container job exited 2 (Error) (a bare Pod: nothing will replace it)"
                ),
                (
                    Code::P002,
                    "failed: Evicted: The node was low on resource: memory. (of ReplicaSet/web-5d8f6c: it makes another, this one stays)"
                ),
            ]
        );
    }

    #[test]
    fn young_pods_healthy_pods_and_deleted_pods_are_silent() {
        // NB: a first failed pull may be a registry's blip: it waits.
        let mut young = pod("young", "ErrImagePull", 0);
        young.state.conditions[0].last_transition = Some(28 * MIN);
        let mut healthy = pod("healthy", "", 0);
        healthy.state.containers[0].state = "running".into();
        let mut going = pod("going", "CrashLoopBackOff", 3);
        going.state.deletion = Some(MIN);
        let mut creating = pod("creating", "ContainerCreating", 0);
        creating.state.containers[0].state = "waiting".into();
        let f = check(
            &snapshot(vec![young, healthy, going, creating]),
            &Options::default(),
        );
        assert!(f.is_empty(), "{f:?}");
    }

    /// An app that exited 1 beside a sidecar, in a Pod that never restarts a container.
    fn exited_beside_a_sidecar(name: &str, policy: &str) -> crate::model::RecordedObject {
        let mut p = pod(name, "", 0);
        p.state.restart_policy = policy.into();
        p.state.owners.clear();
        p.state.containers = vec![
            ContainerState {
                name: "report".into(),
                state: "terminated".into(),
                reason: "Error".into(),
                exit_code: Some(1),
                ..ContainerState::default()
            },
            ContainerState {
                name: "proxy".into(),
                state: "running".into(),
                ready: true,
                ..ContainerState::default()
            },
        ];
        p
    }

    #[test]
    fn a_container_that_exited_for_good_beside_a_sidecar_is_p003_at_once() {
        let mut of_a_job = exited_beside_a_sidecar("of-a-job", "Never");
        of_a_job.state.owners = vec![OwnerRef {
            kind: "Job".into(),
            name: "nightly".into(),
            controller: true,
            ..OwnerRef::default()
        }];
        // At once: the Ready condition turned False a moment before the snapshot.
        of_a_job.state.conditions[0].last_transition = Some(30 * MIN - 1_000);
        let f = check(
            &snapshot(vec![exited_beside_a_sidecar("report", "Never"), of_a_job]),
            &Options::default(),
        );
        let got: Vec<(Code, &str, &str)> = f
            .iter()
            .map(|f| (f.code, f.object.name.as_str(), f.summary.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                (
                    Code::P003,
                    "report",
                    "container report exited 1 (Error) and will not be started again (restartPolicy Never); still running: proxy"
                ),
                (
                    Code::P003,
                    "of-a-job",
                    "container report exited 1 (Error) and will not be started again (restartPolicy Never); still running: proxy; Job/nightly counts it only once the Pod ends"
                ),
            ]
        );
        assert_eq!(f[1].owner.as_deref(), Some("Job/nightly"));
    }

    /// Regression guard: with `Always` or `OnFailure` the kubelet starts the
    /// container again (a crash loop is P001's), a container that exited 0
    /// is done, and a Pod that Failed or is going is not one that runs on.
    #[test]
    fn an_exit_that_restarts_succeeds_or_ends_the_pod_is_not_p003() {
        let always = exited_beside_a_sidecar("always", "");
        let on_failure = exited_beside_a_sidecar("on-failure", "OnFailure");
        let mut done = exited_beside_a_sidecar("done", "Never");
        done.state.containers[0].exit_code = Some(0);
        done.state.containers[0].reason = "Completed".into();
        let mut going = exited_beside_a_sidecar("going", "Never");
        going.state.deletion = Some(MIN);
        let mut init = exited_beside_a_sidecar("init", "Never");
        init.state.containers[0].init = true;
        let f = check(
            &snapshot(vec![always, on_failure, done, going, init]),
            &Options::default(),
        );
        assert!(f.iter().all(|f| f.code != Code::P003), "{f:?}");
    }
}
