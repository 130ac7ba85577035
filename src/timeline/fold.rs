//! Less noise in the table: entries that say the same thing about sibling
//! Pods (same controller, same kind of entry, same reason, same message)
//! within a few seconds of each other fold into one line, "3 Pods of
//! ReplicaSet web-5c4f". A rollout of 20 replicas then reads as a handful of
//! lines instead of a hundred. Likewise a run of an object's spec changes
//! that flip the same fields between two values (two field managers
//! fighting) folds into one line where it began: "spec.size 3 ↔ 5, back and
//! forth 110 times". `-o wide` and JSON keep every entry.

use super::{Entry, EntryKind};
use crate::model::Provenance;

/// How close (from the previous member) an entry must be to join a fold.
pub const FOLD_MS: i64 = 10_000;

/// Spec changes in a row that flip the same fields before they fold into one
/// line: two round trips. One undo (a → b → a) is not a fight.
pub const FLIP_FOLD: usize = 4;

/// One line of the folded table: an entry, and the siblings that said the same.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Folded {
    /// The first entry of the fold: its time, reason and message stand for all.
    pub entry: Entry,
    /// The Pods' names, the first's included (one name for an unfolded entry).
    pub names: Vec<String>,
    /// When the last member happened.
    pub last_at: i64,
    /// For a run of spec changes flipping the same fields: the run.
    pub flips: Option<Flips>,
}

/// A run of one object's spec changes flipping the same fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flips {
    /// How many changes.
    pub count: usize,
    /// What they flip: `spec.size 3 ↔ 5`.
    pub fields: String,
    /// Every writer of the run, the busiest first.
    pub writers: Vec<String>,
}

impl Folded {
    /// The OBJECT cell's text for a fold of several Pods: "3 Pods of ReplicaSet/web-5c4f".
    pub fn label(&self) -> Option<String> {
        (self.names.len() > 1).then(|| {
            format!(
                "{} {}s of {}",
                self.names.len(),
                self.entry.object.kind,
                self.entry.group
            )
        })
    }
}

/// What siblings' entries must share to fold into one line; their provenance
/// too, so that a folded line never gives one source for facts of two.
type Key<'a> = (
    EntryKind,
    &'a str,
    &'a str,
    &'a str,
    &'a str,
    i64,
    Provenance,
);

fn key(e: &Entry) -> Option<Key<'_>> {
    (!e.group.is_empty() && e.entry != EntryKind::Gap).then_some((
        e.entry,
        e.group.as_str(),
        e.type_.as_str(),
        e.reason.as_str(),
        e.message.as_str(),
        e.count,
        e.provenance,
    ))
}

/// The runs of at least [`FLIP_FOLD`] spec changes of one object that flip
/// the same fields, other entries of that object in between allowed: each
/// run's indices in `entries`, and the run.
fn flip_runs(entries: &[Entry]) -> Vec<(Vec<usize>, Flips)> {
    use std::collections::HashMap;
    let mut open: HashMap<&str, (Vec<usize>, crate::specdiff::Flip<'_>)> = HashMap::new();
    let mut runs = Vec::new();
    let mut close = |run: (Vec<usize>, crate::specdiff::Flip<'_>)| {
        if run.0.len() >= FLIP_FOLD {
            let flips = Flips {
                count: run.0.len(),
                fields: crate::specdiff::flip_text(&run.1),
                writers: super::busiest_first(run.0.iter().flat_map(|&i| &entries[i].writers)),
            };
            runs.push((run.0, flips));
        }
    };
    for (i, e) in entries.iter().enumerate() {
        if e.reason != "SpecChanged" || e.object.uid.is_empty() {
            continue;
        }
        let uid = e.object.uid.as_str();
        let flip = crate::specdiff::flip(&e.fields);
        match (open.get_mut(uid), flip) {
            (Some(run), Some(f)) if crate::specdiff::same_flip(&run.1, &f) => run.0.push(i),
            (_, flip) => {
                if let Some(run) = open.remove(uid) {
                    close(run);
                }
                if let Some(f) = flip {
                    open.insert(uid, (vec![i], f));
                }
            }
        }
    }
    for (_, run) in open {
        close(run);
    }
    runs.sort_by_key(|(indices, _)| indices[0]);
    runs
}

/// Entries a creation burst needs before it folds into one line.
pub const BURST_MIN: usize = 8;

/// The longest a creation burst spans, from its first entry.
pub const BURST_SPAN_MS: i64 = 60_000;

/// A creation that went as planned: from the first entry (a `Created`), the
/// Normal entries each within [`FOLD_MS`] of the one before and within
/// [`BURST_SPAN_MS`] of the first, up to the first Warning, spec change,
/// deletion or gap. Returns how many entries it spans, when at least
/// [`BURST_MIN`]: the first rows of the table are then the story, not a
/// Deployment's, ReplicaSet's and Pods' 26 entries of the same second.
fn creation_burst(entries: &[Entry]) -> Option<usize> {
    let first = entries.first()?;
    if first.entry != EntryKind::Transition || first.reason != "Created" {
        return None;
    }
    // NB: measured from the entry before, not from the first alone: a busy
    // controller manager may act 10 s after the Deployment was created
    // (regression: a CI run's burst ended at the ReplicaSet's first
    // condition, 10.4 s after the Deployment, and 14 creation rows filled the
    // first screen).
    let span = |e: &Entry| e.at_ms - first.at_ms <= BURST_SPAN_MS;
    let within = |i: usize| {
        span(&entries[i]) && (i == 0 || entries[i].at_ms - entries[i - 1].at_ms <= FOLD_MS)
    };
    // NB: a new Deployment is `Available False` until its Pods are ready: a
    // bad condition that turns True within the burst is part of it.
    let mended = |i: usize| {
        let e = &entries[i];
        let Some(kind) = e.message.split_whitespace().next() else {
            return false;
        };
        e.entry == EntryKind::Transition
            && e.reason == "Condition"
            && entries[i + 1..].iter().take_while(|n| span(n)).any(|n| {
                n.object.uid == e.object.uid
                    && n.reason == "Condition"
                    && n.message.starts_with(&format!("{kind} "))
                    && n.message.contains("→ True")
            })
    };
    let end = (0..entries.len())
        .find(|&i| {
            let e = &entries[i];
            !within(i)
                || (e.type_ != "Normal" && !mended(i))
                || e.entry == EntryKind::Gap
                || matches!(
                    e.reason.as_str(),
                    "SpecChanged" | "ImageChanged" | "Scaled" | "Deleted" | "Relabelled"
                )
        })
        .unwrap_or(entries.len());
    (end >= BURST_MIN).then_some(end)
}

/// The one line of a creation burst: the first entry, then what else was
/// created and the first object's last state in the burst.
fn burst_line(burst: &[Entry]) -> Folded {
    let first = &burst[0];
    let mut created: Vec<(String, usize)> = Vec::new();
    for e in &burst[1..] {
        if e.entry == EntryKind::Transition && e.reason == "Created" {
            match created.iter_mut().find(|(k, _)| *k == e.object.kind) {
                Some((_, n)) => *n += 1,
                None => created.push((e.object.kind.clone(), 1)),
            }
        }
    }
    let created = created
        .iter()
        .map(|(kind, n)| format!("{n} {kind}{}", if *n > 1 { "s" } else { "" }))
        .collect::<Vec<_>>();
    let last_state = burst
        .iter()
        .rev()
        .find(|e| e.object.uid == first.object.uid && e.reason == "Replicas")
        .map(|e| format!("; {}", e.message))
        .unwrap_or_default();
    let last_at = burst.last().map_or(first.at_ms, |e| e.at_ms);
    let made = if created.is_empty() {
        String::new()
    } else {
        format!("{} created, ", created.join(", "))
    };
    let mut entry = first.clone();
    entry.message = format!(
        "{} (then within {}: {made}{} more entries{last_state}; -o wide lists each)",
        first.message,
        crate::units::human_duration(last_at - first.at_ms),
        burst.len() - 1
    );
    Folded {
        entry,
        names: vec![first.object.name.clone()],
        last_at,
        flips: None,
    }
}

/// Folds `entries` (in timeline order). Each fold stands where its first member was.
pub fn fold(entries: &[Entry]) -> Vec<Folded> {
    // NB: the fold is titled by its first entry, which must be known exactly.
    let exact_first = entries
        .first()
        .is_some_and(|e| matches!(e.certainty, None | Some(crate::model::Certainty::Exact)));
    if let Some(end) = creation_burst(entries).filter(|_| exact_first) {
        // NB: only what is known exactly folds: a reconstruction's inferred
        // or last-write entries keep their rows and their certainty.
        let (absorbed, kept): (Vec<Entry>, Vec<Entry>) = entries[..end]
            .iter()
            .cloned()
            .partition(|e| matches!(e.certainty, None | Some(crate::model::Certainty::Exact)));
        if absorbed.len() >= BURST_MIN {
            let mut out = vec![burst_line(&absorbed)];
            let mut rest = kept;
            rest.extend_from_slice(&entries[end..]);
            out.extend(fold_rest(&rest));
            return out;
        }
    }
    fold_rest(entries)
}

/// [`fold`] past a creation burst: siblings and flips.
fn fold_rest(entries: &[Entry]) -> Vec<Folded> {
    let mut out: Vec<Folded> = Vec::new();
    // Members of a flip run after its first: they are in the first's line.
    let mut absorbed = std::collections::HashSet::new();
    let mut heads = std::collections::HashMap::new();
    for (indices, flips) in flip_runs(entries) {
        absorbed.extend(indices[1..].iter().copied());
        let last = *indices.last().unwrap_or(&indices[0]);
        heads.insert(indices[0], (flips, entries[last].at_ms));
    }
    // Open folds: the index in `out` of the latest line for each key.
    let mut open: std::collections::HashMap<_, usize> = std::collections::HashMap::new();
    for (i, e) in entries.iter().enumerate() {
        if absorbed.contains(&i) {
            continue;
        }
        if let Some((flips, last_at)) = heads.remove(&i) {
            out.push(Folded {
                entry: e.clone(),
                names: vec![e.object.name.clone()],
                last_at,
                flips: Some(flips),
            });
            continue;
        }
        if let Some(k) = key(e) {
            if let Some(&i) = open.get(&k) {
                let f = &mut out[i];
                if e.at_ms - f.last_at <= FOLD_MS && !f.names.contains(&e.object.name) {
                    f.names.push(e.object.name.clone());
                    f.last_at = e.at_ms;
                    continue;
                }
            }
            open.insert(k, out.len());
        }
        out.push(Folded {
            entry: e.clone(),
            names: vec![e.object.name.clone()],
            last_at: e.at_ms,
            flips: None,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timeline::EntryObject;

    fn e(at: i64, pod: &str, group: &str, reason: &str, message: &str) -> Entry {
        Entry {
            at_ms: at,
            until_ms: None,
            time: String::new(),
            until: None,
            entry: EntryKind::Transition,
            object: EntryObject {
                kind: "Pod".into(),
                namespace: "shop".into(),
                name: pod.into(),
                uid: String::new(),
            },
            type_: "Warning".into(),
            reason: reason.into(),
            message: message.into(),
            count: 1,
            writers: Vec::new(),
            source: String::new(),
            group: group.into(),
            fields: Vec::new(),
            certainty: None,
            rule: None,
            provenance: Default::default(),
        }
    }

    /// A creation that went as planned, then the story: issue 47 found the
    /// first 16 rows of a table to be creation entries of the same second.
    fn created(at: i64, kind: &str, name: &str, reason: &str, message: &str) -> Entry {
        let mut x = e(at, name, "", reason, message);
        x.object.kind = kind.into();
        x.object.uid = format!("uid-{name}");
        x.type_ = "Normal".into();
        x
    }

    #[test]
    fn a_creation_burst_folds_into_one_line_and_the_story_follows() {
        let mut entries = vec![
            created(0, "Deployment", "web", "Created", "created: replicas 2"),
            created(0, "ReplicaSet", "web-1", "Created", "created"),
            created(0, "Pod", "web-1-a", "Created", "created"),
            created(0, "Pod", "web-1-b", "Created", "created"),
        ];
        let mut unavailable = created(
            0,
            "Deployment",
            "web",
            "Condition",
            "Available none → False",
        );
        unavailable.type_ = "Warning".into();
        entries.push(unavailable);
        for pod in ["web-1-a", "web-1-b"] {
            entries.push(created(100, "Pod", pod, "Bound", "bound to node n1"));
            entries.push(created(200, "Pod", pod, "Condition", "Ready none → True"));
        }
        entries.push(created(
            300,
            "Deployment",
            "web",
            "Condition",
            "Available False → True",
        ));
        entries.push(created(
            300,
            "Deployment",
            "web",
            "Replicas",
            "ready 2, available 2 of 2",
        ));
        let mut failed = created(
            60_000,
            "Pod",
            "web-2-a",
            "Failed",
            "Error: ImagePullBackOff",
        );
        failed.type_ = "Warning".into();
        entries.push(failed);
        let folded = fold(&entries);
        assert_eq!(folded.len(), 2, "{folded:#?}");
        assert_eq!(
            folded[0].entry.message,
            "created: replicas 2 (then within 0s: 1 ReplicaSet, 2 Pods created, 10 more entries; ready 2, available 2 of 2; -o wide lists each)"
        );
        assert_eq!(folded[1].entry.reason, "Failed");
    }

    /// Regression (a CI run of relations_cluster, two cores busy): the
    /// controller manager made the ReplicaSet 10 s after the Deployment, so
    /// the burst, measured from its first entry alone, ended there and 14
    /// creation rows filled the first screen.
    #[test]
    fn a_creation_burst_survives_a_slow_controller() {
        let mut entries = vec![created(
            2_000,
            "Deployment",
            "web",
            "Created",
            "created: replicas 2",
        )];
        entries.push(created(12_000, "ReplicaSet", "web-1", "Created", "created"));
        for pod in ["web-1-a", "web-1-b"] {
            entries.push(created(12_000, "Pod", pod, "Created", "created"));
        }
        for pod in ["web-1-a", "web-1-b"] {
            entries.push(created(12_300, "Pod", pod, "Phase", "phase none → Pending"));
            entries.push(created(12_400, "Pod", pod, "Bound", "bound to node n1"));
        }
        entries.push(created(
            12_500,
            "Deployment",
            "web",
            "Condition",
            "Progressing none → True",
        ));
        let mut patched = created(16_000, "Deployment", "web", "SpecChanged", "spec changed");
        patched.type_ = "Normal".into();
        entries.push(patched);
        let folded = fold(&entries);
        let reasons: Vec<&str> = folded.iter().map(|f| f.entry.reason.as_str()).collect();
        assert_eq!(reasons, ["Created", "SpecChanged"], "{folded:#?}");
        assert!(
            folded[0].entry.message.contains("then within 10s"),
            "{}",
            folded[0].entry.message
        );
        // Quiet for longer than a fold's step: the burst ends there.
        let mut late = entries.clone();
        late[1].at_ms = 13_000;
        for e in &mut late[2..8] {
            e.at_ms += 1_000;
        }
        let folded = fold(&late);
        assert_eq!(folded[0].entry.reason, "Created");
        assert!(
            !folded[0].entry.message.contains("then within"),
            "{}",
            folded[0].entry.message
        );
    }

    #[test]
    fn a_creation_that_goes_wrong_at_once_does_not_fold_its_trouble() {
        let mut entries = vec![created(0, "Deployment", "web", "Created", "created")];
        for i in 0..8 {
            entries.push(created(0, "Pod", &format!("p{i}"), "Created", "created"));
        }
        let mut never = created(
            0,
            "Deployment",
            "web",
            "Condition",
            "Available none → False",
        );
        never.type_ = "Warning".into();
        entries.insert(3, never);
        let folded = fold(&entries);
        assert!(
            folded
                .iter()
                .all(|f| !f.entry.message.contains("then within")),
            "a condition that stays False ends the burst before it is one: {folded:#?}"
        );
    }

    #[test]
    fn siblings_saying_the_same_fold_into_one_line() {
        let rs = "ReplicaSet/web-5c4f";
        let waiting = "web: waiting (ImagePullBackOff)";
        let entries = vec![
            e(1_000, "web-5c4f-a", rs, "Container", waiting),
            e(1_100, "web-5c4f-a", rs, "Condition", "Ready none → False"),
            e(1_200, "web-5c4f-b", rs, "Container", waiting),
            e(1_300, "web-5c4f-b", rs, "Condition", "Ready none → False"),
            e(2_000, "web-5c4f-c", rs, "Container", waiting),
        ];
        let folded = fold(&entries);
        assert_eq!(folded.len(), 2);
        assert_eq!(
            folded[0].names,
            vec!["web-5c4f-a", "web-5c4f-b", "web-5c4f-c"]
        );
        assert_eq!(folded[0].label().unwrap(), "3 Pods of ReplicaSet/web-5c4f");
        assert_eq!(folded[0].last_at, 2_000);
        assert_eq!(folded[1].names.len(), 2);
    }

    #[test]
    fn different_words_owners_or_distant_times_do_not_fold() {
        let entries = vec![
            e(
                1_000,
                "a-1",
                "ReplicaSet/a",
                "Container",
                "web: waiting (ImagePullBackOff)",
            ),
            e(
                1_000,
                "b-1",
                "ReplicaSet/b",
                "Container",
                "web: waiting (ImagePullBackOff)",
            ),
            e(
                1_000,
                "a-2",
                "ReplicaSet/a",
                "Container",
                "web: waiting (CrashLoopBackOff)",
            ),
            e(
                1_000 + FOLD_MS + 1,
                "a-3",
                "ReplicaSet/a",
                "Container",
                "web: waiting (ImagePullBackOff)",
            ),
            e(
                1_000,
                "lone",
                "",
                "Container",
                "web: waiting (ImagePullBackOff)",
            ),
            e(
                1_001,
                "lone2",
                "",
                "Container",
                "web: waiting (ImagePullBackOff)",
            ),
        ];
        let folded = fold(&entries);
        assert_eq!(folded.len(), 6, "{folded:#?}");
        assert!(folded.iter().all(|f| f.label().is_none()));
    }

    fn spec(at: i64, uid: &str, old: &str, new: &str, writer: &str) -> Entry {
        let mut s = e(at, uid, "", "SpecChanged", "spec changed");
        s.object.uid = uid.into();
        s.writers = vec![writer.into()];
        s.fields = vec![crate::specdiff::FieldChange {
            path: "spec.size".into(),
            old: Some(old.into()),
            new: Some(new.into()),
        }];
        s
    }

    #[test]
    fn a_fight_flipping_one_field_folds_into_one_line_and_one_undo_does_not() {
        let mut entries = Vec::new();
        for i in 0..6 {
            let (old, new, who) = if i % 2 == 0 {
                ("3", "5", "a")
            } else {
                ("5", "3", "b")
            };
            entries.push(spec(1_000 * i, "w", old, new, who));
            // Another object's entry in between does not break the run.
            entries.push(e(1_000 * i + 1, "other", "", "Condition", "Ready"));
        }
        // An undo on another object: two changes, no fold.
        entries.push(spec(10_000, "x", "1", "2", "c"));
        entries.push(spec(11_000, "x", "2", "1", "c"));
        let folded = fold(&entries);
        let flips: Vec<&Folded> = folded.iter().filter(|f| f.flips.is_some()).collect();
        assert_eq!(flips.len(), 1, "{folded:#?}");
        let run = flips[0].flips.as_ref().unwrap();
        assert_eq!(
            (run.count, run.fields.as_str(), run.writers.clone()),
            (6, "spec.size 3 ↔ 5", vec!["a".to_string(), "b".to_string()])
        );
        assert_eq!((flips[0].entry.at_ms, flips[0].last_at), (0, 5_000));
        // 1 fold + 6 other entries + the 2 changes of the undo.
        assert_eq!(folded.len(), 9, "{folded:#?}");
    }

    #[test]
    fn the_same_pod_twice_is_not_two_siblings() {
        let rs = "ReplicaSet/web-5c4f";
        let entries = vec![
            e(1_000, "web-5c4f-a", rs, "Restarted", "web restarted"),
            e(2_000, "web-5c4f-a", rs, "Restarted", "web restarted"),
        ];
        assert_eq!(fold(&entries).len(), 2);
    }
}
