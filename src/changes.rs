//! The cluster-wide feed of what changed (`kubectl diag changes`): spec
//! diffs with their writers, objects created and deleted, types that
//! appeared or went. Pure over plain rows; [`fold`] collapses what a
//! controller does in bulk so that a typical hour fits one screen.

use serde::Serialize;

use crate::specdiff::FieldChange;

/// What happened to one object (or type).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "change", rename_all = "kebab-case")]
pub enum What {
    /// Its spec (a Node's taints, labels, unschedulable; a ConfigMap's keys) changed.
    Spec {
        diff: Vec<FieldChange>,
        /// `metadata.generation` after the change (0: the type has none).
        generation: i64,
    },
    Created,
    /// Seen deleted; `after` set: it went while the recorder was blind,
    /// some time between `after` and `at`.
    Deleted {
        #[serde(serialize_with = "crate::units::ser_rfc3339_opt")]
        after: Option<i64>,
    },
    /// A resource type began to be served and recorded (a CRD established).
    TypeAppeared,
    /// The first version the recording has of an object it did not see
    /// created (an audit log's first write of it): its writer wrote this
    /// version; what the object was before is unknown.
    FirstSeen,
    /// A write an audit log names without the object it left (see
    /// [`crate::model::Touch`]): who and what, not the diff.
    Touch {
        /// `scaled`, `deleted`, `exec into`, ...
        action: String,
        /// What the entry tells of the change (`spec.replicas → 0`).
        #[serde(skip_serializing_if = "String::is_empty")]
        detail: String,
        /// Why the change is unknown (`the log holds no body (Metadata level)`).
        #[serde(skip_serializing_if = "String::is_empty")]
        unknown: String,
        /// The apiserver's answer (0: none in the entry).
        code: u16,
        /// The whole sentence, as the table prints it.
        #[serde(skip)]
        sentence: String,
    },
    /// A resource type went (its CRD was removed), and its objects with it.
    TypeRemoved,
}

/// The controlling owner of an object, as its owner reference named it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Owner {
    pub kind: String,
    pub name: String,
}

/// One change in the feed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Item {
    /// Epoch ms; RFC 3339 in JSON, as `timeline` and `check` print times.
    #[serde(serialize_with = "crate::units::ser_rfc3339")]
    pub at: i64,
    pub kind: String,
    /// Empty for cluster-scoped objects and types.
    pub namespace: String,
    /// The object's name; for a type, its full name (`plural.group`).
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub owner: Option<Owner>,
    /// The field managers that wrote it, when the recording knows.
    pub writers: Vec<String>,
    #[serde(flatten)]
    pub what: What,
    /// Where it comes from; said only when the recorder did not see it
    /// (an audit log's), or saw it and an audit log named who.
    #[serde(skip_serializing_if = "crate::model::Provenance::goes_without_saying")]
    pub provenance: crate::model::Provenance,
}

/// One printed line: a change, or several alike folded into one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    pub at: i64,
    /// `Kind/name`, `namespace/Kind/name`, or what a folded line is about.
    pub object: String,
    pub change: String,
    pub by: String,
    /// Where it comes from, when not the recorder alone (`-o wide` only:
    /// a folded line leaves it empty).
    pub source: String,
}

/// Changes alike and this close in time (ms) fold into one line.
const FOLD_WITHIN: i64 = 60_000;

fn object_text(i: &Item) -> String {
    if i.namespace.is_empty() {
        format!("{}/{}", i.kind, i.name)
    } else {
        format!("{}/{}/{}", i.namespace, i.kind, i.name)
    }
}

fn diff_text(diff: &[FieldChange]) -> String {
    diff.iter()
        .map(FieldChange::text)
        .collect::<Vec<_>>()
        .join("; ")
}

fn change_text(i: &Item) -> String {
    match &i.what {
        What::Spec { diff, .. } => diff_text(diff),
        What::Created => "created".into(),
        What::Deleted { after: None } => "deleted".into(),
        What::Deleted { after: Some(after) } => format!(
            "deleted while the recorder was not watching (after {})",
            crate::units::rfc3339(*after)
        ),
        What::TypeAppeared => format!("type {} appeared: recorded from here", i.name),
        What::FirstSeen => "first seen: written by this writer; its state before is unknown".into(),
        What::Touch { sentence, .. } => sentence.clone(),
        What::TypeRemoved => format!("type {} removed, its objects with it", i.name),
    }
}

/// Joins an audit log's body-less creations and deletions (touches) to the
/// recorded lines they made: one line, the recorded one, naming who asked
/// (regression: after an audit import, each recorded Pod creation and
/// deletion was listed twice, once with no person and once as "what it
/// changed is unknown"). `items` in time order; what matches nothing stays.
///
/// - A creation matches the recorded creation of its name within a second
///   (`creationTimestamp` has whole seconds; the request is dated by the
///   apiserver's clock). A generated name (a create names no object) is
///   matched to the recorded creations of its kind and namespace in its
///   second only when every such request of that second came from one
///   writer: else who made which is unknown.
/// - A deletion matches the first recorded deletion of its name seen after
///   the request; of several requests (a ReplicaSet's, then the kubelet's
///   final one) the first names the deleter, the rest are absorbed.
/// - A refused write (an answer of 300 or more) matches nothing.
pub fn join_touches(items: Vec<Item>) -> Vec<Item> {
    use std::collections::{HashMap, HashSet};
    let second = |at: i64| at.div_euclid(1_000);
    fn touch(i: &Item) -> Option<&str> {
        match &i.what {
            What::Touch { action, code, .. } if *code < 300 => Some(action.as_str()),
            _ => None,
        }
    }
    // Generated-name creations by (kind, namespace, second): their writers.
    let mut generated: HashMap<(&str, &str, i64), HashSet<&str>> = HashMap::new();
    for i in &items {
        if touch(i) == Some("created") && i.name.is_empty() {
            generated
                .entry((i.kind.as_str(), i.namespace.as_str(), second(i.at)))
                .or_default()
                .extend(i.writers.iter().map(String::as_str));
        }
    }
    let mut named: HashMap<usize, Vec<String>> = HashMap::new();
    let mut absorbed: HashSet<usize> = HashSet::new();
    for (t, i) in items.iter().enumerate() {
        let Some(action) = touch(i) else { continue };
        let matches = |j: usize, want: fn(&What) -> bool| {
            let r = &items[j];
            want(&r.what) && r.kind == i.kind && r.namespace == i.namespace
        };
        match action {
            "created" if i.name.is_empty() => {
                let key = (i.kind.as_str(), i.namespace.as_str(), second(i.at));
                if generated.get(&key).is_none_or(|w| w.len() != 1) {
                    continue;
                }
                let made: Vec<usize> = (0..items.len())
                    .filter(|&j| {
                        matches(j, |w| matches!(w, What::Created))
                            && second(items[j].at) == second(i.at)
                    })
                    .collect();
                if made.is_empty() {
                    continue;
                }
                for j in made {
                    named.entry(j).or_insert_with(|| i.writers.clone());
                }
                absorbed.insert(t);
            }
            "created" => {
                let found = (0..items.len()).find(|&j| {
                    matches(j, |w| matches!(w, What::Created))
                        && items[j].name == i.name
                        && (second(items[j].at) - second(i.at)).abs() <= 1
                });
                if let Some(j) = found {
                    named.entry(j).or_insert_with(|| i.writers.clone());
                    absorbed.insert(t);
                }
            }
            "deleted" => {
                let found = (0..items.len()).find(|&j| {
                    matches(j, |w| matches!(w, What::Deleted { .. }))
                        && items[j].name == i.name
                        && items[j].at >= i.at - 1_000
                });
                if let Some(j) = found {
                    named.entry(j).or_insert_with(|| i.writers.clone());
                    absorbed.insert(t);
                }
            }
            _ => {}
        }
    }
    items
        .into_iter()
        .enumerate()
        .filter(|(j, _)| !absorbed.contains(j))
        .map(|(j, mut i)| {
            if let Some(w) = named.remove(&j) {
                i.writers = w;
                if i.provenance == crate::model::Provenance::Recorded {
                    i.provenance = crate::model::Provenance::RecordedWriterFromAudit;
                }
            }
            i
        })
        .collect()
}

/// Every change on its own line (`-o wide`).
pub fn lines(items: &[Item]) -> Vec<Line> {
    items
        .iter()
        .map(|i| Line {
            at: i.at,
            object: match i.what {
                What::TypeAppeared | What::TypeRemoved => "(type)".to_string(),
                _ => object_text(i),
            },
            change: change_text(i),
            by: i.writers.join(","),
            source: i.provenance.said().unwrap_or_default().to_string(),
        })
        .collect()
}

/// What makes two changes alike enough to fold: objects of one kind with the
/// same owner (or none) and namespace, the same kind of change, and for spec
/// changes the same writers and changed paths.
fn fold_key(i: &Item) -> Option<String> {
    let owner = i
        .owner
        .as_ref()
        .map(|o| format!("{}/{}", o.kind, o.name))
        .unwrap_or_default();
    let what = match &i.what {
        What::Created => "created".to_string(),
        What::Deleted { after } => format!("deleted{}", after.is_some()),
        What::FirstSeen => "first-seen".to_string(),
        What::Touch { action, code, .. } => format!("touch {action} {code}"),
        // NB: only what a controller does to the objects it owns folds (a
        // ReplicaSet scaled step by step in a rollout): a change by hand to a
        // top-level object is the cause being looked for, and stays a line.
        What::Spec { diff, .. } if i.owner.is_some() => {
            let paths: Vec<&str> = diff.iter().map(|c| c.path.as_str()).collect();
            format!("spec {} {}", i.writers.join(","), paths.join(","))
        }
        _ => return None,
    };
    // Objects nobody owns fold only by the same hand (see [`BULK`]).
    let hand = if i.owner.is_none() {
        i.writers.join(",")
    } else {
        String::new()
    };
    Some(format!(
        "{}\0{}\0{owner}\0{what}\0{hand}",
        i.kind, i.namespace
    ))
}

/// Alike changes to objects nobody owns fold only from this many on: a few
/// are what a person did and each keeps its line (issue 27.15: "2
/// CustomResourceDefinitions deleted"); a `kubectl delete -f` of 3,000 is one.
pub const BULK: usize = 10;

fn plural(kind: &str, n: usize) -> String {
    if n == 1 {
        kind.to_string()
    } else if kind.ends_with('s') {
        format!("{kind}es")
    } else {
        format!("{kind}s")
    }
}

/// The feed for the first screen: bulk creations, deletions and controller
/// spec changes alike and close in time become one line ("42 Pods of
/// ReplicaSet web-7c9d deleted"); everything else as [`lines`].
pub fn fold(items: &[Item]) -> Vec<Line> {
    // (index of the group's first item, its members, time of its last member)
    let mut groups: Vec<(usize, Vec<usize>)> = Vec::new();
    let mut open: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for (index, item) in items.iter().enumerate() {
        let Some(key) = fold_key(item) else {
            groups.push((index, vec![index]));
            continue;
        };
        match open.get(&key) {
            Some(&g)
                if item.at - items[*groups[g].1.last().unwrap_or(&index)].at <= FOLD_WITHIN =>
            {
                groups[g].1.push(index);
            }
            _ => {
                open.insert(key, groups.len());
                groups.push((index, vec![index]));
            }
        }
    }
    groups
        .into_iter()
        .flat_map(|(first, members)| {
            let i = &items[first];
            if members.len() == 1 {
                return vec![lines(std::slice::from_ref(i)).remove(0)];
            }
            if i.owner.is_none() && members.len() < BULK {
                let each: Vec<Item> = members.iter().map(|m| items[*m].clone()).collect();
                return lines(&each);
            }
            let n = members.len();
            let mut names: Vec<&str> = members.iter().map(|m| items[*m].name.as_str()).collect();
            names.sort_unstable();
            names.dedup();
            let scope = if i.namespace.is_empty() {
                String::new()
            } else {
                format!("{}/", i.namespace)
            };
            let whose = match &i.owner {
                Some(o) => format!(" of {} {}", o.kind, o.name),
                None => String::new(),
            };
            let object = if names.len() == 1 {
                object_text(i)
            } else {
                format!(
                    "{scope}{} {}{whose}",
                    names.len(),
                    plural(&i.kind, names.len())
                )
            };
            let last = &items[*members.last().unwrap_or(&first)];
            let change = match &i.what {
                What::Spec { .. } => {
                    let first_text = change_text(i);
                    let last_text = change_text(last);
                    format!("{n} spec changes, first {first_text}, last {last_text}")
                }
                _ => change_text(i),
            };
            let span = crate::units::human_duration(last.at - i.at);
            let change = if last.at - i.at >= 1_000 {
                format!("{change} (over {span})")
            } else {
                change
            };
            vec![Line {
                at: i.at,
                object,
                change,
                by: i.writers.join(","),
                source: String::new(),
            }]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 27.15: "2 CustomResourceDefinitions deleted" folded what a
    /// person did; ten or more alike by one hand still fold.
    #[test]
    fn a_few_changes_to_objects_nobody_owns_keep_their_lines_and_a_bulk_one_folds() {
        let by = |mut i: Item, w: &str| {
            i.writers = vec![w.into()];
            i
        };
        let two: Vec<Item> = ["a", "b"]
            .iter()
            .map(|n| {
                by(
                    item(1_000, "Widget", n, None, What::Deleted { after: None }),
                    "kubectl",
                )
            })
            .collect();
        assert_eq!(fold(&two).len(), 2, "{:?}", fold(&two));
        let many: Vec<Item> = (0..3000)
            .map(|n| {
                by(
                    item(1_000 + n, "Widget", &format!("w{n}"), None, What::Created),
                    "kubectl-client-side-apply",
                )
            })
            .collect();
        let lines = fold(&many);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert_eq!(lines[0].object, "shop/3000 Widgets");
    }

    fn item(at: i64, kind: &str, name: &str, owner: Option<(&str, &str)>, what: What) -> Item {
        Item {
            at,
            kind: kind.into(),
            namespace: "shop".into(),
            name: name.into(),
            owner: owner.map(|(k, n)| Owner {
                kind: k.into(),
                name: n.into(),
            }),
            writers: vec!["kube-controller-manager".into()],
            what,
            provenance: crate::model::Provenance::Recorded,
        }
    }

    fn replicas(old: &str, new: &str) -> What {
        What::Spec {
            diff: vec![FieldChange {
                path: "spec.replicas".into(),
                old: Some(old.into()),
                new: Some(new.into()),
            }],
            generation: 2,
        }
    }

    fn touched(at: i64, name: &str, action: &str, code: u16, who: &str) -> Item {
        let mut t = item(
            at,
            "Pod",
            name,
            None,
            What::Touch {
                action: action.into(),
                detail: String::new(),
                unknown: "the log holds no body (Metadata level)".into(),
                code,
                sentence: format!("{action}; what it changed is unknown"),
            },
        );
        t.writers = vec![who.into()];
        t.provenance = crate::model::Provenance::AuditLog;
        t
    }

    /// Regression (played on the local cluster, audit log imported into the
    /// recording): each recorded Pod creation and deletion was listed twice.
    #[test]
    fn an_audit_write_the_recording_holds_names_its_line_and_is_no_second_row() {
        let rs = "system:serviceaccount:kube-system:replicaset-controller";
        let items = vec![
            // Two Pods made by the ReplicaSet under generated names.
            touched(10_900, "", "created", 201, rs),
            item(10_000, "Pod", "web-1-a", None, What::Created),
            touched(10_950, "", "created", 201, rs),
            item(10_000, "Pod", "web-1-b", None, What::Created),
            // alice makes a Pod by name, at :53.9, answered in the next second.
            item(53_000, "Pod", "debug", None, What::Created),
            touched(54_010, "debug", "created", 201, "alice (kubectl-run)"),
            // bob deletes it; the kubelet's final delete follows.
            touched(60_000, "debug", "deleted", 200, "bob (kubectl-delete)"),
            touched(90_000, "debug", "deleted", 200, "system:node:n1 (kubelet)"),
            item(90_000, "Pod", "debug", None, What::Deleted { after: None }),
            // A refused delete matches nothing.
            touched(95_000, "web-1-a", "deleted", 403, "mallory (kubectl)"),
            item(
                99_000,
                "Pod",
                "web-1-a",
                None,
                What::Deleted { after: None },
            ),
        ];
        let joined = join_touches(items);
        let rows: Vec<(&str, String, &str)> = joined
            .iter()
            .map(|i| {
                (
                    i.name.as_str(),
                    change_text(i),
                    i.writers.first().map_or("", String::as_str),
                )
            })
            .collect();
        assert_eq!(
            rows,
            [
                ("web-1-a", "created".to_string(), rs),
                ("web-1-b", "created".to_string(), rs),
                ("debug", "created".to_string(), "alice (kubectl-run)"),
                ("debug", "deleted".to_string(), "bob (kubectl-delete)"),
                (
                    "web-1-a",
                    "deleted; what it changed is unknown".to_string(),
                    "mallory (kubectl)"
                ),
                ("web-1-a", "deleted".to_string(), "kube-controller-manager"),
            ]
        );
    }

    /// Generated names from two writers in one second: who made which is
    /// unknown, so nothing is joined.
    #[test]
    fn generated_names_from_two_writers_in_one_second_stay_apart() {
        let items = vec![
            item(10_000, "Pod", "web-1-a", None, What::Created),
            item(10_000, "Pod", "job-1-x", None, What::Created),
            touched(10_400, "", "created", 201, "rs-controller"),
            touched(10_500, "", "created", 201, "job-controller"),
        ];
        let joined = join_touches(items.clone());
        assert_eq!(joined, items);
    }

    #[test]
    fn bulk_deletions_of_one_owner_fold_into_one_line() {
        let rs = Some(("ReplicaSet", "web-7c9d"));
        let mut items: Vec<Item> = (0..42)
            .map(|i| {
                item(
                    1_000 + i * 100,
                    "Pod",
                    &format!("web-7c9d-{i}"),
                    rs,
                    What::Deleted { after: None },
                )
            })
            .collect();
        items.push(item(9_000, "ConfigMap", "conf", None, What::Created));
        let folded = fold(&items);
        assert_eq!(folded.len(), 2, "{folded:?}");
        assert_eq!(folded[0].object, "shop/42 Pods of ReplicaSet web-7c9d");
        assert_eq!(folded[0].change, "deleted (over 4s)");
        assert_eq!(folded[1].object, "shop/ConfigMap/conf");
        assert_eq!(lines(&items).len(), 43, "-o wide keeps every change");
    }

    #[test]
    fn a_change_by_hand_stays_a_line_and_controller_steps_fold() {
        let dep = Some(("Deployment", "web"));
        let mut by_hand = item(0, "Deployment", "web", None, replicas("3", "0"));
        by_hand.writers = vec!["kubectl-scale".into()];
        let items = vec![
            by_hand,
            item(1_000, "ReplicaSet", "web-1", dep, replicas("3", "2")),
            item(2_000, "ReplicaSet", "web-1", dep, replicas("2", "1")),
            item(3_000, "ReplicaSet", "web-1", dep, replicas("1", "0")),
            // Alike, but more than a minute later: a line of its own.
            item(200_000, "ReplicaSet", "web-1", dep, replicas("0", "1")),
        ];
        let lines = fold(&items);
        let texts: Vec<String> = lines
            .iter()
            .map(|l| format!("{} | {} | {}", l.object, l.change, l.by))
            .collect();
        assert_eq!(
            texts,
            [
                "shop/Deployment/web | spec.replicas 3 → 0 | kubectl-scale",
                "shop/ReplicaSet/web-1 | 3 spec changes, first spec.replicas 3 → 2, last spec.replicas 1 → 0 (over 2s) | kube-controller-manager",
                "shop/ReplicaSet/web-1 | spec.replicas 0 → 1 | kube-controller-manager",
            ]
        );
    }

    #[test]
    fn types_and_blind_deletions_say_what_they_are() {
        let mut t = item(
            0,
            "Database",
            "databases.drill.example.com",
            None,
            What::TypeRemoved,
        );
        t.namespace.clear();
        let gone = item(5, "Pod", "x", None, What::Deleted { after: Some(0) });
        let l = lines(&[t, gone]);
        assert_eq!(l[0].object, "(type)");
        assert_eq!(
            l[0].change,
            "type databases.drill.example.com removed, its objects with it"
        );
        assert!(
            l[1].change
                .starts_with("deleted while the recorder was not watching")
        );
    }
}
