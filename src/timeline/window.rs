//! Which stretch of time a timeline covers. The subject's own lifetime (the
//! named object and what it owns, first creation to last deletion, or now)
//! decides it, not the age of the cluster: a Node up for a month must not
//! stretch a five-minute rollout into a month. A Node or a claim is context,
//! and contributes only while a Pod of the subject was bound to it or used it.

use std::collections::BTreeMap;

use super::{Relation, Subject};
use crate::model::EventSummary;

/// Slack on both sides of the lifetime: creation timestamps are whole
/// seconds and Events about an object may be stamped a little before it
/// (a clock elsewhere), so the edges are not cut to the millisecond.
pub const MARGIN_MS: i64 = 30_000;

/// Whether a subject is context (a Pod's Node or claim) rather than part of the story.
pub fn is_context(s: &Subject) -> bool {
    matches!(
        s.relation,
        Some(Relation::Node | Relation::Claim | Relation::Uses | Relation::Selects)
    )
}

/// The subject's lifetime: the first creation (or first sighting) of the
/// target and what it owns, to the last deletion, or `now` while any of
/// them still exists. Without any recorded object (an Events-only import),
/// the span of the Events about them. None when nothing is known at all.
pub fn lifetime(subjects: &[Subject], events: &[EventSummary], now: i64) -> Option<(i64, i64)> {
    // NB: owners are not the subject: `timeline pod/x` covers the Pod's life, not its
    // Deployment's months; the owners' changes inside that window still show.
    let story: Vec<&Subject> = subjects
        .iter()
        .filter(|s| !is_context(s) && s.relation != Some(Relation::Owner))
        .collect();
    let start = story
        .iter()
        .filter_map(|s| s.object.created.or(s.object.first_seen))
        .min();
    if let Some(start) = start {
        let known: Vec<&&Subject> = story
            .iter()
            .filter(|s| s.object.created.or(s.object.first_seen).is_some())
            .collect();
        let end = if known.iter().all(|s| s.object.deleted.is_some()) {
            known
                .iter()
                .filter_map(|s| s.object.deleted)
                .max()
                .unwrap_or(now)
        } else {
            now
        };
        return Some((start, end.max(start)));
    }
    let context: Vec<String> = subjects
        .iter()
        .filter(|s| is_context(s))
        .map(|s| {
            key(
                &s.object.object.kind,
                &s.object.object.namespace,
                &s.object.object.name,
            )
        })
        .collect();
    let about_story = events.iter().filter(|e| {
        !context.contains(&key(
            &e.involved.kind,
            &e.involved.namespace,
            &e.involved.name,
        ))
    });
    let first = about_story.clone().map(|e| e.first).min()?;
    let last = about_story.map(|e| e.last).max()?;
    Some((first, last))
}

/// The window shown: the lifetime with [`MARGIN_MS`] on each side (never
/// past `now`), intersected with `--since`/`--until`. An explicit bound
/// outside the lifetime is narrowed to it; with no lifetime, the explicit
/// bounds (or the epoch and now) stand.
pub fn window(
    lifetime: Option<(i64, i64)>,
    since: Option<i64>,
    until: Option<i64>,
    now: i64,
) -> (i64, i64) {
    let (from, to) = match lifetime {
        Some((a, b)) => (a - MARGIN_MS, (b + MARGIN_MS).min(now.max(b))),
        None => (i64::MIN, i64::MAX),
    };
    let start = since.map_or(from, |s| s.max(from));
    let end = until.map_or(to.min(now.max(start)), |u| u.min(to));
    let start = if start == i64::MIN { 0 } else { start };
    let end = if end == i64::MAX { now } else { end };
    (start, end.max(start))
}

/// `kind/namespace/name`: how Pods name their Node and claims.
pub fn key(kind: &str, namespace: &str, name: &str) -> String {
    format!("{kind}/{namespace}/{name}")
}

/// For each Node and claim, the merged intervals in which some Pod of the
/// subject was bound to it or mounted it (by [`key`]). A Pod's first version
/// counts from its creation when it was found already bound by a list.
///
/// Also, by [`key`]: each object a Pod or a template of the story names (its
/// `refs`), while a version naming it held; and `Pods/NAMESPACE/` (see
/// [`pods_key`]), while any Pod of the story lived there: what a Service or
/// budget that selected them is context for (its selector may have stopped
/// matching, which is the story).
pub fn context_spans(subjects: &[Subject], until: i64) -> BTreeMap<String, Vec<(i64, i64)>> {
    let mut spans: BTreeMap<String, Vec<(i64, i64)>> = BTreeMap::new();
    for s in subjects.iter().filter(|s| !is_context(s)) {
        let o = &s.object;
        let end = o.deleted.unwrap_or(until);
        for (i, v) in s.versions.iter().enumerate() {
            let from = if i == 0 && v.listed {
                o.created.map_or(v.at, |c| c.min(v.at))
            } else {
                v.at
            };
            let to = s.versions.get(i + 1).map_or(end, |n| n.at).max(from);
            for r in &v.state.refs {
                if let Some((kind, name)) = r.split_once('/') {
                    spans
                        .entry(key(kind, &o.object.namespace, name))
                        .or_default()
                        .push((from, to));
                }
            }
            if o.object.kind != "Pod" {
                continue;
            }
            spans
                .entry(pods_key(&o.object.namespace))
                .or_default()
                .push((from, to));
            if !v.state.node_name.is_empty() {
                spans
                    .entry(key("Node", "", &v.state.node_name))
                    .or_default()
                    .push((from, to));
            }
            for c in &v.state.claims {
                spans
                    .entry(key("PersistentVolumeClaim", &o.object.namespace, c))
                    .or_default()
                    .push((from, to));
            }
        }
    }
    for list in spans.values_mut() {
        list.sort();
        let mut merged: Vec<(i64, i64)> = Vec::new();
        for (a, b) in list.drain(..) {
            match merged.last_mut() {
                Some(last) if a <= last.1 => last.1 = last.1.max(b),
                _ => merged.push((a, b)),
            }
        }
        *list = merged;
    }
    spans
}

/// The [`context_spans`] key of the times a Pod of the story lived in `namespace`.
pub fn pods_key(namespace: &str) -> String {
    key("Pods", namespace, "")
}

/// Whether [first, last] overlaps one of `spans`; the span it first overlaps.
pub fn overlap(spans: &[(i64, i64)], first: i64, last: i64) -> Option<(i64, i64)> {
    spans
        .iter()
        .copied()
        .find(|(a, b)| last >= *a && first <= *b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ObjectRef, ObjectState, RecordedObject, Version};

    fn subject(
        kind: &str,
        name: &str,
        relation: Relation,
        created: i64,
        deleted: Option<i64>,
    ) -> Subject {
        Subject {
            object: RecordedObject {
                object: ObjectRef {
                    kind: kind.into(),
                    namespace: if kind == "Node" {
                        String::new()
                    } else {
                        "shop".into()
                    },
                    name: name.into(),
                    ..ObjectRef::default()
                },
                created: Some(created),
                first_seen: Some(created),
                deleted,
                ..RecordedObject::default()
            },
            relation: Some(relation),
            depth: 0,
            versions: Vec::new(),
        }
    }

    fn version(at: i64, node: &str, listed: bool) -> Version {
        Version {
            diff: Vec::new(),
            provenance: Default::default(),
            at,
            state: ObjectState {
                node_name: node.into(),
                ..ObjectState::default()
            },
            writers: Vec::new(),
            listed,
        }
    }

    #[test]
    fn an_old_node_does_not_stretch_the_window() {
        let subjects = vec![
            subject(
                "Deployment",
                "shop",
                Relation::Target,
                1_000_000,
                Some(1_025_000),
            ),
            subject("Pod", "shop-1", Relation::Owned, 1_001_000, Some(1_024_000)),
            subject("Node", "n1", Relation::Node, 100_000, None),
        ];
        let life = lifetime(&subjects, &[], 2_000_000).unwrap();
        assert_eq!(
            life,
            (1_000_000, 1_025_000),
            "all deleted: ends at the last deletion"
        );
        assert_eq!(
            window(Some(life), None, None, 2_000_000),
            (1_000_000 - MARGIN_MS, 1_025_000 + MARGIN_MS)
        );
    }

    #[test]
    fn a_live_subject_runs_to_now_and_explicit_bounds_narrow_it() {
        let subjects = vec![
            subject("Deployment", "shop", Relation::Target, 1_000_000, None),
            subject("Pod", "shop-1", Relation::Owned, 1_001_000, Some(1_024_000)),
        ];
        let life = lifetime(&subjects, &[], 2_000_000).unwrap();
        assert_eq!(life, (1_000_000, 2_000_000));
        assert_eq!(
            window(Some(life), None, None, 2_000_000),
            (970_000, 2_000_000),
            "never past now"
        );
        assert_eq!(
            window(Some(life), Some(1_500_000), Some(1_600_000), 2_000_000),
            (1_500_000, 1_600_000)
        );
        assert_eq!(
            window(Some(life), Some(0), None, 2_000_000),
            (970_000, 2_000_000),
            "--since before the subject existed is narrowed to its lifetime"
        );
    }

    #[test]
    fn a_pods_window_is_the_pods_not_its_deployments() {
        let subjects = vec![
            subject("Deployment", "shop", Relation::Owner, 1_000, None),
            subject("ReplicaSet", "shop-1", Relation::Owner, 1_000, None),
            subject("Pod", "shop-1-a", Relation::Target, 500_000, Some(600_000)),
        ];
        assert_eq!(lifetime(&subjects, &[], 900_000), Some((500_000, 600_000)));
    }

    #[test]
    fn events_only_recordings_use_the_events() {
        let mut s = subject("Pod", "ghost", Relation::Target, 0, None);
        s.object.created = None;
        s.object.first_seen = None;
        let e = EventSummary {
            involved: s.object.object.clone(),
            first: 5_000,
            last: 9_000,
            ..EventSummary::default()
        };
        assert_eq!(lifetime(&[s], &[e], 50_000), Some((5_000, 9_000)));
        assert_eq!(lifetime(&[], &[], 50_000), None);
        assert_eq!(window(None, None, None, 50_000), (0, 50_000));
    }

    #[test]
    fn a_node_counts_only_while_a_pod_is_bound_to_it() {
        let mut pod = subject("Pod", "shop-1", Relation::Owned, 1_000, Some(9_000));
        pod.versions = vec![
            version(1_000, "", false),
            version(2_000, "n1", false),
            version(5_000, "n1", false),
        ];
        let mut other = subject("Pod", "shop-2", Relation::Owned, 10_000, None);
        other.versions = vec![version(12_000, "n1", true)];
        let spans = context_spans(&[pod, other], 20_000);
        assert_eq!(
            spans[&key("Node", "", "n1")],
            vec![(2_000, 9_000), (10_000, 20_000)],
            "from the bind to the Pod's deletion; a Pod found bound counts from its creation"
        );
        let n1 = &spans[&key("Node", "", "n1")];
        assert_eq!(overlap(n1, 0, 1_500), None, "before the first bind");
        assert_eq!(overlap(n1, 9_500, 9_800), None, "between two Pods");
        assert_eq!(overlap(n1, 0, 2_500), Some((2_000, 9_000)));
    }
}
