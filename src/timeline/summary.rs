//! The story on the first screen: a few lines above the entries that say
//! what the object is, what changed its spec and who, how the rollout ended,
//! which Pods never got ready (and why), the recorder's blind spots, and what
//! `check` reports about these objects at the end of the window. Pure: the
//! findings come in as plain lines, computed by the caller.
//!
//! A spec change is told once: a scale whose diff already says
//! `spec.replicas` has no second line of its own, and a run of changes that
//! set the same fields back and forth between two values (two field
//! managers fighting) folds into one line that names the fields, both
//! values and every writer, so the fight does not push the rest off the screen.

use serde::Serialize;

use super::fold::FLIP_FOLD;
use super::{EntryKind, Relation, Subject, Timeline};
use crate::model::ObjectState;
use crate::specdiff::FieldChange;
use crate::units::human_duration;

/// Pod lines shown before "and N more".
const MAX_POD_LINES: usize = 5;

/// One spec change of the target, or a run of them flipping the same fields.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SpecChange {
    #[serde(skip)]
    pub at_ms: i64,
    pub time: String,
    /// For a folded run: the last change's time (RFC 3339).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub until: Option<String>,
    #[serde(skip)]
    pub until_ms: Option<i64>,
    /// How many changes the line stands for (absent: one).
    #[serde(skip_serializing_if = "is_one")]
    pub count: usize,
    pub change: String,
    pub writers: Vec<String>,
    /// The fields the version's stored diff says changed (empty without one).
    #[serde(skip)]
    pub fields: Vec<FieldChange>,
}

fn is_one(n: &usize) -> bool {
    *n == 1
}

fn flipped(c: &SpecChange) -> Option<Vec<(&str, &str, &str)>> {
    crate::specdiff::flip(&c.fields)
}

/// One line for a run of changes flipping the same fields: the fields with
/// both values, how many times, and every writer (the busiest first).
fn fold_run(run: &[SpecChange]) -> SpecChange {
    let first = &run[0];
    let last = &run[run.len() - 1];
    let fields = crate::specdiff::flip_text(&flipped(first).unwrap_or_default());
    let writers = super::busiest_first(run.iter().flat_map(|c| &c.writers));
    SpecChange {
        at_ms: first.at_ms,
        time: first.time.clone(),
        until: Some(last.time.clone()),
        until_ms: Some(last.at_ms),
        count: run.len(),
        change: format!("{fields}, back and forth {} times", run.len()),
        writers,
        fields: first.fields.clone(),
    }
}

/// Folds each run of at least [`FLIP_FOLD`] changes flipping the same fields
/// (the table's rule, `fold::FLIP_FOLD`).
fn fold_flips(changes: Vec<SpecChange>) -> Vec<SpecChange> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < changes.len() {
        let mut j = i + 1;
        if let Some(first) = flipped(&changes[i]) {
            while j < changes.len()
                && flipped(&changes[j]).is_some_and(|f| crate::specdiff::same_flip(&first, &f))
            {
                j += 1;
            }
        }
        if j - i >= FLIP_FOLD {
            out.push(fold_run(&changes[i..j]));
        } else {
            out.extend_from_slice(&changes[i..j]);
        }
        i = j;
    }
    out
}

/// Pods that went wrong the same way, by controller.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PodTrouble {
    /// `never-ready`, `restarted` or `evicted`.
    pub problem: String,
    pub reason: String,
    /// `ReplicaSet/web-5c4f`, or empty for a Pod without a controller.
    pub owner: String,
    pub pods: Vec<String>,
}

/// A `check` finding about one of the timeline's objects.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckLine {
    pub code: String,
    pub severity: String,
    pub object: String,
    pub summary: String,
    /// A progress finding's cause (its `details.cause`): the summary's `Why:` line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
}

/// The summary block (`summary` in JSON).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// What the object is and when it lived.
    pub subject: String,
    /// How many objects have had this name in the recording.
    pub incarnations: usize,
    pub changes: Vec<SpecChange>,
    /// Changes of what the story uses or is selected by (a ConfigMap its
    /// template reads, a Service whose selector matched its Pods), each with
    /// how long before the story's next change or trouble it came: causes
    /// that travel along no owner reference.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub related: Vec<String>,
    /// For a Deployment: the newest ReplicaSet's outcome.
    pub rollout: Option<String>,
    /// What its own spec holds still on purpose at the window's end: a
    /// suspend, a pause, zero replicas; with when and by whom when recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    pub pods: Vec<PodTrouble>,
    /// The recorder's gaps inside the window.
    pub gaps: Vec<String>,
    /// Why the object (or what it belongs to) does not reach what it asks
    /// for at the window's end: the progress finding's cause.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// What `check` reports about these objects at the end of the window.
    pub check: Vec<CheckLine>,
}

fn condition<'a>(s: &'a ObjectState, t: &str) -> Option<&'a crate::model::Condition> {
    s.conditions.iter().find(|c| c.type_ == t)
}

fn short(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.format("%Y-%m-%d %H:%M:%S").to_string())
        .unwrap_or_default()
}

/// Why a Pod is not ready, from its last state: a waiting or terminated
/// container's reason, else the scheduler's, else its phase.
fn not_ready_reason(s: &ObjectState) -> String {
    if let Some(c) = s
        .containers
        .iter()
        .find(|c| c.state == "waiting" && !c.reason.is_empty())
    {
        return format!("{}: waiting ({})", c.name, c.reason);
    }
    if let Some(c) = s
        .containers
        .iter()
        .find(|c| c.state == "terminated" && !c.reason.is_empty())
    {
        return format!("{}: terminated ({})", c.name, c.reason);
    }
    if let Some(c) = condition(s, "PodScheduled").filter(|c| c.status == "False") {
        return if c.message.is_empty() {
            c.reason.clone()
        } else {
            format!("{}: {}", c.reason, c.message)
        };
    }
    if s.node_name.is_empty() {
        return "not scheduled".into();
    }
    if s.phase == "Running"
        && let Some(text) = crate::checks::progress::unready_text(s)
    {
        return text;
    }
    format!(
        "phase {}",
        if s.phase.is_empty() {
            "unknown"
        } else {
            &s.phase
        }
    )
}

/// The ReplicaSet of the Deployment's template at the window's end, and when
/// it became the one rolling out. A rollback makes an older ReplicaSet
/// current again, so the newest made is not it: the one the Deployment's
/// `Progressing` condition names, else the highest revision a reconstruction
/// read (unless a ReplicaSet was made after it), else the newest made. It
/// rolls out since its revision's date (a rollback's, not the reused
/// ReplicaSet's creation), else since it was last scaled up from 0.
fn current_replicaset<'a>(
    subjects: &'a [Subject],
    target: &Subject,
    t: &Timeline,
) -> Option<(&'a Subject, i64)> {
    // NB: the walk finds every ReplicaSet ever recorded; with `--until` a later
    // rollout's is among them, and it is not this window's story.
    let sets: Vec<&Subject> = subjects
        .iter()
        .filter(|s| s.relation == Some(Relation::Owned) && s.object.object.kind == "ReplicaSet")
        .filter(|s| {
            s.object
                .created
                .or(s.object.first_seen)
                .is_some_and(|at| at <= t.until_ms)
        })
        .collect();
    let made = |s: &Subject| s.object.created.or(s.object.first_seen);
    let named = |name: &str| sets.iter().copied().find(|s| s.object.object.name == name);
    // (revision, ReplicaSet, its date)
    let revisions: Vec<(i64, &str, i64)> = t
        .entries
        .iter()
        .filter(|e| e.object.uid == target.object.object.uid && e.at_ms <= t.until_ms)
        .filter_map(|e| super::reconstruct::revision_of(e).map(|(n, name)| (n, name, e.at_ms)))
        .collect();
    let progressing = target
        .versions
        .iter()
        .rev()
        .find(|v| v.at <= t.until_ms)
        .and_then(|v| condition(&v.state, "Progressing"))
        .and_then(|c| c.message.strip_prefix("ReplicaSet \""))
        .and_then(|m| m.split_once('"'))
        .and_then(|(name, _)| named(name));
    // NB: a recording completed from the live cluster holds the revisions
    // before it began: a ReplicaSet recorded later is newer than them.
    let highest = revisions
        .iter()
        .max_by_key(|(n, ..)| *n)
        .filter(|(_, _, at)| !sets.iter().any(|s| made(s).is_some_and(|m| m > *at)))
        .and_then(|(_, name, _)| named(name));
    let current = progressing.or(highest).or_else(|| {
        sets.iter()
            .copied()
            .max_by_key(|s| (made(s), s.object.object.name.clone()))
    })?;
    let created = made(current)?;
    let dated = revisions
        .iter()
        .filter(|(_, name, _)| *name == current.object.object.name)
        .max_by_key(|(n, ..)| *n)
        .map(|(_, _, at)| *at);
    // A recorded rollback: the last time it was scaled up from 0.
    let count = |s: &ObjectState| s.replicas.get("spec.replicas").copied();
    let raised = current
        .versions
        .windows(2)
        .filter(|w| w[1].at <= t.until_ms)
        .filter(|w| count(&w[0].state) == Some(0) && count(&w[1].state).is_some_and(|n| n > 0))
        .map(|w| w[1].at)
        .max();
    Some((current, dated.or(raised).unwrap_or(created).max(created)))
}

fn rollout(subjects: &[Subject], t: &Timeline) -> Option<String> {
    let target = subjects
        .iter()
        .find(|s| s.relation == Some(Relation::Target))?;
    if target.object.object.kind != "Deployment" {
        return None;
    }
    let (newest, start) = current_replicaset(subjects, target, t)?;
    let images = newest
        .versions
        .iter()
        .rev()
        .find(|v| v.at <= t.until_ms)
        .map(|v| v.state.images.join(", "))
        .unwrap_or_default();
    let name = format!("ReplicaSet {} ({images})", newest.object.object.name);
    let count = |s: &ObjectState, k: &str| s.replicas.get(k).copied().unwrap_or(0);
    let versions: Vec<&crate::model::Version> = newest
        .versions
        .iter()
        .filter(|v| v.at <= t.until_ms)
        .collect();
    // NB: judged against what the Deployment asks for at the window's end: a
    // ReplicaSet once ready at 2/2 and then scaled to 5 is not "ready 2/2"
    // (regression: a quota-blocked scale-up read as a finished rollout).
    let want = target
        .versions
        .iter()
        .rev()
        .find(|v| v.at <= t.until_ms)
        .and_then(|v| v.state.replicas.get("spec.replicas").copied())
        .or_else(|| versions.last().map(|v| count(&v.state, "spec.replicas")))
        .unwrap_or(0);
    let ready = versions
        .last()
        .map_or(0, |v| count(&v.state, "readyReplicas"));
    let mut line = if want > 0 && ready >= want {
        let at = versions
            .iter()
            .filter(|v| v.at >= start)
            .find(|v| count(&v.state, "readyReplicas") >= want)
            .map_or(start, |v| v.at);
        format!(
            "{name} ready {ready}/{want} after {}",
            human_duration(at - start)
        )
    } else {
        let end = newest.object.deleted.unwrap_or(t.until_ms).min(t.until_ms);
        // NB: a Deployment scaled to 0 has nothing to make ready (regression:
        // "NOT ready: 0 of 0 ready after 1m" of a Deployment scaled to 0 on
        // purpose; `Stopped:` says by whom and when).
        let mut line = if want == 0 {
            format!("{name} asked for no Pod (scaled to 0)")
        } else {
            format!(
                "{name} NOT ready: {ready} of {want} ready after {}",
                human_duration(end - start)
            )
        };
        if let Some(v) = versions.iter().rev().find(|v| {
            let w = count(&v.state, "spec.replicas");
            w > 0 && count(&v.state, "readyReplicas") >= w
        }) {
            line.push_str(&format!(
                "; last fully ready {} ({}/{})",
                short(v.at),
                count(&v.state, "readyReplicas"),
                count(&v.state, "spec.replicas")
            ));
        }
        line
    };
    if let Some(c) = target
        .versions
        .iter()
        .rev()
        .find(|v| v.at <= t.until_ms)
        .and_then(|v| condition(&v.state, "Progressing"))
        .filter(|c| c.status == "False")
    {
        line.push_str(&format!("; Progressing=False ({})", c.reason));
    }
    Some(line)
}

fn pods(subjects: &[Subject], t: &Timeline) -> Vec<PodTrouble> {
    let mut out: Vec<PodTrouble> = Vec::new();
    let mut add = |problem: &str, reason: String, owner: String, pod: &str| match out
        .iter_mut()
        .find(|p| p.problem == problem && p.reason == reason && p.owner == owner)
    {
        Some(p) => p.pods.push(pod.to_string()),
        None => out.push(PodTrouble {
            problem: problem.into(),
            reason,
            owner,
            pods: vec![pod.to_string()],
        }),
    };
    for s in subjects.iter().filter(|s| {
        s.object.object.kind == "Pod"
            && matches!(s.relation, Some(Relation::Target | Relation::Owned))
    }) {
        let versions: Vec<_> = s.versions.iter().filter(|v| v.at <= t.until_ms).collect();
        let Some(last) = versions.last() else {
            continue;
        };
        let name = &s.object.object.name;
        let owner = versions
            .iter()
            .rev()
            .flat_map(|v| v.state.owners.iter())
            .find(|o| o.controller)
            .map(|o| format!("{}/{}", o.kind, o.name))
            .unwrap_or_default();
        let evicted = t
            .entries
            .iter()
            .any(|e| e.object.name == *name && e.object.kind == "Pod" && e.reason == "Evicted");
        if evicted || (last.state.phase == "Failed" && !last.state.containers.is_empty()) {
            let why = t
                .entries
                .iter()
                .find(|e| e.object.name == *name && e.reason == "Evicted")
                .map(|e| e.message.clone())
                .unwrap_or_else(|| "phase Failed".into());
            add(
                if evicted { "evicted" } else { "failed" },
                why,
                owner.clone(),
                name,
            );
        }
        let ever_ready = versions
            .iter()
            .any(|v| condition(&v.state, "Ready").is_some_and(|c| c.status == "True"));
        if !ever_ready && last.state.phase != "Succeeded" {
            add(
                "never-ready",
                not_ready_reason(&last.state),
                owner.clone(),
                name,
            );
        }
        if let Some(c) = last
            .state
            .containers
            .iter()
            .filter(|c| c.restarts > 0)
            .max_by_key(|c| c.restarts)
        {
            let reason = if c.last_reason.is_empty() {
                format!("{} restarted", c.name)
            } else {
                format!("{} restarted (last: {})", c.name, c.last_reason)
            };
            add("restarted", reason, owner, name);
        }
    }
    out
}

/// `created T`, and where the recording first has it when that is later.
fn created_text(s: &Subject) -> String {
    let o = &s.object;
    // NB: the time and the words from one fact: a version not the recorder's
    // tells both (`first_seen` is whichever source stored the object first).
    let (first_seen, by) = match s.versions.first() {
        Some(v) if !v.provenance.goes_without_saying() => (Some(v.at), v.provenance),
        _ => (o.first_seen, crate::model::Provenance::Recorded),
    };
    match (o.created, first_seen) {
        (Some(c), Some(f)) if f > c + 2_000 => format!(
            "created {} ({} {})",
            short(c),
            super::transitions::first_seen_by(by),
            short(f)
        ),
        (c, f) => format!(
            "created {}",
            c.or(f).map(short).unwrap_or_else(|| "?".into())
        ),
    }
}

/// Builds the summary of an assembled timeline.
pub fn summarize(
    subjects: &[Subject],
    t: &Timeline,
    incarnations: usize,
    check: Vec<CheckLine>,
) -> Summary {
    let subject = match subjects
        .iter()
        .find(|s| s.relation == Some(Relation::Target))
    {
        Some(s) => {
            let o = &s.object;
            let r = &o.object;
            let ns = if r.namespace.is_empty() {
                String::new()
            } else {
                format!("{}/", r.namespace)
            };
            let end = match (o.deleted, o.deleted_after) {
                (Some(d), Some(a)) => format!("deleted between {} and {}", short(a), short(d)),
                (Some(d), None) => format!("deleted {}", short(d)),
                _ => format!("not deleted by {}", short(t.until_ms)),
            };
            let created = created_text(s);
            // NB: known from Events only, what it owns was tied to it by the
            // names controllers give (`store::timeline`): an inference, said.
            let tied: Vec<String> = subjects
                .iter()
                .filter(|t| {
                    o.first_seen.is_none()
                        && t.relation == Some(Relation::Owned)
                        && t.object.first_seen.is_none()
                        && t.versions.is_empty()
                })
                .map(|t| format!("{} {}", t.object.object.kind, t.object.object.name))
                .collect();
            let tied = match tied.len() {
                0 => String::new(),
                n => format!(
                    "; known from Events only, with {} tied to it by name (no owner reference was seen)",
                    if n <= 3 {
                        tied.join(", ")
                    } else {
                        format!("{}, … ({n} in all)", tied[..3].join(", "))
                    }
                ),
            };
            format!("{} {ns}{}: {created}, {end}{tied}", r.kind, r.name)
        }
        None => String::new(),
    };
    let target = subjects
        .iter()
        .find(|s| s.relation == Some(Relation::Target));
    let target_uid = target
        .map(|s| s.object.object.uid.clone())
        .unwrap_or_default();
    let diff_at = |at: i64| -> Vec<FieldChange> {
        target
            .and_then(|s| s.versions.iter().find(|v| v.at == at))
            .map(|v| v.diff.clone())
            .unwrap_or_default()
    };
    let changes = t
        .entries
        .iter()
        .filter(|e| {
            e.entry == EntryKind::Transition
                && e.object.uid == target_uid
                // A reconstruction's revisions are the spec's story too.
                && matches!(
                    e.reason.as_str(),
                    "SpecChanged" | "ImageChanged" | "Scaled" | "Revision" | "TemplateChanged"
                )
        })
        // NB: a scale recorded with its spec diff has no Scaled twin (see
        // `transitions`): its SpecChanged says `spec.replicas 2 → 0 (by bob)`.
        .map(|e| SpecChange {
            at_ms: e.at_ms,
            time: e.time.clone(),
            until: None,
            until_ms: None,
            count: 1,
            change: e.message.clone(),
            writers: e.writers.clone(),
            fields: if e.reason == "SpecChanged" {
                diff_at(e.at_ms)
            } else {
                Vec::new()
            },
        })
        .collect();
    let changes = fold_flips(changes);
    let gaps = t
        .entries
        .iter()
        .filter(|e| e.entry == EntryKind::Gap)
        .map(|e| {
            let until = e.until_ms.unwrap_or(e.at_ms);
            format!(
                "{} to {} ({}): {}",
                short(e.at_ms),
                short(until),
                human_duration(until - e.at_ms),
                e.reason
            )
        })
        .collect();
    // NB: `Why:` answers for the story's own line (the target, its owners,
    // what it owns), not for a neighbour shown beside it (regression: a
    // healthy Deployment's `Why:` was its Pods' Node's recurring Warning).
    // A neighbour's finding stays a `Check:` line; a control-plane component
    // that is gone (C001) stops everyone's story.
    let own: std::collections::HashSet<String> = subjects
        .iter()
        .filter(|s| {
            matches!(
                s.relation,
                Some(Relation::Target | Relation::Owner | Relation::Owned)
            )
        })
        .map(|s| format!("{}/{}", s.object.object.kind, s.object.object.name))
        .collect();
    let why = check
        .iter()
        .filter(|c| own.contains(&c.object) || c.code == "C001")
        .find_map(|c| c.cause.clone());
    Summary {
        subject,
        incarnations,
        related: related(subjects, t, &target_uid),
        changes,
        rollout: rollout(subjects, t),
        stopped: target.and_then(|s| stopped(s, t)),
        why,
        pods: pods(subjects, t),
        gaps,
        check,
    }
}

/// What the target's own spec holds still on purpose (`spec.suspend`,
/// `spec.paused`, zero replicas), and the recorded change that did it, if
/// the window holds one: "why does nothing run" answered by the object itself.
fn stopped(subject: &Subject, t: &Timeline) -> Option<String> {
    let o = &subject.object;
    // The state at the window's end (a version after `--until` is not yet).
    let s = subject
        .versions
        .iter()
        .rev()
        .find(|v| v.at <= t.until_ms)
        .map_or(&o.state, |v| &v.state);
    let kind = o.object.kind.as_str();
    let (field, what) = match s.halted.as_str() {
        "spec.suspend" => (
            "spec.suspend",
            match kind {
                "CronJob" => {
                    let last = s.last_schedule.map_or_else(
                        || "never scheduled".to_string(),
                        |at| format!("last scheduled {}", short(at)),
                    );
                    format!("suspended (spec.suspend: true): it starts no Job until resumed; {last}")
                }
                "Job" => "suspended (spec.suspend: true): it creates no Pod until resumed".to_string(),
                _ => "suspended (spec.suspend: true): its controller leaves it as it is until resumed"
                    .to_string(),
            },
        ),
        "spec.paused" => (
            "spec.paused",
            match kind {
                "Deployment" => {
                    "paused (spec.paused: true): no rollout until `kubectl rollout resume`".to_string()
                }
                _ => "paused (spec.paused: true): its controller leaves it as it is until resumed"
                    .to_string(),
            },
        ),
        _ if matches!(kind, "Deployment" | "StatefulSet" | "ReplicaSet")
            && s.replicas.get("spec.replicas") == Some(&0) =>
        {
            ("spec.replicas", "scaled to 0 (spec.replicas: 0)".to_string())
        }
        _ => return None,
    };
    // The recorded change that set it: the last spec change of the target naming the field.
    let by = t
        .entries
        .iter()
        .rev()
        .find(|e| {
            e.object.uid == o.object.uid
                && e.reason == "SpecChanged"
                && e.fields.iter().any(|f| f.path == field)
        })
        .map(|e| {
            let who = if e.writers.is_empty() {
                String::new()
            } else {
                format!(" by {}", e.writers.join(", "))
            };
            format!(", since {}{who}", short(e.at_ms))
        })
        .or_else(|| {
            // NB: with no recording, a scale through the scale subresource is
            // told by its manager and the time the cluster still holds
            // (`reconstruct::scale_write`): "by cost-bot via the scale subresource, …",
            // or says that it is not kept.
            let scaled = format!("scaled to {}", s.replicas.get(field)?);
            t.entries
                .iter()
                .rev()
                .filter(|e| {
                    e.object.uid == o.object.uid
                        && matches!(e.reason.as_str(), "LastScale" | "ScaleUndated")
                })
                .find_map(|e| e.message.strip_prefix(scaled.as_str()))
                .filter(|_| field == "spec.replicas")
                .map(|how| {
                    how.strip_suffix("; earlier scales are not kept")
                        .unwrap_or(how)
                        .to_string()
                })
        })
        .unwrap_or_default();
    Some(format!("{what}{by}"))
}

/// Related lines shown before "and N more".
const MAX_RELATED_LINES: usize = 3;

/// What changed on the objects the story uses or is selected by, inside the
/// window: `2026-12-03 10:02:11 ConfigMap/app-settings changed:
/// data.LOG_LEVEL changed (by kubectl-edit), 40s before the target's change
/// at 10:02:51`. The story's next event is the target's next spec change, else
/// its next Warning; said only when it follows within 15 minutes.
fn related(subjects: &[Subject], t: &Timeline, target_uid: &str) -> Vec<String> {
    const NEAR_MS: i64 = 15 * 60_000;
    let context: std::collections::HashSet<&str> = subjects
        .iter()
        .filter(|s| matches!(s.relation, Some(Relation::Uses | Relation::Selects)))
        .map(|s| s.object.object.uid.as_str())
        .collect();
    // NB: the write that created an object (the same second: both are whole
    // seconds) is its creation, not news.
    let created: std::collections::HashMap<&str, i64> = subjects
        .iter()
        .filter_map(|s| Some((s.object.object.uid.as_str(), s.object.created?)))
        .collect();
    if context.is_empty() {
        return Vec::new();
    }
    let changes: Vec<&super::Entry> = t
        .entries
        .iter()
        .filter(|e| {
            e.entry == EntryKind::Transition
                && context.contains(e.object.uid.as_str())
                // NB: a reconstruction knows only each writer's last write.
                && matches!(e.reason.as_str(), "SpecChanged" | "Deleted" | "LastWrite")
                && !(e.reason == "LastWrite"
                    && created
                        .get(e.object.uid.as_str())
                        .is_some_and(|c| e.at_ms / 1_000 <= c / 1_000))
        })
        .collect();
    changes
        .iter()
        .map(|e| {
            // NB: a last write names its writer in its own words.
            let by = if e.writers.is_empty() || e.reason == "LastWrite" {
                String::new()
            } else {
                format!(" (by {})", e.writers.join(", "))
            };
            let what = e.message.strip_prefix("changed: ").unwrap_or(&e.message);
            let what = match what.split_once("; earlier writes are not kept") {
                Some((head, _)) => format!("{head} [last: earlier writes are not kept]"),
                None => what.to_string(),
            };
            let verb = if e.reason == "SpecChanged" {
                "changed: "
            } else {
                ""
            };
            let next_change = t.entries.iter().find(|n| {
                n.at_ms >= e.at_ms
                    && n.object.uid == target_uid
                    && matches!(
                        n.reason.as_str(),
                        "SpecChanged" | "ImageChanged" | "Scaled" | "Revision" | "TemplateChanged"
                    )
            });
            let next_warning = t.entries.iter().find(|n| {
                n.at_ms >= e.at_ms
                    && n.type_ == "Warning"
                    && !context.contains(n.object.uid.as_str())
            });
            let before = match (next_change, next_warning) {
                (Some(c), _) if c.at_ms - e.at_ms <= NEAR_MS => format!(
                    ", {} before its change at {}",
                    human_duration(c.at_ms - e.at_ms),
                    short(c.at_ms)
                ),
                (_, Some(w)) if w.at_ms - e.at_ms <= NEAR_MS => format!(
                    ", {} before {} {} {}",
                    human_duration(w.at_ms - e.at_ms),
                    w.object.kind,
                    w.object.name,
                    w.reason
                ),
                _ => String::new(),
            };
            format!(
                "{} {}/{} {verb}{what}{by}{before}",
                short(e.at_ms),
                e.object.kind,
                e.object.name
            )
        })
        .collect()
}

/// The block as plain lines, for the table and the HTML header: `(label, text)`.
pub fn lines(s: &Summary) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    let incarnations = if s.incarnations > 1 {
        format!(
            " ({} objects have had this name; see --uid)",
            s.incarnations
        )
    } else {
        String::new()
    };
    out.push(("Object", format!("{}{incarnations}", s.subject)));
    for c in &s.changes {
        let by = if c.writers.is_empty() {
            String::new()
        } else {
            format!(" (by {})", c.writers.join(", "))
        };
        let when = match c.until_ms {
            Some(until) => format!("{} to {}", short(c.at_ms), short(until)),
            None => short(c.at_ms),
        };
        out.push(("Change", format!("{when} {}{by}", c.change)));
    }
    for r in s.related.iter().take(MAX_RELATED_LINES) {
        out.push(("Related", r.clone()));
    }
    if s.related.len() > MAX_RELATED_LINES {
        out.push((
            "Related",
            format!("and {} more (-o json)", s.related.len() - MAX_RELATED_LINES),
        ));
    }
    if let Some(r) = &s.rollout {
        out.push(("Rollout", r.clone()));
    }
    if let Some(h) = &s.stopped {
        out.push(("Stopped", h.clone()));
    }
    if let Some(why) = &s.why {
        out.push(("Why", why.clone()));
    }
    for p in s.pods.iter().take(MAX_POD_LINES) {
        let who = match (p.pods.len(), p.owner.is_empty()) {
            (1, _) => format!("Pod {}", p.pods[0]),
            (n, false) => format!("{n} Pods of {}", p.owner),
            (n, true) => format!("{n} Pods"),
        };
        let what = match p.problem.as_str() {
            "never-ready" => "never ready",
            other => other,
        };
        out.push(("Pods", format!("{who} {what}: {}", p.reason)));
    }
    if s.pods.len() > MAX_POD_LINES {
        out.push((
            "Pods",
            format!(
                "and {} more kinds of trouble (-o json)",
                s.pods.len() - MAX_POD_LINES
            ),
        ));
    }
    for g in &s.gaps {
        out.push(("Gap", format!("no data {g}")));
    }
    if s.check.is_empty() {
        out.push(("Check", "nothing to report at the end of the window".into()));
    }
    for c in &s.check {
        out.push((
            "Check",
            format!("{} {} {}: {}", c.severity, c.code, c.object, c.summary),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Condition, ContainerState, ObjectRef, OwnerRef, RecordedObject, Version};

    fn subject(kind: &str, name: &str, relation: Relation, created: i64) -> Subject {
        Subject {
            object: RecordedObject {
                object: ObjectRef {
                    kind: kind.into(),
                    namespace: "shop".into(),
                    name: name.into(),
                    uid: format!("uid-{name}"),
                    ..ObjectRef::default()
                },
                created: Some(created),
                first_seen: Some(created),
                ..RecordedObject::default()
            },
            relation: Some(relation),
            depth: 0,
            versions: Vec::new(),
        }
    }

    fn version(at: i64, state: ObjectState) -> Version {
        Version {
            diff: Vec::new(),
            provenance: Default::default(),
            at,
            state,
            writers: Vec::new(),
            listed: false,
        }
    }

    fn rs_state(want: i64, ready: i64) -> ObjectState {
        let mut s = ObjectState {
            images: vec!["web:2".into()],
            ..ObjectState::default()
        };
        s.replicas.insert("spec.replicas".into(), want);
        s.replicas.insert("readyReplicas".into(), ready);
        s
    }

    fn pod(name: &str, waiting: &str, restarts: i64) -> Subject {
        let mut p = subject("Pod", name, Relation::Owned, 1_000);
        p.versions = vec![version(
            2_000,
            ObjectState {
                node_name: "n1".into(),
                owners: vec![OwnerRef {
                    kind: "ReplicaSet".into(),
                    name: "web-2".into(),
                    controller: true,
                    ..OwnerRef::default()
                }],
                conditions: vec![Condition {
                    type_: "Ready".into(),
                    status: "False".into(),
                    ..Condition::default()
                }],
                containers: vec![ContainerState {
                    name: "web".into(),
                    state: "waiting".into(),
                    reason: waiting.into(),
                    restarts,
                    last_reason: if restarts > 0 {
                        "OOMKilled".into()
                    } else {
                        String::new()
                    },
                    ..ContainerState::default()
                }],
                ..ObjectState::default()
            },
        )];
        p
    }

    fn timeline(until: i64) -> Timeline {
        crate::timeline::assemble(&[], &[], &[], &[], 0, until)
    }

    #[test]
    fn a_suspended_cronjob_and_a_deployment_scaled_to_zero_say_so() {
        let mut cron = subject("CronJob", "nightly", Relation::Target, 0);
        cron.versions = vec![version(
            0,
            ObjectState {
                halted: "spec.suspend".into(),
                ..ObjectState::default()
            },
        )];
        let s = summarize(&[cron], &timeline(60_000), 1, Vec::new());
        assert_eq!(
            s.stopped.as_deref(),
            Some("suspended (spec.suspend: true): it starts no Job until resumed; never scheduled")
        );
        let mut web = subject("Deployment", "web", Relation::Target, 0);
        let mut zero = ObjectState::default();
        zero.replicas.insert("spec.replicas".into(), 0);
        web.versions = vec![version(0, ObjectState::default()), version(30_000, zero)];
        let mut t = timeline(60_000);
        let mut scaled = crate::timeline::entry(
            30_000,
            None,
            EntryKind::Transition,
            &web.object.object,
            "Normal",
            "SpecChanged".into(),
            "spec changed".into(),
        );
        scaled.writers = vec!["bob".into()];
        scaled.fields = vec![FieldChange {
            path: "spec.replicas".into(),
            old: Some("2".into()),
            new: Some("0".into()),
        }];
        t.entries.push(scaled);
        let s = summarize(&[web.clone()], &t, 1, Vec::new());
        assert_eq!(
            s.stopped.as_deref(),
            Some("scaled to 0 (spec.replicas: 0), since 1970-01-01 00:00:30 by bob")
        );
        // Not at the window's end when --until is before the scale.
        let s = summarize(&[web], &timeline(20_000), 1, Vec::new());
        assert_eq!(s.stopped, None);
    }

    #[test]
    fn a_rollout_that_became_ready_says_how_long_it_took() {
        let mut deploy = subject("Deployment", "web", Relation::Target, 0);
        deploy.versions = vec![version(0, ObjectState::default())];
        let mut rs = subject("ReplicaSet", "web-2", Relation::Owned, 10_000);
        rs.versions = vec![
            version(10_000, rs_state(2, 0)),
            version(25_000, rs_state(2, 2)),
        ];
        let s = summarize(&[deploy, rs], &timeline(60_000), 1, Vec::new());
        assert_eq!(
            s.rollout.as_deref(),
            Some("ReplicaSet web-2 (web:2) ready 2/2 after 15s")
        );
        assert!(s.pods.is_empty());
    }

    #[test]
    fn a_rollout_after_the_window_is_not_the_windows_rollout() {
        // `--until` before web-3 was created: the window's rollout is web-2's, ready
        // after 15s, not web-3's "0 of 0 ready after 0s" (its end before its start).
        let mut deploy = subject("Deployment", "web", Relation::Target, 0);
        deploy.versions = vec![version(0, ObjectState::default())];
        let mut rs = subject("ReplicaSet", "web-2", Relation::Owned, 10_000);
        rs.versions = vec![
            version(10_000, rs_state(2, 0)),
            version(25_000, rs_state(2, 2)),
        ];
        let mut later = subject("ReplicaSet", "web-3", Relation::Owned, 120_000);
        let mut broken = rs_state(2, 0);
        broken.images = vec!["web:3".into()];
        later.versions = vec![version(120_000, broken)];
        let s = summarize(&[deploy, rs, later], &timeline(60_000), 1, Vec::new());
        assert_eq!(
            s.rollout.as_deref(),
            Some("ReplicaSet web-2 (web:2) ready 2/2 after 15s")
        );
    }

    #[test]
    fn a_rollback_rolls_out_the_replicaset_the_deployment_names_not_the_newest_made() {
        // Recorded: web-2 made at 10 s (revision 2), web-3 at 40 s (revision 3);
        // the undo scales web-2 up from 0 at 70 s, ready at 75 s.
        let mut deploy = subject("Deployment", "web", Relation::Target, 0);
        deploy.versions = vec![version(
            70_000,
            ObjectState {
                conditions: vec![Condition {
                    type_: "Progressing".into(),
                    status: "True".into(),
                    reason: "NewReplicaSetAvailable".into(),
                    message: "ReplicaSet \"web-2\" has successfully progressed.".into(),
                    ..Condition::default()
                }],
                ..ObjectState::default()
            },
        )];
        let mut reused = subject("ReplicaSet", "web-2", Relation::Owned, 10_000);
        reused.versions = vec![
            version(10_000, rs_state(1, 0)),
            version(12_000, rs_state(1, 1)),
            version(45_000, rs_state(0, 0)),
            version(70_000, rs_state(1, 0)),
            version(75_000, rs_state(1, 1)),
        ];
        let mut abandoned = subject("ReplicaSet", "web-3", Relation::Owned, 40_000);
        let mut three = rs_state(0, 0);
        three.images = vec!["web:3".into()];
        abandoned.versions = vec![version(40_000, three)];
        let s = summarize(
            &[deploy, reused, abandoned],
            &timeline(90_000),
            1,
            Vec::new(),
        );
        assert_eq!(
            s.rollout.as_deref(),
            Some("ReplicaSet web-2 (web:2) ready 1/1 after 5s")
        );
    }

    #[test]
    fn a_revision_completed_from_the_cluster_is_not_the_rollout_when_a_later_replicaset_was_recorded()
     {
        // The recording began at 30 s; revision 1 (web-1) is reconstructed
        // before it, web-2 was recorded at 50 s: the rollout is web-2's.
        let mut deploy = subject("Deployment", "web", Relation::Target, 0);
        deploy.versions = vec![version(0, ObjectState::default())];
        let mut old = subject("ReplicaSet", "web-1", Relation::Owned, 10_000);
        old.versions = vec![version(10_000, rs_state(0, 0))];
        let mut new = subject("ReplicaSet", "web-2", Relation::Owned, 50_000);
        new.versions = vec![
            version(50_000, rs_state(1, 0)),
            version(55_000, rs_state(1, 1)),
        ];
        let mut t = timeline(90_000);
        t.entries.push(crate::timeline::entry(
            10_000,
            None,
            EntryKind::Transition,
            &deploy.object.object,
            "Normal",
            "Revision".into(),
            "revision 1 (ReplicaSet web-1): web:2".into(),
        ));
        let s = summarize(&[deploy, old, new], &t, 1, Vec::new());
        assert_eq!(
            s.rollout.as_deref(),
            Some("ReplicaSet web-2 (web:2) ready 1/1 after 5s")
        );
    }

    #[test]
    fn a_rollout_still_going_counts_to_the_windows_end() {
        let mut deploy = subject("Deployment", "web", Relation::Target, 0);
        deploy.versions = vec![version(0, ObjectState::default())];
        let mut rs = subject("ReplicaSet", "web-2", Relation::Owned, 10_000);
        // A version after the window (an edited template) is not the window's.
        let mut after = rs_state(2, 0);
        after.images = vec!["web:3".into()];
        rs.versions = vec![
            version(10_000, rs_state(2, 0)),
            version(30_000, rs_state(2, 1)),
            version(900_000, after),
        ];
        let s = summarize(&[deploy, rs], &timeline(190_000), 1, Vec::new());
        assert_eq!(
            s.rollout.as_deref(),
            Some("ReplicaSet web-2 (web:2) NOT ready: 1 of 2 ready after 3m")
        );
    }

    /// Regression (played on the local cluster): the `Why:` of a healthy
    /// Deployment was the recurring Warning of the Node its Pods ran on.
    #[test]
    fn a_neighbours_finding_is_not_the_storys_why() {
        let deploy = subject("Deployment", "web", Relation::Target, 0);
        let node = subject("Node", "kwok-node-0", Relation::Node, 0);
        let line = |object: &str, cause: &str| CheckLine {
            code: "R004".into(),
            severity: "warning".into(),
            object: object.into(),
            summary: String::new(),
            cause: Some(cause.into()),
        };
        let s = summarize(
            &[deploy.clone(), node.clone()],
            &timeline(60_000),
            1,
            vec![line("Node/kwok-node-0", "NodeNotReady ×40")],
        );
        assert_eq!(s.why, None);
        // The story's own finding still is.
        let s = summarize(
            &[deploy, node],
            &timeline(60_000),
            1,
            vec![
                line("Node/kwok-node-0", "NodeNotReady ×40"),
                line("Deployment/web", "ImagePullBackOff"),
            ],
        );
        assert_eq!(s.why.as_deref(), Some("ImagePullBackOff"));
    }

    /// Regression (played on the local cluster): a Deployment scaled to 0
    /// on purpose read "NOT ready: 0 of 0 ready after 1m".
    #[test]
    fn a_deployment_scaled_to_zero_is_not_a_rollout_that_is_not_ready() {
        let mut deploy = subject("Deployment", "web", Relation::Target, 0);
        let mut three = ObjectState::default();
        three.replicas.insert("spec.replicas".into(), 3);
        let mut zero = ObjectState::default();
        zero.replicas.insert("spec.replicas".into(), 0);
        deploy.versions = vec![version(0, three), version(60_000, zero)];
        let mut rs = subject("ReplicaSet", "web-2", Relation::Owned, 0);
        rs.versions = vec![
            version(0, rs_state(3, 0)),
            version(5_000, rs_state(3, 3)),
            version(61_000, rs_state(0, 0)),
        ];
        let s = summarize(&[deploy, rs], &timeline(120_000), 1, Vec::new());
        let rollout = s.rollout.unwrap_or_default();
        assert!(
            rollout.starts_with(
                "ReplicaSet web-2 (web:2) asked for no Pod (scaled to 0); last fully ready"
            ),
            "{rollout}"
        );
        assert!(!rollout.contains("NOT ready"), "{rollout}");
    }

    #[test]
    fn pods_that_never_got_ready_fold_by_owner_with_their_reason() {
        let mut deploy = subject("Deployment", "web", Relation::Target, 0);
        deploy.versions = vec![version(
            0,
            ObjectState {
                conditions: vec![Condition {
                    type_: "Progressing".into(),
                    status: "False".into(),
                    reason: "ProgressDeadlineExceeded".into(),
                    ..Condition::default()
                }],
                ..ObjectState::default()
            },
        )];
        let mut rs = subject("ReplicaSet", "web-2", Relation::Owned, 10_000);
        rs.versions = vec![version(10_000, rs_state(2, 0))];
        let subjects = vec![
            deploy,
            rs,
            pod("web-2-a", "ImagePullBackOff", 0),
            pod("web-2-b", "ImagePullBackOff", 0),
            pod("web-2-c", "CrashLoopBackOff", 3),
        ];
        let s = summarize(&subjects, &timeline(70_000), 2, Vec::new());
        assert_eq!(
            s.rollout.as_deref(),
            Some(
                "ReplicaSet web-2 (web:2) NOT ready: 0 of 2 ready after 1m; Progressing=False (ProgressDeadlineExceeded)"
            )
        );
        let text: Vec<String> = lines(&s)
            .into_iter()
            .map(|(l, t)| format!("{l}: {t}"))
            .collect();
        assert!(
            text.contains(
                &"Pods: 2 Pods of ReplicaSet/web-2 never ready: web: waiting (ImagePullBackOff)"
                    .to_string()
            ),
            "{text:#?}"
        );
        assert!(
            text.contains(
                &"Pods: Pod web-2-c never ready: web: waiting (CrashLoopBackOff)".to_string()
            ),
            "{text:#?}"
        );
        assert!(
            text.contains(
                &"Pods: Pod web-2-c restarted: web restarted (last: OOMKilled)".to_string()
            ),
            "{text:#?}"
        );
        assert!(
            text[0].contains("2 objects have had this name"),
            "{text:#?}"
        );
        assert_eq!(
            text.last().unwrap(),
            "Check: nothing to report at the end of the window"
        );
    }

    #[test]
    fn an_unscheduled_pod_gives_the_schedulers_words() {
        let mut p = subject("Pod", "big", Relation::Target, 0);
        p.versions = vec![version(
            0,
            ObjectState {
                phase: "Pending".into(),
                conditions: vec![Condition {
                    type_: "PodScheduled".into(),
                    status: "False".into(),
                    reason: "Unschedulable".into(),
                    message:
                        "0/3 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}"
                            .into(),
                    ..Condition::default()
                }],
                ..ObjectState::default()
            },
        )];
        let s = summarize(&[p], &timeline(1_000), 1, Vec::new());
        assert_eq!(s.pods[0].problem, "never-ready");
        assert!(
            s.pods[0].reason.contains("untolerated taint"),
            "{:?}",
            s.pods
        );
    }

    fn change(path: &str, old: &str, new: &str) -> FieldChange {
        FieldChange {
            path: path.into(),
            old: Some(old.into()),
            new: Some(new.into()),
        }
    }

    /// The target Deployment's versions: `(at, generation, replicas, diff, writer)`.
    fn deployment(versions: &[(i64, i64, i64, Vec<FieldChange>, &str)]) -> Subject {
        let mut deploy = subject("Deployment", "web", Relation::Target, 0);
        deploy.versions = versions
            .iter()
            .map(|(at, generation, replicas, diff, writer)| {
                let mut state = ObjectState {
                    generation: *generation,
                    ..ObjectState::default()
                };
                state.replicas.insert("spec.replicas".into(), *replicas);
                Version {
                    diff: diff.clone(),
                    writers: vec![writer.to_string()],
                    ..version(*at, state)
                }
            })
            .collect();
        deploy
    }

    fn change_lines(subjects: &[Subject], until: i64) -> Vec<String> {
        let t = crate::timeline::assemble(subjects, &[], &[], &[], 0, until);
        lines(&summarize(subjects, &t, 1, Vec::new()))
            .into_iter()
            .filter(|(label, _)| *label == "Change")
            .map(|(_, text)| text)
            .collect()
    }

    /// Issue 47: a ConfigMap edited before a restart was on the 28th row.
    /// The walk over plain data: what the template names (uses) and what
    /// selects its Pods; only their changes, dated against the target's next.
    #[test]
    fn a_used_configmaps_edit_is_related_and_dated_before_the_targets_change() {
        let mut deploy = deployment(&[
            (1_000, 1, 2, Vec::new(), "kubectl-create"),
            (
                61_000,
                2,
                2,
                vec![change(
                    "spec.template.metadata.annotations[restartedAt]",
                    "",
                    "now",
                )],
                "dana",
            ),
        ]);
        for v in deploy.versions.iter_mut() {
            v.state.refs = vec!["ConfigMap/app-settings".into()];
        }
        let mut cm = subject("ConfigMap", "app-settings", Relation::Uses, 500);
        cm.versions = vec![
            version(500, ObjectState::default()),
            Version {
                diff: vec![change("data.LOG_LEVEL", "", "")],
                writers: vec!["dana".into()],
                ..version(
                    21_000,
                    ObjectState {
                        spec_digest: "b".into(),
                        ..ObjectState::default()
                    },
                )
            },
        ];
        // A ConfigMap in the namespace that nothing of the story names.
        let mut other = subject("ConfigMap", "unrelated", Relation::Owned, 500);
        other.versions = cm.versions.clone();
        other.relation = None;
        let subjects = vec![deploy, cm, other];
        let t = crate::timeline::assemble(&subjects, &[], &[], &[], 0, 100_000);
        let related: Vec<String> = lines(&summarize(&subjects, &t, 1, Vec::new()))
            .into_iter()
            .filter(|(label, _)| *label == "Related")
            .map(|(_, text)| text)
            .collect();
        assert_eq!(related.len(), 1, "{related:?}");
        assert!(
            related[0]
                .starts_with("1970-01-01 00:00:21 ConfigMap/app-settings changed: data.LOG_LEVEL")
                && related[0].ends_with("(by dana), 40s before its change at 1970-01-01 00:01:01"),
            "{related:?}"
        );
        assert!(!related[0].contains("unrelated"));
    }

    #[test]
    fn a_scale_with_its_spec_diff_is_one_change_line_with_its_writer_not_two() {
        // Regression: "replicas 2 → 0" printed next to "spec changed, generation
        // 2 → 3: spec.replicas 2 → 0 (by bob)", the same change twice.
        let deploy = deployment(&[
            (1_000, 2, 2, Vec::new(), "kubectl-create"),
            (2_000, 3, 0, vec![change("spec.replicas", "2", "0")], "bob"),
        ]);
        assert_eq!(
            change_lines(&[deploy], 10_000),
            ["1970-01-01 00:00:02 spec changed, generation 2 → 3: spec.replicas 2 → 0 (by bob)"]
        );
        // Without a stored diff (an older recording) the scale still has its line.
        let deploy = deployment(&[
            (1_000, 2, 2, Vec::new(), "kubectl-create"),
            (2_000, 2, 0, Vec::new(), "bob"),
        ]);
        assert_eq!(
            change_lines(&[deploy], 10_000),
            ["1970-01-01 00:00:02 replicas 2 → 0 (by bob)"]
        );
    }

    #[test]
    fn changes_flipping_one_field_back_and_forth_fold_into_one_line_naming_both_writers() {
        let mut versions = vec![(1_000, 1, 2, Vec::new(), "argocd")];
        for i in 0..6 {
            let (old, new, writer) = if i % 2 == 0 {
                ("2", "4", "hpa")
            } else {
                ("4", "2", "argocd")
            };
            let replicas = if i % 2 == 0 { 4 } else { 2 };
            versions.push((
                2_000 + i * 1_000,
                2 + i,
                replicas,
                vec![change("spec.replicas", old, new)],
                writer,
            ));
        }
        // Then a change of something else: its own line, after the fold.
        versions.push((
            20_000,
            8,
            2,
            vec![change(
                "spec.template.spec.containers[web].image",
                "web:1",
                "web:2",
            )],
            "alice",
        ));
        let text = change_lines(&[deployment(&versions)], 60_000);
        assert_eq!(
            text,
            [
                "1970-01-01 00:00:02 to 1970-01-01 00:00:07 spec.replicas 2 ↔ 4, back and forth 6 times (by argocd, hpa)",
                "1970-01-01 00:00:20 spec changed, generation 7 → 8: spec.template.spec.containers[web].image web:1 → web:2 (by alice)",
            ]
        );
    }

    #[test]
    fn an_undo_is_two_change_lines_not_a_fight() {
        let deploy = deployment(&[
            (1_000, 1, 2, Vec::new(), "kubectl-create"),
            (2_000, 2, 3, vec![change("spec.replicas", "2", "3")], "bob"),
            (3_000, 3, 2, vec![change("spec.replicas", "3", "2")], "bob"),
        ]);
        assert_eq!(change_lines(&[deploy], 10_000).len(), 2);
    }
}
