//! One object's story along its owner chain: plain data in, one
//! chronological list of entries out. Event occurrences (repeats collapsed),
//! object transitions (derived by diffing consecutive versions), who wrote
//! them, deletions, and the recorder's gaps. Pure: tests never touch a
//! cluster or a database.

pub mod fold;
pub mod reconstruct;
pub mod summary;
pub mod transitions;
pub mod window;

use serde::Serialize;

use crate::model::{EventSummary, Gap, ObjectRef, RecordedObject, Version};

pub use crate::model::Relation;

/// One object of the timeline, with its versions.
#[derive(Debug, Clone, Default)]
pub struct Subject {
    pub object: RecordedObject,
    pub relation: Option<Relation>,
    /// Depth in the owner chain from the target (0 for the target).
    pub depth: u32,
    pub versions: Vec<Version>,
}

/// What kind of line an entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EntryKind {
    Event,
    Transition,
    Gap,
}

/// One line of the timeline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Entry {
    #[serde(skip)]
    pub at_ms: i64,
    #[serde(skip)]
    pub until_ms: Option<i64>,
    /// RFC 3339.
    pub time: String,
    /// For collapsed Events and gaps: the end.
    pub until: Option<String>,
    pub entry: EntryKind,
    /// The object (empty for gaps).
    pub object: EntryObject,
    /// `Normal` or `Warning`.
    #[serde(rename = "type")]
    pub type_: String,
    pub reason: String,
    pub message: String,
    /// Occurrences, for Events (1 otherwise).
    pub count: i64,
    /// Field managers that wrote a transition.
    pub writers: Vec<String>,
    /// The Event's reporting controller; for gaps `recorder`, or `import`
    /// for the time no imported log covers.
    pub source: String,
    /// For a Pod, its controller (`ReplicaSet/web-5c4f`): siblings fold on it in the table.
    #[serde(skip)]
    pub group: String,
    /// A `SpecChanged`'s fields: a fight's flips fold on them in the table.
    #[serde(skip)]
    pub fields: Vec<crate::specdiff::FieldChange>,
    /// Reconstructed with no recording: `exact`, `last`, `inferred` or `gap`
    /// (see [`reconstruct`]); none for a recording's entries.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub certainty: Option<crate::model::Certainty>,
    /// The rule that dates a reconstructed entry, and its source field.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// Where a transition's version comes from; said only when the recorder
    /// did not see it (an audit log's, or one whose source is unknown).
    #[serde(skip_serializing_if = "crate::model::Provenance::goes_without_saying")]
    pub provenance: crate::model::Provenance,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct EntryObject {
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub uid: String,
}

impl From<&ObjectRef> for EntryObject {
    fn from(r: &ObjectRef) -> Self {
        EntryObject {
            kind: r.kind.clone(),
            namespace: r.namespace.clone(),
            name: r.name.clone(),
            uid: r.uid.clone(),
        }
    }
}

/// One object of the result, as the JSON output lists them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ObjectLine {
    #[serde(rename = "apiVersion")]
    pub api_version: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub uid: String,
    pub relation: Option<Relation>,
    pub depth: u32,
    pub created: Option<String>,
    pub deleted: Option<String>,
    /// Set when it was deleted while the recorder was blind: some time after this.
    pub deleted_after: Option<String>,
    #[serde(skip)]
    pub created_ms: Option<i64>,
    #[serde(skip)]
    pub deleted_ms: Option<i64>,
    /// Spans of this object's readiness for the picture: (from, to, state).
    #[serde(skip)]
    pub states: Vec<(i64, i64, String)>,
    /// The uid of its owner (the controller, else the first named) in its latest
    /// version that names one: the picture folds an owner's lanes under it.
    #[serde(skip)]
    pub owner_uid: Option<String>,
}

/// The assembled timeline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Timeline {
    pub since: String,
    pub until: String,
    #[serde(skip)]
    pub since_ms: i64,
    #[serde(skip)]
    pub until_ms: i64,
    pub objects: Vec<ObjectLine>,
    pub entries: Vec<Entry>,
    /// The story in a few lines, when the caller built it (`summary::summarize`).
    #[serde(skip)]
    pub summary: Option<summary::Summary>,
}

fn rfc(ms: i64) -> String {
    crate::units::rfc3339(ms)
}

pub(crate) fn entry(
    at: i64,
    until: Option<i64>,
    kind: EntryKind,
    object: &ObjectRef,
    type_: &str,
    reason: String,
    message: String,
) -> Entry {
    Entry {
        at_ms: at,
        until_ms: until,
        time: rfc(at),
        until: until.map(rfc),
        entry: kind,
        object: object.into(),
        type_: type_.to_string(),
        reason,
        message,
        count: 1,
        writers: Vec::new(),
        source: String::new(),
        group: String::new(),
        fields: Vec::new(),
        certainty: None,
        rule: None,
        provenance: crate::model::Provenance::Recorded,
    }
}

/// A coarse readiness of a state for the picture's state bars.
pub fn readiness(kind: &str, s: &crate::model::ObjectState) -> &'static str {
    if s.deletion.is_some() {
        return "terminating";
    }
    let condition = |t: &str| {
        s.conditions
            .iter()
            .find(|c| c.type_ == t)
            .map(|c| c.status.as_str())
    };
    match kind {
        "Pod" => match (s.phase.as_str(), condition("Ready")) {
            ("Succeeded", _) => "done",
            ("Failed", _) => "failed",
            (_, Some("True")) => "ready",
            ("Pending", _) if s.node_name.is_empty() => "pending",
            _ => "not-ready",
        },
        "Node" => match condition("Ready") {
            Some("True") => "ready",
            _ => "not-ready",
        },
        "Deployment" => match condition("Available") {
            Some("True") if s.observed_generation.is_none_or(|og| og >= s.generation) => "ready",
            Some("True") => "progressing",
            _ => "not-ready",
        },
        _ => {
            let want = s
                .replicas
                .get("spec.replicas")
                .or_else(|| s.replicas.get("replicas"));
            let ready = s
                .replicas
                .get("readyReplicas")
                .or_else(|| s.replicas.get("numberReady"));
            match (want, ready) {
                (Some(w), r) if *w > 0 && r.copied().unwrap_or(0) < *w => "not-ready",
                _ => "ready",
            }
        }
    }
}

/// Refused writes of the subjects (from an imported audit log) as Warning
/// lines: one per run of the same writer's same refused request, counted.
pub fn refusal_lines(
    subjects: &[Subject],
    refusals: &[crate::model::Refusal],
) -> Vec<EventSummary> {
    let none = std::collections::HashMap::new();
    let mut lines: Vec<(String, EventSummary, Vec<&crate::model::Refusal>)> = Vec::new();
    for r in refusals {
        let kind = crate::checks::hotloop::kind_of_resource(&none, &r.group, &r.resource);
        let Some(s) = subjects.iter().find(|s| {
            let o = &s.object.object;
            o.name == r.name && o.namespace == r.namespace && o.kind == kind
        }) else {
            continue;
        };
        let key = format!(
            "{}\u{0}{}\u{0}{}\u{0}{}",
            r.request(),
            r.user,
            r.code,
            s.object.object.uid
        );
        match lines.last_mut() {
            Some((k, line, run)) if *k == key => {
                line.count += 1;
                line.in_window += 1;
                line.last = r.at;
                line.message = refusal_message(r);
                run.push(r);
            }
            _ => lines.push((
                key,
                EventSummary {
                    involved: s.object.object.clone(),
                    type_: "Warning".into(),
                    reason: "Refused".into(),
                    message: refusal_message(r),
                    count: 1,
                    in_window: 1,
                    first: r.at,
                    last: r.at,
                    reporting: "audit log".into(),
                    host: String::new(),
                },
                vec![r],
            )),
        }
    }
    // NB: a controller meets 409 Conflict (a stale read, retried at once),
    // 404 (a delete that raced another) and a short run of 429s in its
    // normal work: those are Normal lines, or they break the folding of a
    // creation burst and fill the first screen (regression: 26 creation
    // rows after a Deployment's creation). A loop by H004's rule, a 401/403,
    // a 422 or a 5xx still warns.
    lines
        .into_iter()
        .map(|(_, mut line, run)| {
            let routine =
                matches!(run[0].code, 404 | 409 | 429) && !crate::checks::hotloop::a_loop(&run);
            if routine {
                line.type_ = "Normal".into();
            }
            line
        })
        .collect()
}

/// Writes of the subjects an audit log names without their bodies
/// (touches) as Normal lines: who did what, and what is unknown of it.
/// Status writes and bindings are left out (a controller's every write).
pub fn touch_lines(subjects: &[Subject], touches: &[crate::model::Touch]) -> Vec<EventSummary> {
    let none = std::collections::HashMap::new();
    touches
        .iter()
        .filter(|t| !matches!(t.subresource.as_str(), "status" | "binding"))
        .filter_map(|t| {
            let kind = crate::checks::hotloop::kind_of_resource(&none, &t.group, &t.resource);
            let s = subjects.iter().find(|s| {
                let o = &s.object.object;
                o.name == t.name && o.namespace == t.namespace && o.kind == kind
            })?;
            let reason = match t.action().as_str() {
                "scaled" => "Scaled",
                "deleted" | "deleted (collection)" => "Deleted",
                "exec into" => "Exec",
                "attached to" => "Attach",
                "port-forward to" => "PortForward",
                "evicted" => "Evicted",
                "added an ephemeral container to" => "EphemeralContainer",
                "created" => "Created",
                _ => "Written",
            };
            Some(EventSummary {
                involved: s.object.object.clone(),
                type_: "Normal".into(),
                reason: reason.into(),
                message: format!("{} by {}", t.sentence(), t.user),
                count: 1,
                in_window: 1,
                first: t.at,
                last: t.at,
                reporting: "audit log".into(),
                host: String::new(),
            })
        })
        .collect()
}

fn refusal_message(r: &crate::model::Refusal) -> String {
    let by = if r.refused_by.is_empty() {
        String::new()
    } else {
        format!(" by {}", r.refused_by)
    };
    format!(
        "{} by {}: {}{by}: {}",
        r.request(),
        r.user,
        r.status(),
        r.message
    )
}

/// Assembles the timeline of `subjects` within [since, until].
pub fn assemble(
    subjects: &[Subject],
    events: &[EventSummary],
    gaps: &[Gap],
    types: &[crate::model::TypeChange],
    since: i64,
    until: i64,
) -> Timeline {
    let context_keys = context_keys(subjects, until);
    let mut entries = Vec::new();
    let objects: Vec<ObjectLine> = subjects
        .iter()
        .map(|s| lane(s, &context_keys, (since, until), &mut entries))
        .collect();
    entries.extend(event_entries(events, &context_keys, since, until));
    entries.extend(gap_entries(gaps, since, until));
    entries.extend(type_entries(subjects, types, since, until));
    group_by_controller(subjects, &mut entries);
    sort_entries(&mut entries, &objects);
    Timeline {
        since: rfc(since),
        until: rfc(until),
        since_ms: since,
        until_ms: until,
        objects,
        entries,
        summary: None,
    }
}

/// Context objects by key, with the spans in which a Pod of the subject used them.
type ContextKeys = std::collections::BTreeMap<String, Vec<(i64, i64)>>;

fn context_keys(subjects: &[Subject], until: i64) -> ContextKeys {
    let spans = window::context_spans(subjects, until);
    let mut context_keys = ContextKeys::new();
    for s in subjects.iter().filter(|s| window::is_context(s)) {
        let r = &s.object.object;
        let k = window::key(&r.kind, &r.namespace, &r.name);
        let own = match s.relation {
            // NB: what selected the story's Pods is context while they lived,
            // whether or not its selector still matched them.
            Some(Relation::Selects) => spans.get(&window::pods_key(&r.namespace)),
            _ => spans.get(&k),
        };
        context_keys.insert(k, own.cloned().unwrap_or_default());
    }
    context_keys
}

/// One subject's lane (its states while in the window, and while used if
/// it is context), its transitions and its deletion added to `entries`.
fn lane(
    s: &Subject,
    context_keys: &ContextKeys,
    (since, until): (i64, i64),
    entries: &mut Vec<Entry>,
) -> ObjectLine {
    let o = &s.object;
    // NB: a Pod's Node or claim is context: it shows only while a Pod of the
    // subject was bound to it or used it, however much older it is.
    let context = window::is_context(s);
    let used: Option<&Vec<(i64, i64)>> = context
        .then(|| &context_keys[&window::key(&o.object.kind, &o.object.namespace, &o.object.name)]);
    let in_use = |at: i64| used.is_none_or(|spans| window::overlap(spans, at, at).is_some());
    let mut states = Vec::new();
    let end = o.deleted.unwrap_or(until).min(until);
    for (i, v) in s.versions.iter().enumerate() {
        let next = s.versions.get(i + 1).map_or(end, |n| n.at);
        let state = readiness(&o.object.kind, &v.state).to_string();
        if next >= since && v.at <= until {
            let (from, to) = (v.at.max(since), next.min(until));
            match used {
                None => states.push((from, to, state)),
                Some(spans) => {
                    for (a, b) in spans {
                        if *b >= from && *a <= to {
                            states.push((from.max(*a), to.min(*b), state.clone()));
                        }
                    }
                }
            }
        }
    }
    for t in transitions::of(&o.object, o.created, &s.versions) {
        if context && matches!(t.reason.as_str(), "Created" | "FirstRecorded") {
            continue;
        }
        if t.at >= since && t.at <= until && in_use(t.at) {
            let mut e = entry(
                t.at,
                None,
                EntryKind::Transition,
                &o.object,
                t.type_,
                t.reason,
                t.message,
            );
            e.writers = t.writers;
            e.fields = t.fields;
            e.provenance = t.provenance;
            entries.push(e);
        }
    }
    if let Some(deleted) = o
        .deleted
        .filter(|d| *d >= since && *d <= until && in_use(*d))
    {
        let (message, at, until) = match o.deleted_after {
            Some(after) => (
                format!(
                    "deleted while the recorder was not watching: some time between {} and {}",
                    rfc(after),
                    rfc(deleted)
                ),
                after,
                Some(deleted),
            ),
            None => ("deleted".to_string(), deleted, None),
        };
        let mut line = entry(
            at,
            until,
            EntryKind::Transition,
            &o.object,
            "Normal",
            "Deleted".into(),
            message,
        );
        line.provenance = o.deletion_provenance;
        entries.push(line);
    }
    ObjectLine {
        api_version: o.object.api_version.clone(),
        kind: o.object.kind.clone(),
        namespace: o.object.namespace.clone(),
        name: o.object.name.clone(),
        uid: o.object.uid.clone(),
        relation: s.relation,
        depth: s.depth,
        created: o.created.map(rfc),
        deleted: o.deleted.map(rfc),
        deleted_after: o.deleted_after.map(rfc),
        // A context object's lane runs from the first bind to the last release.
        created_ms: match used {
            Some(spans) => spans.first().map(|(a, _)| (*a).max(since)),
            None => o.created.or(o.first_seen),
        },
        deleted_ms: match used {
            Some(spans) => spans.last().map(|(_, b)| (*b).min(until)),
            None => o.deleted,
        },
        states,
        owner_uid: s
            .versions
            .iter()
            .rev()
            .map(|v| &v.state.owners)
            .find(|owners| !owners.is_empty())
            .and_then(|owners| owners.iter().find(|o| o.controller).or(owners.first()))
            .map(|o| o.uid.clone()),
    }
}

/// The Events in the window; a context object's only while it was used.
fn event_entries(
    events: &[EventSummary],
    context_keys: &ContextKeys,
    since: i64,
    until: i64,
) -> Vec<Entry> {
    let mut entries = Vec::new();
    for e in events {
        if e.last < since || e.first > until {
            continue;
        }
        let mut at = e.first;
        let mut message = e.message.clone();
        if let Some(spans) = context_keys.get(&window::key(
            &e.involved.kind,
            &e.involved.namespace,
            &e.involved.name,
        )) {
            let Some((from, _)) = window::overlap(spans, e.first, e.last) else {
                continue;
            };
            // NB: a repeating Event that began before the Pod came is shown from then on, and says so.
            if e.first < from {
                at = from;
                message = format!("(repeating since {}) {message}", rfc(e.first));
            }
        }
        // NB: one occurrence stored with a span is one known only within it: an
        // age kubectl printed (`20m`) and `import` read. Its time is not known
        // to the second, and the line must not say it is.
        if e.in_window == 1 && e.last - e.first >= 1_000 && at == e.first {
            message = format!(
                "(some time between {} and {}) {message}",
                rfc(e.first - e.first.rem_euclid(1_000)),
                rfc(e.last - e.last.rem_euclid(1_000))
            );
        }
        let mut line = entry(
            at,
            (e.last > at).then_some(e.last),
            EntryKind::Event,
            &e.involved,
            &e.type_,
            e.reason.clone(),
            message,
        );
        line.count = e.in_window;
        line.source = e.source();
        entries.push(line);
    }
    entries
}

/// The recorder's gaps in the window.
fn gap_entries(gaps: &[Gap], since: i64, until: i64) -> Vec<Entry> {
    let mut entries = Vec::new();
    for g in gaps {
        if g.finish < since || g.start > until {
            continue;
        }
        // NB: an import's first gap reaches back to the epoch: it is drawn from
        // the window's start, and said as "before".
        let from = if g.start <= 0 {
            format!("no data before {}", rfc(g.finish))
        } else {
            format!("no data from {} to {}", rfc(g.start), rfc(g.finish))
        };
        let mut line = entry(
            g.start.max(since),
            Some(g.finish),
            EntryKind::Gap,
            &ObjectRef::default(),
            "Warning",
            g.reason.as_str().to_string(),
            format!("{from} ({}): {}", g.resources.join(", "), g.detail),
        );
        // NB: what no import covers is a hole of the imports, not of a recorder.
        line.source = if g.reason == crate::model::GapReason::NotImported {
            "import".into()
        } else {
            "recorder".into()
        };
        entries.push(line);
    }
    entries
}

/// Pods' controllers, so the table can fold what siblings say alike.
fn group_by_controller(subjects: &[Subject], entries: &mut [Entry]) {
    let groups: std::collections::HashMap<String, String> = subjects
        .iter()
        .filter(|s| s.object.object.kind == "Pod")
        .filter_map(|s| {
            let r = &s.object.object;
            let owner = s
                .versions
                .iter()
                .rev()
                .flat_map(|v| v.state.owners.iter())
                .find(|o| o.controller)?;
            Some((
                window::key(&r.kind, &r.namespace, &r.name),
                format!("{}/{}", owner.kind, owner.name),
            ))
        })
        .collect();
    for e in entries.iter_mut() {
        if let Some(g) = groups.get(&window::key(
            &e.object.kind,
            &e.object.namespace,
            &e.object.name,
        )) {
            e.group = g.clone();
        }
    }
}

/// The table's order: time, and within one second the causal order the
/// evidence cannot give (see below); then gaps first (they frame what
/// follows), transitions before Events, then by name. Every path that adds
/// entries after [`assemble`] (a reconstruction's revisions and last writes,
/// a recording completed from the live cluster) sorts again with this.
pub fn sort_entries(entries: &mut [Entry], objects: &[ObjectLine]) {
    // Stable order: time, then gaps first (they frame what follows), then objects in list order.
    let order = |e: &Entry| match e.entry {
        EntryKind::Gap => 0,
        EntryKind::Transition => 1,
        EntryKind::Event => 2,
    };
    // Within one second, the order the evidence cannot give is the causal
    // one. A spec change is dated when the watch saw it, some milliseconds
    // after the write; what it made (a ReplicaSet and its Pods, whose
    // `creationTimestamp` has whole seconds) can carry an earlier time in
    // the same second (regression: Pod and ReplicaSet "created" and "Scaled
    // up replica set" told before the Deployment's spec change that made
    // them). So in a second, spec writes and creations known to the second
    // only come first, an
    // owner's before what it owns (its place in the story: owners, the
    // target, what it owns by depth), a creation before the writes of the
    // same object; then the rest by time. NB: times read from kubectl's
    // ages are whole minutes: at one time, an owner's Event comes before
    // its Pods', and the one that lasted longer later.
    // NB: by name, not uid: what is known from kubectl text has none.
    let place: std::collections::HashMap<(&str, &str, &str), usize> = objects
        .iter()
        .enumerate()
        .rev()
        .map(|(i, o)| ((o.kind.as_str(), o.namespace.as_str(), o.name.as_str()), i))
        .collect();
    let key = |e: &Entry| {
        let second = e.at_ms.div_euclid(1_000);
        let place = place
            .get(&(
                e.object.kind.as_str(),
                e.object.namespace.as_str(),
                e.object.name.as_str(),
            ))
            .copied()
            .unwrap_or(usize::MAX);
        let until = e.until_ms.unwrap_or(e.at_ms);
        match (e.entry, e.reason.as_str()) {
            (EntryKind::Gap, _) => (second, 0, e.at_ms, 0, 0, until),
            // NB: a creation dated to the millisecond keeps its place in time.
            (EntryKind::Transition, "Created") if e.at_ms.rem_euclid(1_000) == 0 => {
                (second, 1, 0, place, 0, e.at_ms)
            }
            (EntryKind::Transition, "SpecChanged" | "LastWrite" | "Revision") => {
                (second, 1, 0, place, 1, e.at_ms)
            }
            _ => (second, 2, e.at_ms, place, 0, until),
        }
    };
    entries.sort_by(|a, b| {
        key(a)
            .cmp(&key(b))
            .then(order(a).cmp(&order(b)))
            .then(a.object.kind.cmp(&b.object.kind))
            .then(a.object.name.cmp(&b.object.name))
            .then(a.reason.cmp(&b.reason))
    });
}

/// Each writer once, the one named most often first (ties by name): who
/// wrote a run of changes.
pub fn busiest_first<'a>(writers: impl Iterator<Item = &'a String>) -> Vec<String> {
    let mut counts: Vec<(&String, usize)> = Vec::new();
    for w in writers {
        match counts.iter_mut().find(|(name, _)| *name == w) {
            Some((_, n)) => *n += 1,
            None => counts.push((w, 1)),
        }
    }
    counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    counts.into_iter().map(|(w, _)| w.clone()).collect()
}

/// How long before its type's removal an object's deletion counts as part of it.
const TYPE_REMOVAL_MS: i64 = 60_000;

/// What the recorder says about an object's type: that its recording began
/// while the object already existed (a CRD established while a recorder ran:
/// the object's earlier history is unknown, not empty), or that the object
/// went because its type went (a CRD removed), not because someone deleted it.
fn type_entries(
    subjects: &[Subject],
    types: &[crate::model::TypeChange],
    since: i64,
    until: i64,
) -> Vec<Entry> {
    let group = |api_version: &str| {
        api_version
            .rsplit_once('/')
            .map_or("", |(g, _)| g)
            .to_string()
    };
    let mut out = Vec::new();
    for t in types.iter().filter(|t| since <= t.at && t.at <= until) {
        for s in subjects {
            let o = &s.object;
            if o.object.kind != t.kind || group(&o.object.api_version) != group(&t.api_version) {
                continue;
            }
            let (reason, type_, message) = if t.removed {
                // NB: deleting a CRD makes the apiserver delete its objects
                // first (the watch sees each go), then the type goes; what
                // was left is marked deleted at the type's removal itself.
                let with_type = o
                    .deleted
                    .is_some_and(|d| t.at - TYPE_REMOVAL_MS <= d && d <= t.at);
                if !with_type {
                    continue;
                }
                (
                    "TypeRemoved",
                    "Warning",
                    format!(
                        "type {} no longer served from here: its definition was removed, and the apiserver deletes the objects of a removed definition with it",
                        t.resource
                    ),
                )
            } else {
                let existed_before = o.created.is_none_or(|c| c < t.at);
                let seen_after = o.first_seen.is_some_and(|f| f >= t.at);
                if !(existed_before && seen_after) {
                    continue;
                }
                (
                    "TypeRecorded",
                    "Normal",
                    format!(
                        "type {} recorded from here (it became available while the recorder ran): nothing of this {} before is recorded",
                        t.resource, t.kind
                    ),
                )
            };
            let mut line = entry(
                t.at,
                None,
                EntryKind::Transition,
                &o.object,
                type_,
                reason.to_string(),
                message,
            );
            line.source = "recorder".into();
            out.push(line);
        }
    }
    out
}

/// Merges overlapping gaps of several watches into one line each.
pub fn merge_gaps(mut gaps: Vec<Gap>) -> Vec<Gap> {
    gaps.sort_by_key(|g| (g.start, g.finish));
    let mut merged: Vec<Gap> = Vec::new();
    for g in gaps {
        match merged.last_mut() {
            Some(last) if g.start <= last.finish && g.reason == last.reason => {
                last.finish = last.finish.max(g.finish);
                for r in g.resources {
                    if !last.resources.contains(&r) {
                        last.resources.push(r);
                    }
                }
            }
            _ => merged.push(g),
        }
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{RecordedObject, TypeChange};

    /// Regression (a pasted `kubectl get events` row aged `20m`, imported):
    /// its one occurrence is known only within the minute the age leaves
    /// open, and the line showed it as an instant. A recorded occurrence
    /// (no span) and a repeated Event (its span is its first and last) are
    /// told as before.
    #[test]
    fn an_event_known_only_to_within_a_span_says_so() {
        let pasted = EventSummary {
            involved: ObjectRef {
                kind: "Deployment".into(),
                namespace: "shop".into(),
                name: "web".into(),
                ..ObjectRef::default()
            },
            type_: "Normal".into(),
            reason: "ScalingReplicaSet".into(),
            message: "Scaled up replica set web-5d8f6c7b9d to 3".into(),
            first: 1_000_001,
            last: 1_060_999,
            count: 1,
            in_window: 1,
            ..EventSummary::default()
        };
        let recorded = EventSummary {
            first: 2_000_500,
            last: 2_000_500,
            ..pasted.clone()
        };
        let repeated = EventSummary {
            first: 3_000_000,
            last: 3_600_000,
            count: 7,
            in_window: 7,
            ..pasted.clone()
        };
        let lines = event_entries(
            &[pasted, recorded, repeated],
            &ContextKeys::new(),
            0,
            i64::MAX,
        );
        let messages: Vec<&str> = lines.iter().map(|l| l.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "(some time between 1970-01-01T00:16:40Z and 1970-01-01T00:17:40Z) Scaled up replica set web-5d8f6c7b9d to 3",
                "Scaled up replica set web-5d8f6c7b9d to 3",
                "Scaled up replica set web-5d8f6c7b9d to 3",
            ]
        );
    }

    fn widget(name: &str, created: i64, first_seen: i64, deleted: Option<i64>) -> Subject {
        Subject {
            object: RecordedObject {
                object: ObjectRef {
                    api_version: "example.com/v1".into(),
                    kind: "Widget".into(),
                    namespace: "shop".into(),
                    name: name.into(),
                    uid: name.into(),
                    field_path: String::new(),
                },
                created: Some(created),
                first_seen: Some(first_seen),
                deleted,
                ..RecordedObject::default()
            },
            relation: None,
            depth: 0,
            versions: Vec::new(),
        }
    }

    fn change(at: i64, removed: bool) -> TypeChange {
        TypeChange {
            resource: "widgets.example.com".into(),
            api_version: "example.com/v1".into(),
            kind: "Widget".into(),
            at,
            removed,
        }
    }

    fn said(t: &Timeline) -> Vec<(String, String, i64)> {
        t.entries
            .iter()
            .filter(|e| e.reason.starts_with("Type"))
            .map(|e| (e.object.name.clone(), e.reason.clone(), e.at_ms))
            .collect()
    }

    /// Regression (played on the local cluster, audit log imported): a
    /// ReplicaSet controller's routine 409 Conflicts were Warning `Refused`
    /// lines that broke the folding of the creation burst. A 409 retried at
    /// once is a Normal line; a 403 warns from the first; a 409 that goes on
    /// (H004's rule) warns.
    #[test]
    fn a_controllers_routine_conflicts_are_normal_and_a_403_warns() {
        let mut rs = widget("web-2", 0, 0, None);
        rs.object.object.kind = "ReplicaSet".into();
        let refusal = |at: i64, user: &str, code: u16| crate::model::Refusal {
            at,
            verb: "update".into(),
            user: user.into(),
            group: "apps".into(),
            resource: "replicasets".into(),
            name: "web-2".into(),
            namespace: "shop".into(),
            code,
            ..Default::default()
        };
        let lines = refusal_lines(
            std::slice::from_ref(&rs),
            &[
                refusal(
                    1_000,
                    "system:serviceaccount:kube-system:replicaset-controller",
                    409,
                ),
                refusal(2_000, "mallory", 403),
            ],
        );
        let types: Vec<(&str, i64)> = lines.iter().map(|l| (l.type_.as_str(), l.count)).collect();
        assert_eq!(types, [("Normal", 1), ("Warning", 1)]);
        // Conflicts that go on for minutes are a loop: a warning.
        let stuck: Vec<_> = (0..6)
            .map(|i| refusal(i * 30_000, "operator", 409))
            .collect();
        let lines = refusal_lines(std::slice::from_ref(&rs), &stuck);
        assert_eq!(lines.len(), 1);
        assert_eq!((lines[0].type_.as_str(), lines[0].count), ("Warning", 6));
    }

    /// Regression (played on the local cluster): within one second, the
    /// ReplicaSet and Pods a Deployment's spec change made (their
    /// `creationTimestamp` has whole seconds) were told before that change,
    /// which the watch dated some milliseconds after the write.
    #[test]
    fn within_a_second_a_spec_change_comes_before_what_it_made() {
        let version = |at: i64, generation: i64| crate::model::Version {
            at,
            state: crate::model::ObjectState {
                generation,
                ..Default::default()
            },
            ..Default::default()
        };
        let mut deploy = widget("web", 0, 0, None);
        deploy.object.object.kind = "Deployment".into();
        deploy.versions = vec![version(0, 1), version(33_400, 2)];
        let mut rs = widget("web-2", 33_000, 33_450, None);
        rs.object.object.kind = "ReplicaSet".into();
        rs.versions = vec![version(33_450, 1)];
        let t = assemble(&[deploy, rs], &[], &[], &[], 0, 60_000);
        let order: Vec<(&str, &str)> = t
            .entries
            .iter()
            .filter(|e| e.at_ms >= 33_000)
            .map(|e| (e.object.kind.as_str(), e.reason.as_str()))
            .collect();
        assert_eq!(
            order.first(),
            Some(&("Deployment", "SpecChanged")),
            "{order:?}"
        );
        assert!(order.contains(&("ReplicaSet", "Created")), "{order:?}");
    }

    #[test]
    fn an_object_older_than_the_recording_of_its_type_says_when_its_type_began_to_be_recorded() {
        let older = widget("older", 1_000, 5_000, None);
        let newer = widget("newer", 6_000, 6_000, None);
        let t = assemble(
            &[older, newer],
            &[],
            &[],
            &[change(5_000, false)],
            0,
            10_000,
        );
        assert_eq!(
            said(&t),
            vec![("older".into(), "TypeRecorded".into(), 5_000)]
        );
        let line = t
            .entries
            .iter()
            .find(|e| e.reason == "TypeRecorded")
            .unwrap();
        assert!(
            line.message
                .starts_with("type widgets.example.com recorded from here"),
            "{}",
            line.message
        );
    }

    #[test]
    fn an_object_that_went_with_its_crd_says_so_instead_of_looking_deleted_by_someone() {
        // Deleted by the apiserver as the definition went, or marked deleted with the type.
        let cleaned = widget("cleaned", 1_000, 1_000, Some(75_000));
        let gone = widget("gone", 1_000, 1_000, Some(80_000));
        let earlier = widget("earlier", 1_000, 1_000, Some(3_000));
        let t = assemble(
            &[cleaned, gone, earlier],
            &[],
            &[],
            &[change(80_000, true)],
            0,
            90_000,
        );
        assert_eq!(
            said(&t),
            vec![
                ("cleaned".into(), "TypeRemoved".into(), 80_000),
                ("gone".into(), "TypeRemoved".into(), 80_000)
            ]
        );
        // Outside the window: nothing.
        let gone = widget("gone", 1_000, 1_000, Some(80_000));
        let t = assemble(&[gone], &[], &[], &[change(80_000, true)], 0, 70_000);
        assert!(said(&t).is_empty());
    }
}
