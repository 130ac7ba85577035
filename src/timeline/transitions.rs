//! Transitions of one object, derived by diffing its consecutive versions:
//! created, spec changed (generation bump), status caught up, conditions,
//! phase, container states and restarts, scheduling, scaling, deletion
//! started, finalizers added and removed.

use crate::model::{ContainerState, ObjectRef, ObjectState, Provenance, Version};

/// One derived transition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transition {
    pub at: i64,
    /// `Normal` or `Warning`.
    pub type_: &'static str,
    pub reason: String,
    pub message: String,
    pub writers: Vec<String>,
    /// A `SpecChanged`'s stored diff (empty otherwise).
    pub fields: Vec<crate::specdiff::FieldChange>,
    /// Where the version that tells it comes from.
    pub provenance: Provenance,
}

/// Waiting reasons that mean trouble.
use crate::model::BAD_WAITING;

/// Whether a condition in this status is bad news.
fn condition_is_bad(type_: &str, status: &str) -> bool {
    let inverted = type_.contains("Pressure")
        || type_.contains("Failure")
        || type_.ends_with("Remaining")
        || matches!(
            type_,
            "NetworkUnavailable" | "Failed" | "Stalled" | "Degraded"
        );
    if inverted {
        status == "True"
    } else {
        status == "False"
    }
}

fn container_text(c: &ContainerState) -> String {
    match c.state.as_str() {
        "waiting" if !c.reason.is_empty() => format!("waiting ({})", c.reason),
        "terminated" => format!(
            "terminated ({}{})",
            if c.reason.is_empty() {
                "no reason"
            } else {
                &c.reason
            },
            c.exit_code
                .map(|x| format!(", exit code {x}"))
                .unwrap_or_default()
        ),
        "" => "unknown".to_string(),
        other => other.to_string(),
    }
}

fn container_is_bad(c: &ContainerState) -> bool {
    (c.state == "waiting" && BAD_WAITING.contains(&c.reason.as_str()))
        || (c.state == "terminated" && c.exit_code.is_some_and(|x| x != 0))
}

/// A short description of a state, for "created" lines.
fn describe(kind: &str, s: &ObjectState) -> String {
    let mut parts = Vec::new();
    if s.generation > 0 && kind != "Pod" {
        parts.push(format!("generation {}", s.generation));
    }
    if let Some(r) = s.replicas.get("spec.replicas") {
        parts.push(format!("replicas {r}"));
    }
    if !s.images.is_empty() {
        parts.push(format!("image {}", s.images.join(", ")));
    }
    if let Some(owner) = s.owners.iter().find(|o| o.controller).or(s.owners.first()) {
        parts.push(format!("owned by {} {}", owner.kind, owner.name));
    }
    if !s.finalizers.is_empty() {
        parts.push(format!("finalizers {}", s.finalizers.join(", ")));
    }
    parts.join(", ")
}

const COUNTERS: &[(&str, &str)] = &[
    ("readyReplicas", "ready"),
    ("updatedReplicas", "updated"),
    ("availableReplicas", "available"),
    ("numberReady", "ready"),
    ("active", "active"),
    ("succeeded", "succeeded"),
    ("failed", "failed"),
];

/// `labels: app web → web-v2; +track=canary; -tier`: what a relabelling changed.
fn label_changes(
    prev: &std::collections::BTreeMap<String, String>,
    cur: &std::collections::BTreeMap<String, String>,
) -> String {
    let mut parts = Vec::new();
    for (k, v) in cur {
        match prev.get(k) {
            Some(old) if old != v => parts.push(format!("{k} {old} → {v}")),
            None => parts.push(format!("+{k}={v}")),
            _ => {}
        }
    }
    parts.extend(
        prev.keys()
            .filter(|k| !cur.contains_key(*k))
            .map(|k| format!("-{k}")),
    );
    format!("labels: {}", parts.join("; "))
}

/// What one version says changed from the one before: the transitions in
/// the order the table tells them.
fn diff(
    kind: &str,
    prev: &ObjectState,
    version: &Version,
    changes: &[crate::specdiff::FieldChange],
    out: &mut Vec<Transition>,
) {
    let cur = &version.state;
    let said = spec_change(prev, cur, changes)
        .into_iter()
        .chain(status_changes(kind, prev, cur))
        .chain(condition_changes(kind, prev, cur))
        .chain(container_changes(prev, cur))
        .chain(count_changes(prev, cur, changes))
        .chain(deletion_changes(prev, cur));
    for (type_, reason, message) in said {
        out.push(Transition {
            at: version.at,
            type_,
            fields: if reason == "SpecChanged" {
                changes.to_vec()
            } else {
                Vec::new()
            },
            reason: reason.to_string(),
            message,
            writers: version.writers.clone(),
            provenance: version.provenance,
        });
    }
}

/// A transition as found: its type, reason and message.
type Said = (&'static str, &'static str, String);

/// The spec: its diff, a generation bumped with no diff kept, or an image.
fn spec_change(
    prev: &ObjectState,
    cur: &ObjectState,
    changes: &[crate::specdiff::FieldChange],
) -> Vec<Said> {
    let mut said = Vec::new();
    let mut push = |type_: &'static str, reason: &'static str, message: String| {
        said.push((type_, reason, message));
    };
    let fields = changes
        .iter()
        .map(crate::specdiff::FieldChange::text)
        .collect::<Vec<_>>()
        .join("; ");
    if cur.generation > prev.generation && !fields.is_empty() {
        push(
            "Normal",
            "SpecChanged",
            format!(
                "spec changed, generation {} → {}: {fields}",
                prev.generation, cur.generation
            ),
        );
    } else if !fields.is_empty() {
        // No generation to bump (a Node, a ConfigMap): the diff says it all.
        push("Normal", "SpecChanged", format!("changed: {fields}"));
    } else if cur.generation > prev.generation
        && !(cur.deletion.is_some() && prev.deletion.is_none() && cur.images == prev.images)
    {
        // NB: the apiserver bumps the generation when it marks an object for
        // graceful deletion (a Pod deleted by its ReplicaSet, a Deployment
        // deleted in the foreground): no spec changed then, and
        // "DeletionStarted" below tells it.
        let images = if cur.images != prev.images {
            format!(
                ": image {} → {}",
                prev.images.join(", "),
                cur.images.join(", ")
            )
        } else {
            String::new()
        };
        push(
            "Normal",
            "SpecChanged",
            format!(
                "spec changed, generation {} → {}{images}",
                prev.generation, cur.generation
            ),
        );
    } else if cur.images != prev.images && !prev.images.is_empty() {
        push(
            "Normal",
            "ImageChanged",
            format!(
                "image {} → {}",
                prev.images.join(", "),
                cur.images.join(", ")
            ),
        );
    }
    said
}

/// The status caught up, a Pod relabelled or bound, a phase.
fn status_changes(kind: &str, prev: &ObjectState, cur: &ObjectState) -> Vec<Said> {
    let mut said = Vec::new();
    let mut push = |type_: &'static str, reason: &'static str, message: String| {
        said.push((type_, reason, message));
    };
    if cur.observed_generation != prev.observed_generation
        && cur.observed_generation == Some(cur.generation)
        && cur.generation > 0
    {
        push(
            "Normal",
            "Observed",
            format!("status caught up with generation {}", cur.generation),
        );
    }
    // NB: a relabelled Pod may leave a Service or a budget (issue 47); its
    // first version (from an empty state) is not a relabelling.
    if kind == "Pod" && !prev.labels.is_empty() && cur.labels != prev.labels {
        push(
            "Normal",
            "Relabelled",
            label_changes(&prev.labels, &cur.labels),
        );
    }
    if prev.node_name.is_empty() && !cur.node_name.is_empty() {
        push(
            "Normal",
            "Bound",
            format!("bound to node {}", cur.node_name),
        );
    }
    if cur.phase != prev.phase && !cur.phase.is_empty() {
        let type_ = if cur.phase == "Failed" {
            "Warning"
        } else {
            "Normal"
        };
        let from = if prev.phase.is_empty() {
            "none"
        } else {
            &prev.phase
        };
        push(type_, "Phase", format!("phase {from} → {}", cur.phase));
    }
    said
}

/// Each condition whose status or reason changed (a Pod's good news that
/// repeats Ready and Bound left out).
fn condition_changes(kind: &str, prev: &ObjectState, cur: &ObjectState) -> Vec<Said> {
    let mut said = Vec::new();
    let mut push = |type_: &'static str, reason: &'static str, message: String| {
        said.push((type_, reason, message));
    };
    for c in &cur.conditions {
        let before = prev.conditions.iter().find(|p| p.type_ == c.type_);
        let changed = before.is_none_or(|p| p.status != c.status || p.reason != c.reason);
        if !changed {
            continue;
        }
        let from = before.map_or("none", |p| p.status.as_str());
        let why = match (c.reason.is_empty(), c.message.is_empty()) {
            (true, true) => String::new(),
            (false, true) => format!(" ({})", c.reason),
            (true, false) => format!(": {}", c.message),
            (false, false) => format!(" ({}): {}", c.reason, c.message),
        };
        let bad = condition_is_bad(&c.type_, &c.status);
        // NB: a Pod's good Initialized/ContainersReady/PodScheduled news repeats Ready and Bound.
        let redundant = kind == "Pod"
            && !bad
            && matches!(
                c.type_.as_str(),
                "Initialized" | "ContainersReady" | "PodScheduled" | "PodReadyToStartContainers"
            );
        if redundant {
            continue;
        }
        push(
            if bad { "Warning" } else { "Normal" },
            "Condition",
            format!("{} {from} → {}{why}", c.type_, c.status),
        );
    }
    said
}

/// Each container that restarted, or changed state.
fn container_changes(prev: &ObjectState, cur: &ObjectState) -> Vec<Said> {
    let mut said = Vec::new();
    let mut push = |type_: &'static str, reason: &'static str, message: String| {
        said.push((type_, reason, message));
    };
    for c in &cur.containers {
        let before = prev.containers.iter().find(|p| p.name == c.name);
        if let Some(p) = before
            && c.restarts > p.restarts
        {
            let last = if c.last_reason.is_empty() {
                String::new()
            } else {
                format!(
                    ", last terminated: {}{}",
                    c.last_reason,
                    c.last_exit_code
                        .map(|x| format!(", exit code {x}"))
                        .unwrap_or_default()
                )
            };
            push(
                "Warning",
                "Restarted",
                format!(
                    "{} restarted ({} → {}){last}",
                    c.name, p.restarts, c.restarts
                ),
            );
        }
        let changed = before.is_none_or(|p| {
            p.state != c.state || p.reason != c.reason || p.exit_code != c.exit_code
        });
        if changed && !c.state.is_empty() {
            let type_ = if container_is_bad(c) {
                "Warning"
            } else {
                "Normal"
            };
            push(
                type_,
                "Container",
                format!("{}: {}", c.name, container_text(c)),
            );
        }
    }
    said
}

/// A scale the stored diff does not tell, and the counters that moved.
fn count_changes(
    prev: &ObjectState,
    cur: &ObjectState,
    changes: &[crate::specdiff::FieldChange],
) -> Vec<Said> {
    let mut said = Vec::new();
    let mut push = |type_: &'static str, reason: &'static str, message: String| {
        said.push((type_, reason, message));
    };
    let spec = |s: &ObjectState| s.replicas.get("spec.replicas").copied();
    // NB: a scale whose stored diff says `spec.replicas a → b` is told there,
    // with its writer; a second "replicas a → b" line would repeat it.
    let in_diff = changes.iter().any(|c| c.path == "spec.replicas");
    if spec(cur) != spec(prev)
        && !in_diff
        && let (Some(a), Some(b)) = (spec(prev), spec(cur))
    {
        push("Normal", "Scaled", format!("replicas {a} → {b}"));
    }
    let counters: Vec<String> = COUNTERS
        .iter()
        .filter(|(k, _)| cur.replicas.get(*k) != prev.replicas.get(*k))
        .map(|(k, label)| format!("{label} {}", cur.replicas.get(*k).copied().unwrap_or(0)))
        .collect();
    if !counters.is_empty() {
        let want = spec(cur).or(cur.replicas.get("replicas").copied());
        let of = want.map(|w| format!(" of {w}")).unwrap_or_default();
        push("Normal", "Replicas", format!("{}{of}", counters.join(", ")));
    }
    said
}

/// A deletion requested, and finalizers removed or added.
fn deletion_changes(prev: &ObjectState, cur: &ObjectState) -> Vec<Said> {
    let mut said = Vec::new();
    let mut push = |type_: &'static str, reason: &'static str, message: String| {
        said.push((type_, reason, message));
    };
    if prev.deletion.is_none() && cur.deletion.is_some() {
        let waiting = if cur.finalizers.is_empty() {
            String::new()
        } else {
            format!("; waiting for finalizers {}", cur.finalizers.join(", "))
        };
        push(
            "Normal",
            "DeletionStarted",
            format!("deletion requested{waiting}"),
        );
    }
    for f in &prev.finalizers {
        if !cur.finalizers.contains(f) {
            push(
                "Normal",
                "FinalizerRemoved",
                format!("finalizer {f} removed"),
            );
        }
    }
    for f in &cur.finalizers {
        if !prev.finalizers.contains(f) {
            push("Normal", "FinalizerAdded", format!("finalizer {f} added"));
        }
    }
    said
}

/// How a story says where it first has an object: "recorded" only of what
/// the recorder saw; an imported audit log's first write of it is where the
/// file first has it.
pub(super) fn first_seen_by(provenance: Provenance) -> &'static str {
    match provenance {
        Provenance::AuditLog => "first seen in an imported audit log",
        Provenance::Unknown => "first seen in the recording",
        _ => "first recorded",
    }
}

/// The transitions of one object over its versions (oldest first).
pub fn of(object: &ObjectRef, created: Option<i64>, versions: &[Version]) -> Vec<Transition> {
    let mut out = Vec::new();
    let Some(first) = versions.first() else {
        return out;
    };
    let kind = object.kind.as_str();
    let created_at = created.filter(|c| *c <= first.at).unwrap_or(first.at);
    // NB: a first version not seen as a change: listed, or an import's first
    // write of an object made long before (a deletion, a patch): the state it
    // shows was already so, not changed then.
    let made_before = created.is_some_and(|c| c < first.at - 2_000);
    let first_sight = first.listed
        || (made_before
            && !matches!(
                first.provenance,
                Provenance::Recorded | Provenance::RecordedWriterFromAudit
            ));
    let (reason, message) = if first_sight && made_before {
        (
            "Created",
            format!(
                "created ({} later, at {})",
                first_seen_by(first.provenance),
                crate::units::rfc3339(first.at)
            ),
        )
    } else {
        ("Created", "created".to_string())
    };
    let details = describe(kind, &first.state);
    out.push(Transition {
        at: created_at,
        type_: "Normal",
        reason: reason.to_string(),
        message: if details.is_empty() {
            message
        } else {
            format!("{message}: {details}")
        },
        writers: first.writers.clone(),
        fields: Vec::new(),
        provenance: first.provenance,
    });
    // The first version's own condition and container states, as changes from nothing.
    let empty = ObjectState {
        generation: first.state.generation,
        observed_generation: first.state.observed_generation,
        images: first.state.images.clone(),
        replicas: first.state.replicas.clone(),
        finalizers: first.state.finalizers.clone(),
        node_name: first.state.node_name.clone(),
        ..ObjectState::default()
    };
    let mut initial = Vec::new();
    diff(kind, &empty, first, &[], &mut initial);
    if first_sight && !initial.is_empty() {
        // NB: found by a list (the recorder started later, or relisted): this is
        // the state it was in, not a change seen happening. One line says so.
        out.push(Transition {
            at: first.at,
            type_: if initial.iter().any(|t| t.type_ == "Warning") {
                "Warning"
            } else {
                "Normal"
            },
            reason: "FirstRecorded".to_string(),
            message: format!(
                "state when {}: {}",
                first_seen_by(first.provenance),
                initial
                    .iter()
                    .map(|t| t.message.as_str())
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
            writers: first.writers.clone(),
            fields: Vec::new(),
            provenance: first.provenance,
        });
    } else {
        out.extend(initial);
    }
    for pair in versions.windows(2) {
        diff(kind, &pair[0].state, &pair[1], &pair[1].diff, &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Condition;

    fn version(at: i64, f: impl FnOnce(&mut ObjectState)) -> Version {
        let mut state = ObjectState::default();
        f(&mut state);
        Version {
            diff: Vec::new(),
            provenance: Default::default(),
            at,
            state,
            writers: vec!["kube-controller-manager".into()],
            listed: false,
        }
    }

    fn deployment() -> ObjectRef {
        ObjectRef {
            kind: "Deployment".into(),
            name: "web".into(),
            ..ObjectRef::default()
        }
    }

    /// Issue 43: what an imported audit log first shows of an object is not
    /// told as recorded, on its creation line nor on the state it was in.
    #[test]
    fn an_audit_logs_first_sight_is_not_called_recorded() {
        let mut first = version(5_000, |s| {
            s.conditions = vec![Condition {
                type_: "Available".into(),
                status: "False".into(),
                reason: "MinimumReplicasUnavailable".into(),
                ..Condition::default()
            }];
        });
        first.provenance = Provenance::AuditLog;
        let t = of(&deployment(), Some(1_000), &[first]);
        let said: Vec<String> = t
            .iter()
            .map(|t| format!("{} {}", t.reason, t.message))
            .collect();
        assert!(
            said[0].starts_with("Created created (first seen in an imported audit log later")
                && said[1]
                    .starts_with("FirstRecorded state when first seen in an imported audit log: "),
            "{said:?}"
        );
        assert!(
            !said
                .iter()
                .any(|l| l.contains("recorded:") || l.contains("first recorded"))
        );
        assert!(t.iter().all(|t| t.provenance == Provenance::AuditLog));
    }

    #[test]
    fn a_rollout_reads_as_spec_change_then_status_catching_up() {
        let base = |s: &mut ObjectState, g: i64, og: i64, image: &str| {
            s.generation = g;
            s.observed_generation = Some(og);
            s.images = vec![image.into()];
            s.replicas.insert("spec.replicas".into(), 2);
        };
        let versions = vec![
            version(1_000, |s| base(s, 1, 1, "web:1")),
            version(2_000, |s| base(s, 2, 1, "web:2")),
            version(3_000, |s| {
                base(s, 2, 2, "web:2");
                s.replicas.insert("updatedReplicas".into(), 1);
            }),
        ];
        let t = of(&deployment(), Some(500), &versions);
        let reasons: Vec<&str> = t.iter().map(|t| t.reason.as_str()).collect();
        assert_eq!(
            reasons,
            vec!["Created", "SpecChanged", "Observed", "Replicas"]
        );
        assert_eq!(t[0].at, 500);
        assert_eq!(
            t[1].message,
            "spec changed, generation 1 → 2: image web:1 → web:2"
        );
        assert_eq!(t[3].message, "updated 1 of 2");
    }

    /// A scale recorded with its diff printed twice in the table: "replicas
    /// 2 → 0" (Scaled) and "spec changed, generation 2 → 3: spec.replicas 2 → 0".
    #[test]
    fn a_scale_with_its_diff_is_one_spec_change_and_one_without_keeps_its_scaled_line() {
        let scaled = |g: i64, n: i64| {
            move |s: &mut ObjectState| {
                s.generation = g;
                s.replicas.insert("spec.replicas".into(), n);
            }
        };
        let mut with_diff = vec![version(1_000, scaled(2, 2)), version(2_000, scaled(3, 0))];
        with_diff[1].diff = vec![crate::specdiff::FieldChange {
            path: "spec.replicas".into(),
            old: Some("2".into()),
            new: Some("0".into()),
        }];
        let t = of(&deployment(), Some(500), &with_diff);
        let reasons: Vec<&str> = t.iter().map(|t| t.reason.as_str()).collect();
        assert_eq!(reasons, vec!["Created", "SpecChanged"]);
        assert_eq!(
            t[1].message,
            "spec changed, generation 2 → 3: spec.replicas 2 → 0"
        );
        let without = vec![version(1_000, scaled(2, 2)), version(2_000, scaled(3, 0))];
        let t = of(&deployment(), Some(500), &without);
        let reasons: Vec<&str> = t.iter().map(|t| t.reason.as_str()).collect();
        assert_eq!(reasons, vec!["Created", "SpecChanged", "Scaled"]);
    }

    #[test]
    fn a_pod_that_never_gets_ready_and_restarts() {
        let pod = ObjectRef {
            kind: "Pod".into(),
            name: "web-1".into(),
            ..ObjectRef::default()
        };
        let waiting = |s: &mut ObjectState, reason: &str, restarts: i64| {
            s.phase = "Pending".into();
            s.node_name = "n1".into();
            s.containers = vec![ContainerState {
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
            s.conditions = vec![Condition {
                type_: "Ready".into(),
                status: "False".into(),
                reason: "ContainersNotReady".into(),
                ..Condition::default()
            }];
        };
        let versions = vec![
            version(1_000, |s| s.phase = "Pending".into()),
            version(2_000, |s| waiting(s, "ImagePullBackOff", 0)),
            version(3_000, |s| waiting(s, "CrashLoopBackOff", 1)),
        ];
        let t = of(&pod, None, &versions);
        let lines: Vec<String> = t
            .iter()
            .map(|t| format!("{} {} {}", t.type_, t.reason, t.message))
            .collect();
        assert!(
            lines.contains(&"Normal Bound bound to node n1".to_string()),
            "{lines:#?}"
        );
        assert!(
            lines
                .contains(&"Warning Condition Ready none → False (ContainersNotReady)".to_string()),
            "{lines:#?}"
        );
        assert!(
            lines.contains(&"Warning Container web: waiting (ImagePullBackOff)".to_string()),
            "{lines:#?}"
        );
        assert!(
            lines.contains(
                &"Warning Restarted web restarted (0 → 1), last terminated: Error, exit code 1"
                    .to_string()
            ),
            "{lines:#?}"
        );
    }

    /// Regression: a Pod deleted by its ReplicaSet read "spec changed,
    /// generation 1 → 2": the apiserver bumps the generation when it marks
    /// an object for graceful deletion; no spec changed.
    #[test]
    fn a_graceful_deletion_is_not_a_spec_change() {
        let versions = vec![
            version(1_000, |s| s.generation = 1),
            version(2_000, |s| {
                s.generation = 2;
                s.deletion = Some(2_000);
            }),
        ];
        let t = of(&deployment(), Some(1_000), &versions);
        let reasons: Vec<&str> = t.iter().map(|t| t.reason.as_str()).collect();
        assert_eq!(reasons, vec!["Created", "DeletionStarted"]);
    }

    #[test]
    fn deletion_and_finalizers() {
        let versions = vec![
            version(1_000, |s| s.finalizers = vec!["example.com/cleanup".into()]),
            version(2_000, |s| {
                s.finalizers = vec!["example.com/cleanup".into()];
                s.deletion = Some(2_000);
            }),
            version(3_000, |s| s.deletion = Some(2_000)),
        ];
        let t = of(&deployment(), Some(1_000), &versions);
        let reasons: Vec<&str> = t.iter().map(|t| t.reason.as_str()).collect();
        assert_eq!(
            reasons,
            vec!["Created", "DeletionStarted", "FinalizerRemoved"]
        );
        assert_eq!(
            t[1].message,
            "deletion requested; waiting for finalizers example.com/cleanup"
        );
    }
}
