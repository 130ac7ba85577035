//! Less noise in the table: entries that say the same thing about sibling
//! Pods (same controller, same kind of entry, same reason, same message)
//! within a few seconds of each other fold into one line, "3 Pods of
//! ReplicaSet web-5c4f". A rollout of 20 replicas then reads as a handful of
//! lines instead of a hundred. `-o wide` and JSON keep every entry.

use super::{Entry, EntryKind};

/// How close (from the previous member) an entry must be to join a fold.
pub const FOLD_MS: i64 = 10_000;

/// One line of the folded table: an entry, and the siblings that said the same.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Folded {
    /// The first entry of the fold: its time, reason and message stand for all.
    pub entry: Entry,
    /// The Pods' names, the first's included (one name for an unfolded entry).
    pub names: Vec<String>,
    /// When the last member happened.
    pub last_at: i64,
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

fn key(e: &Entry) -> Option<(EntryKind, &str, &str, &str, &str, i64)> {
    (!e.group.is_empty() && e.entry != EntryKind::Gap).then_some((
        e.entry,
        e.group.as_str(),
        e.type_.as_str(),
        e.reason.as_str(),
        e.message.as_str(),
        e.count,
    ))
}

/// Folds `entries` (in timeline order). Each fold stands where its first member was.
pub fn fold(entries: &[Entry]) -> Vec<Folded> {
    let mut out: Vec<Folded> = Vec::new();
    // Open folds: the index in `out` of the latest line for each key.
    let mut open: std::collections::HashMap<_, usize> = std::collections::HashMap::new();
    for e in entries {
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
        }
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
