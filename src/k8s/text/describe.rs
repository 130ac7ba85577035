//! `kubectl describe` output: one object (the caller splits at `Name:` lines),
//! its Events table, and the single-Event form of `kubectl describe event`.
//!
//! NB: describe prints no Kind line for the types it has a describer of
//! (Pods, Deployments, Nodes, …); only its generic describer (custom
//! resources, Events) does. The kind is told from the header fields that only
//! one type's describer prints, then from the reporting component of its
//! Events; see [`infer_kind`].

use std::collections::HashMap;

use super::age::{When, describe_age_bad_count, parse_age, parse_count, parse_describe_age};
use super::grid::{Grid, split_wide};
use super::{Parsed, TextEvent, split_source, stray};

/// The top-level (column 0) `Key:  value` lines of a describe section, in order.
fn top_fields<'a>(lines: &[&'a str]) -> Vec<(&'a str, &'a str)> {
    lines
        .iter()
        .filter(|l| !l.starts_with([' ', '\t']))
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k, v.trim()))
        .collect()
}

/// Which kind a describe section is of, and on what grounds; `None` when
/// nothing tells. Header fields first (only that type's describer prints
/// them), in kubectl's spelling; then who reported its Events.
pub(super) fn infer_kind(fields: &[(&str, &str)], sources: &[String]) -> Option<(String, String)> {
    let has = |k: &str| fields.iter().any(|(key, _)| *key == k);
    let value = |k: &str| fields.iter().find(|(key, _)| *key == k).map(|f| f.1);
    if let Some(kind) = value("Kind").filter(|k| !k.is_empty()) {
        return Some((kind.to_string(), "its Kind line".into()));
    }
    // (kind, header fields any one of which only that type's describer prints)
    const BY_FIELD: &[(&str, &[&str])] = &[
        (
            "Node",
            &[
                "Roles",
                "Taints",
                "Unschedulable",
                "System Info",
                "PodCIDR",
                "Lease",
            ],
        ),
        (
            "Pod",
            &[
                "QoS Class",
                "Start Time",
                "Node-Selectors",
                "Service Account",
            ],
        ),
        (
            "Deployment",
            &[
                "StrategyType",
                "NewReplicaSet",
                "OldReplicaSets",
                "MinReadySeconds",
            ],
        ),
        ("StatefulSet", &["Update Strategy", "Volume Claims"]),
        (
            "DaemonSet",
            &[
                "Desired Number of Nodes Scheduled",
                "Current Number of Nodes Scheduled",
            ],
        ),
        ("CronJob", &["Schedule", "Concurrency Policy"]),
        ("Job", &["Completions", "Parallelism", "Completion Mode"]),
        (
            "HorizontalPodAutoscaler",
            &["Min replicas", "Max replicas", "Reference"],
        ),
        ("PersistentVolumeClaim", &["Used By"]),
        ("PersistentVolume", &["Reclaim Policy"]),
        ("Service", &["Session Affinity", "TargetPort", "Endpoints"]),
        ("Ingress", &["Default backend", "Rules"]),
        ("ServiceAccount", &["Mountable secrets", "Tokens"]),
    ];
    for (kind, keys) in BY_FIELD {
        // NB: a Pod prints `Node:` and `Start Time:` but a Job prints `Start
        // Time:` too; Jobs are ruled out by `Completions:` first.
        if *kind == "Pod" && (has("Completions") || has("Parallelism")) {
            continue;
        }
        if let Some(key) = keys.iter().find(|k| has(k)) {
            return Some((kind.to_string(), format!("its `{key}:` line")));
        }
    }
    if has("Replicas") && has("Pods Status") {
        // NB: a ReplicationController prints the same two lines; they are rare today.
        return Some((
            "ReplicaSet".into(),
            "its `Replicas:` and `Pods Status:` lines".into(),
        ));
    }
    // Who reported its Events.
    const BY_SOURCE: &[(&str, &str)] = &[
        ("default-scheduler", "Pod"),
        ("deployment-controller", "Deployment"),
        ("replicaset-controller", "ReplicaSet"),
        ("statefulset-controller", "StatefulSet"),
        ("daemonset-controller", "DaemonSet"),
        ("job-controller", "Job"),
        ("cronjob-controller", "CronJob"),
        ("node-controller", "Node"),
        ("persistentvolume-controller", "PersistentVolumeClaim"),
        ("horizontal-pod-autoscaler", "HorizontalPodAutoscaler"),
    ];
    for s in sources {
        if let Some((_, kind)) = BY_SOURCE.iter().find(|(c, _)| c == s) {
            return Some((kind.to_string(), format!("its Events, reported by {s}")));
        }
    }
    None
}

/// Reads one describe section; `offset` is its first line's 0-based number.
pub(super) fn parse_object(lines: &[&str], offset: usize, out: &mut Parsed) {
    let fields = top_fields(lines);
    let value = |k: &str| fields.iter().find(|(key, _)| *key == k).map_or("", |f| f.1);
    if value("Kind") == "Event" && lines.iter().any(|l| l.starts_with("Involved Object:")) {
        describe_event(lines, offset, out);
        return;
    }
    let name = value("Name").to_string();
    let namespace = value("Namespace").to_string();
    let mut events = Vec::new();
    if let Some(at) = lines.iter().position(|l| l.starts_with("Events:")) {
        let rest = lines[at].trim_start_matches("Events:").trim();
        if rest.is_empty() {
            events_table(&lines[at + 1..], offset + at + 1, &mut events, out);
        }
    }
    let sources: Vec<String> = events.iter().filter_map(|e| e.source.clone()).collect();
    let kind = match infer_kind(&fields, &sources) {
        Some((kind, _)) => kind,
        None => {
            if !events.is_empty() {
                out.notes.push(format!(
                    "line {}: could not tell the kind of {name:?} (no header field or \
                     Event source that only one kind's describer prints); its Events are \
                     stored with an empty kind",
                    offset + 1
                ));
            }
            String::new()
        }
    };
    for mut e in events {
        e.kind = kind.clone();
        e.name = name.clone();
        e.namespace = namespace.clone();
        e.event_namespace = if namespace.is_empty() {
            "default".into()
        } else {
            namespace.clone()
        };
        out.events.push(e);
    }
}

/// An `Events:` table with no object above it (`lines[0]` its header): its
/// Events with no object, said in a note.
pub(super) fn events_alone(lines: &[&str], offset: usize, out: &mut Parsed) {
    let mut events = Vec::new();
    events_table(lines, offset, &mut events, out);
    if !events.is_empty() {
        out.notes.push(format!(
            "line {}: an Events: table with no object above it ({} Event(s)): pass --object \
             KIND/NAME to say whose they are (else stored with no object)",
            offset + 1,
            events.len()
        ));
    }
    out.events.extend(events);
}

/// The layout of describe's Events table in 1.10 and later.
const MODERN: &str = "kubectl describe (1.10+)";
/// The layout of describe's Events table in 1.9 and earlier.
const OLD: &str = "kubectl describe (1.9 and earlier)";

/// The column names of an Events table's header, however it is padded:
/// spaces, or tabs (1.7 and earlier padded describe's tables with them).
fn header_names(header: &str) -> Vec<String> {
    header
        .split('\t')
        .flat_map(split_wide)
        .map(|(_, name)| name)
        .collect()
}

/// Whether a line only draws the line under a header (`----  ------`, or
/// the box-drawing `─────` some early releases printed).
fn underline(line: &str) -> bool {
    let t = line.trim();
    !t.is_empty() && t.chars().all(|c| matches!(c, '-' | '─' | ' ' | '\t'))
}

/// The rows of an `Events:` table: `lines[0]` its header.
fn events_table(lines: &[&str], offset: usize, events: &mut Vec<TextEvent>, out: &mut Parsed) {
    let Some(header) = lines.first() else {
        return;
    };
    let names = header_names(header);
    let has = |n: &str| names.iter().any(|x| x == n);
    let modern = has("Age");
    if !(has("Reason") && has("Message") && (modern || (has("FirstSeen") && has("LastSeen")))) {
        out.notes.push(format!(
            "line {}: an Events: table with a header kubectl-diag does not know; skipped",
            offset + 1
        ));
        return;
    }
    // NB: a header padded with tabs gives no grid: its rows are read by
    // their shape alone.
    let g = (!header.contains('\t')).then(|| Grid::from_header(header));
    // The line before was a row, or went on with its message.
    let mut going_on = false;
    for (i, line) in lines.iter().enumerate().skip(1) {
        let line_no = offset + i + 1;
        if line.trim().is_empty() {
            // The table ends at the first blank line.
            break;
        }
        if underline(line) {
            continue;
        }
        let read = match (&g, modern) {
            (Some(g), true) => g
                .readings(line, true)
                .find_map(|cells| modern_row(g, &cells, line_no)),
            _ => old_readings(g.as_ref(), line)
                .iter()
                .find_map(|cells| old_row(cells, line_no, OLD))
                .map(|e| (e, None)),
        };
        match read {
            Some((e, bad_count)) => {
                if let Some(count) = bad_count {
                    out.notes.push(super::get::bad_count_note(line_no, &count));
                }
                events.push(e);
                going_on = true;
            }
            // NB: describe prints a message's line breaks as they are; the
            // rest of the message follows, from column 0. A line like a row
            // (cells at runs of spaces) is never taken for it: a row that
            // does not read is said, not added to the row above it.
            None => match events.last_mut() {
                Some(e) if going_on && stray::may_continue(line) => {
                    e.message.push('\n');
                    e.message.push_str(line.trim_end());
                }
                // The Events table is the last thing describe prints: a
                // prompt, a fence, JSON after it are some other text's.
                _ if stray::foreign(line) => break,
                _ => {
                    going_on = false;
                    out.notes.push(format!(
                        "line {line_no}: not a row of the Events table; skipped"
                    ));
                }
            },
        }
    }
}

/// A row of the 1.10+ layout (`Type Reason Age From Message`) from its
/// cells, with the text of a series count that is not a number.
fn modern_row(g: &Grid, cells: &[String], line_no: usize) -> Option<(TextEvent, Option<String>)> {
    let col = |name: &str| g.index(name).and_then(|i| cells.get(i)).cloned();
    let type_ = col("Type")?;
    let reason = col("Reason")?;
    if reason.is_empty() || reason.contains(' ') || type_.contains(' ') {
        return None;
    }
    let age = col("Age")?;
    let (last, count, first, bad_count) = match parse_describe_age(&age) {
        // Without `(xN over …)` the Event happened once, at Age.
        Some((last, count, first)) => (
            last,
            Some(count.unwrap_or(1)),
            Some(first.unwrap_or(last)),
            None,
        ),
        // NB: read as a message going on, such a row was added to the
        // previous Event's message and its own Event lost. Its count
        // unknown, it is stored as its last occurrence.
        None => {
            let (last, count) = describe_age_bad_count(&age)?;
            (last, None, None, Some(count))
        }
    };
    let (source, host) = split_source(&col("From").unwrap_or_default());
    let (field_path, message) = field_path_prefix(&col("Message").unwrap_or_default());
    let e = TextEvent {
        line: line_no,
        layout: MODERN,
        field_path,
        type_,
        reason,
        message,
        source: Some(source),
        host,
        count,
        first,
        last,
        ..TextEvent::default()
    };
    Some((e, bad_count))
}

/// Every way a row of the old layout may be read, as its eight cells in the
/// order `FirstSeen LastSeen Count From SubObjectPath Type Reason Message`:
/// at its tabs; on the header's grid (`g`, when the header was padded with
/// spaces); at runs of spaces, by shape.
///
/// NB: text pasted from a terminal or a ticket often has its padding
/// squeezed (`  1m  1m  1  {default-scheduler }  Normal  Scheduled  …`): off
/// the grid, and one part short when SubObjectPath is empty. The shape
/// tells: Type (`Normal` or `Warning`) is the fifth part, or the sixth after
/// a SubObjectPath.
fn old_readings(g: Option<&Grid>, line: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    if line.contains('\t') {
        out.extend(tab_cells(line));
    }
    if let Some(cells) = g.and_then(|g| g.aligned(line)) {
        let col = |names: &[&str]| {
            names
                .iter()
                .find_map(|n| g.and_then(|g| g.index(n)))
                .and_then(|i| cells.get(i))
                .cloned()
                .unwrap_or_default()
        };
        out.push(vec![
            col(&["FirstSeen"]),
            col(&["LastSeen"]),
            col(&["Count"]),
            col(&["From"]),
            col(&["SubObjectPath", "SubobjectPath"]),
            col(&["Type"]),
            col(&["Reason"]),
            col(&["Message"]),
        ]);
    }
    let parts = split_wide(line);
    let texts: Vec<String> = parts.iter().map(|p| p.1.clone()).collect();
    out.extend(by_shape(&texts, |i| {
        let rest: String = line.chars().skip(parts[i].0).collect();
        rest.trim_end().to_string()
    }));
    out
}

/// The eight cells of an old-layout row split at tabs: single tabs (as
/// written to a file, an empty SubObjectPath an empty cell) or runs of them
/// (as the terminal's tab stops left them, an empty SubObjectPath vanishing).
pub(super) fn tab_cells(line: &str) -> Option<Vec<String>> {
    let single: Vec<String> = line
        .trim()
        .split('\t')
        .map(|c| c.trim().to_string())
        .collect();
    let cells = if single.len() == 8 {
        single
    } else {
        single.into_iter().filter(|c| !c.is_empty()).collect()
    };
    by_shape(&cells, |i| cells[i..].join(" "))
}

/// The eight cells of an old-layout row from its parts, told by shape (see
/// [`old_readings`]); `rest(i)` is the message from part `i` on.
fn by_shape(parts: &[String], rest: impl Fn(usize) -> String) -> Option<Vec<String>> {
    let t = parts
        .iter()
        .take(6)
        .position(|c| c == "Normal" || c == "Warning")?;
    if !(4..=5).contains(&t) || parts.len() < t + 2 {
        return None;
    }
    let mut cells = parts[..4].to_vec();
    cells.push(if t == 5 {
        parts[4].clone()
    } else {
        String::new()
    });
    cells.push(parts[t].clone());
    cells.push(parts[t + 1].clone());
    cells.push(if parts.len() > t + 2 {
        rest(t + 2)
    } else {
        String::new()
    });
    Some(cells)
}

/// A row of the old layout from its eight cells (see [`old_readings`]).
pub(super) fn old_row(cells: &[String], line: usize, layout: &'static str) -> Option<TextEvent> {
    let [first, last, count, from, path, type_, reason, message] = cells else {
        return None;
    };
    if type_.is_empty() || type_.contains(' ') || reason.is_empty() || reason.contains(' ') {
        return None;
    }
    let (source, host) = split_source(from);
    Some(TextEvent {
        line,
        layout,
        field_path: path.clone(),
        type_: type_.clone(),
        reason: reason.clone(),
        message: message.clone(),
        source: Some(source),
        host,
        count: Some(parse_count(count)?),
        first: Some(parse_age(first)?),
        last: parse_age(last)?,
        ..TextEvent::default()
    })
}

/// Splits off the field path describe (1.10 and later) puts before the
/// message of an Event about part of its object:
/// `spec.containers{app}: Readiness probe failed: …`.
fn field_path_prefix(message: &str) -> (String, String) {
    if let Some((path, rest)) = message.split_once("}: ")
        && let Some((head, _)) = path.split_once('{')
        && !head.is_empty()
        && head
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'[' || b == b']')
    {
        return (format!("{path}}}"), rest.to_string());
    }
    (String::new(), message.to_string())
}

/// `kubectl describe event NAME`: kubectl's generic describer, fields nested
/// by two spaces, times absolute.
fn describe_event(lines: &[&str], offset: usize, out: &mut Parsed) {
    let mut fields: HashMap<String, String> = HashMap::new();
    let mut parents: Vec<(usize, String)> = Vec::new();
    for line in lines {
        let indent = line.len() - line.trim_start().len();
        let Some((key, value)) = line.trim().split_once(':') else {
            continue;
        };
        while parents.last().is_some_and(|(i, _)| *i >= indent) {
            parents.pop();
        }
        let path: String = parents
            .iter()
            .map(|(_, k)| k.as_str())
            .chain([key.trim()])
            .collect::<Vec<_>>()
            .join("/");
        let value = value.trim();
        if value.is_empty() {
            parents.push((indent, key.trim().to_string()));
        }
        fields.entry(path).or_insert_with(|| value.to_string());
    }
    let get = |k: &str| fields.get(k).map(String::as_str).unwrap_or("");
    let at = |k: &str| crate::k8s::event::parse_k8s_time(get(k)).map(When::At);
    let first = at("First Timestamp").or_else(|| at("Event Time"));
    let last = at("Series/Last Observed Time")
        .or_else(|| at("Last Timestamp"))
        .or(first)
        .unwrap_or(When::Unknown);
    let count = get("Series/Count")
        .parse::<i64>()
        .ok()
        .or_else(|| get("Count").parse().ok())
        .filter(|c| *c > 0)
        .unwrap_or(1);
    let source = [
        "Source/Component",
        "Reporting Component",
        "Reporting Controller",
    ]
    .iter()
    .map(|k| get(k))
    .find(|s| !s.is_empty())
    .unwrap_or("");
    let uid = match get("Metadata/UID") {
        "" => get("UID"),
        uid => uid,
    };
    out.events.push(TextEvent {
        line: offset + 1,
        layout: "kubectl describe event",
        kind: get("Involved Object/Kind").to_string(),
        namespace: get("Involved Object/Namespace").to_string(),
        name: get("Involved Object/Name").to_string(),
        field_path: get("Involved Object/Field Path").to_string(),
        object_uid: get("Involved Object/UID").to_string(),
        api_version: get("Involved Object/API Version").to_string(),
        event_namespace: get("Namespace").to_string(),
        event_name: get("Name").to_string(),
        uid: uid.to_string(),
        type_: get("Type").to_string(),
        reason: get("Reason").to_string(),
        message: get("Message").to_string(),
        truncated: false,
        source: Some(source.to_string()),
        host: get("Source/Host").to_string(),
        count: Some(count),
        first: Some(first.unwrap_or(When::Unknown)),
        last,
    });
}

#[cfg(test)]
mod tests {
    use super::super::{When, parse};
    use super::*;

    const POD: &str = "\
Name:             too-big
Namespace:        imp
Priority:         0
Service Account:  default
Node:             <none>
Labels:           <none>
Status:           Pending
Containers:
  app:
    Image:      app:1
QoS Class:       Burstable
Events:
  Type     Reason            Age                From               Message
  ----     ------            ----               ----               -------
  Warning  FailedScheduling  2m (x12 over 5m)   default-scheduler  0/1 nodes are available: 1 Insufficient cpu.
  Normal   Pulled            10s                kubelet            first line
of a message that went on
";

    #[test]
    fn a_pod_and_its_events() {
        let p = parse(POD);
        assert_eq!(p.events.len(), 2, "{p:?}");
        let e = &p.events[0];
        assert_eq!(
            (e.kind.as_str(), e.namespace.as_str(), e.name.as_str()),
            ("Pod", "imp", "too-big")
        );
        assert_eq!(e.count, Some(12));
        assert_eq!(e.first, parse_age("5m"));
        assert_eq!(e.last, parse_age("2m").unwrap());
        assert_eq!(e.source.as_deref(), Some("default-scheduler"));
        assert_eq!(e.line, 15);
        let e = &p.events[1];
        assert_eq!(e.message, "first line\nof a message that went on");
        assert_eq!((e.count, e.first), (Some(1), Some(e.last)));
    }

    /// Regression (issue 27.16): a row whose count is not a number
    /// (`x1e3`) was added to the previous Event's message, and its own Event
    /// was lost without a note.
    #[test]
    fn a_row_whose_count_does_not_parse_stays_its_own_event() {
        let text = "\
Name:             too-big
Namespace:        imp
QoS Class:        Burstable
Events:
  Type     Reason            Age                  From               Message
  ----     ------            ----                 ----               -------
  Warning  FailedScheduling  2m (x12 over 5m)     default-scheduler  0/1 nodes are available: 1 Insufficient cpu.
  Warning  BackOff           90s (x1e3 over 7m)   kubelet            Back-off restarting
  Normal   Pulled            10s                  kubelet            pulled
";
        let p = parse(text);
        assert_eq!(p.events.len(), 3, "{p:?}");
        assert_eq!(
            p.events[0].message,
            "0/1 nodes are available: 1 Insufficient cpu."
        );
        let e = &p.events[1];
        assert_eq!(
            (e.reason.as_str(), e.message.as_str()),
            ("BackOff", "Back-off restarting")
        );
        assert_eq!(e.count, None, "its count is unknown");
        assert_eq!(e.last, parse_age("90s").unwrap());
        assert!(
            p.notes
                .iter()
                .any(|n| n
                    == "line 8: count x1e3 is not a number: stored as one occurrence, its last"),
            "{:?}",
            p.notes
        );
        assert_eq!(p.events[2].reason, "Pulled");
    }

    #[test]
    fn describe_puts_the_field_path_before_the_message() {
        assert_eq!(
            field_path_prefix("spec.containers{app}: Readiness probe failed: x"),
            (
                "spec.containers{app}".into(),
                "Readiness probe failed: x".into()
            )
        );
        assert_eq!(
            field_path_prefix("0/3 nodes are available: {x}: y"),
            (String::new(), "0/3 nodes are available: {x}: y".into())
        );
    }

    #[test]
    fn kinds_from_header_fields_then_sources() {
        let f = |keys: &[&'static str]| keys.iter().map(|k| (*k, "x")).collect::<Vec<_>>();
        let kind = |fields: &[(&str, &str)], sources: &[&str]| {
            let sources: Vec<String> = sources.iter().map(|s| s.to_string()).collect();
            infer_kind(fields, &sources).map(|k| k.0)
        };
        assert_eq!(
            kind(&f(&["Name", "Roles", "Taints"]), &[]).as_deref(),
            Some("Node")
        );
        assert_eq!(
            kind(&f(&["Name", "Selector", "Replicas", "StrategyType"]), &[]).as_deref(),
            Some("Deployment")
        );
        assert_eq!(
            kind(
                &f(&["Name", "Start Time", "Completions", "Parallelism"]),
                &[]
            )
            .as_deref(),
            Some("Job")
        );
        assert_eq!(
            kind(&f(&["Name", "Replicas", "Pods Status"]), &[]).as_deref(),
            Some("ReplicaSet")
        );
        assert_eq!(
            kind(&f(&["Name"]), &["deployment-controller"]).as_deref(),
            Some("Deployment")
        );
        assert_eq!(kind(&f(&["Name", "Labels"]), &["kubelet"]), None);
        assert_eq!(
            kind(&[("Name", "w"), ("Kind", "Widget")], &[]).as_deref(),
            Some("Widget")
        );
    }

    #[test]
    fn an_unknown_kind_is_noted() {
        let p = parse(
            "Name: w\nNamespace: n\nEvents:\n  Type    Reason  Age  From  Message\n  ----    ------  ---  ----  -------\n  Normal  Done    5m   me    ok\n",
        );
        assert_eq!(p.events.len(), 1, "{p:?}");
        assert_eq!(p.events[0].kind, "");
        assert!(
            p.notes[0].contains("could not tell the kind"),
            "{:?}",
            p.notes
        );
    }

    #[test]
    fn the_old_describe_layout() {
        let text = "\
Name:		web-1
Namespace:	default
Node:		node-1/10.0.0.1
Start Time:	Mon, 01 Jan 2018 10:00:00 +0000
Events:
  FirstSeen	LastSeen	Count	From			SubObjectPath		Type		Reason		Message
  ---------	--------	-----	----			-------------		--------	------		-------
";
        // Tabs as the source has them would be expanded by tabwriter: build the
        // expanded form the way a terminal shows it.
        let header = "  FirstSeen  LastSeen  Count  From             SubObjectPath        Type     Reason   Message";
        let dashes = "  ---------  --------  -----  ----             -------------        ----     ------   -------";
        let row = "  10m        1m        4      kubelet, node-1  spec.containers{app}  Warning  BackOff  Back-off restarting failed container";
        let text = format!(
            "{}Events:\n{header}\n{dashes}\n{row}\n",
            text.split("Events:").next().unwrap()
        );
        let p = parse(&text);
        assert_eq!(p.events.len(), 1, "{p:?}");
        let e = &p.events[0];
        assert_eq!(e.kind, "Pod");
        assert_eq!(e.count, Some(4));
        assert_eq!(e.first, parse_age("10m"));
        assert_eq!(e.field_path, "spec.containers{app}");
        assert_eq!(
            (e.source.as_deref(), e.host.as_str()),
            (Some("kubelet"), "node-1")
        );
    }

    /// Regression: the old layout pasted with its padding squeezed (off the
    /// header's grid, and one part short where SubObjectPath is empty) was
    /// no row at all: the Pod "held no Events".
    #[test]
    fn the_old_describe_layout_squeezed_with_an_empty_sub_object_path() {
        let text = "\
Name:         web-1
Namespace:    shop
Node:         node-1/10.0.0.1
Start Time:   Mon, 01 Jan 2018 10:00:00 +0000
Events:
  FirstSeen  LastSeen  Count  From  SubObjectPath  Type  Reason  Message
  ---------  --------  -----  ----  -------------  --------  ------  -------
  1m  1m  1  {default-scheduler }  Normal  Scheduled  Successfully assigned web-1 to node-1
  50s  10s  4  {kubelet node-1}  spec.containers{web}  Warning  BackOff  Back-off restarting  failed container
";
        let p = parse(text);
        assert!(p.notes.is_empty(), "{:?}", p.notes);
        assert_eq!(p.events.len(), 2, "{p:?}");
        let e = &p.events[0];
        assert_eq!(
            (e.kind.as_str(), e.namespace.as_str(), e.name.as_str()),
            ("Pod", "shop", "web-1")
        );
        assert_eq!(e.layout, OLD);
        assert_eq!((e.count, e.first), (Some(1), parse_age("1m")));
        assert_eq!(e.last, parse_age("1m").unwrap());
        assert_eq!(
            (e.source.as_deref(), e.host.as_str(), e.field_path.as_str()),
            (Some("default-scheduler"), "", "")
        );
        assert_eq!(
            (e.reason.as_str(), e.message.as_str()),
            ("Scheduled", "Successfully assigned web-1 to node-1")
        );
        let e = &p.events[1];
        assert_eq!((e.count, e.first), (Some(4), parse_age("50s")));
        assert_eq!(e.last, parse_age("10s").unwrap());
        assert_eq!(
            (e.source.as_deref(), e.host.as_str(), e.field_path.as_str()),
            (Some("kubelet"), "node-1", "spec.containers{web}")
        );
        assert_eq!(e.message, "Back-off restarting  failed container");
        assert_eq!(e.line, 9);
    }

    /// Regression: 1.7 and earlier padded describe's tables with tabs; its
    /// header gave no columns, and the table was "a header kubectl-diag does
    /// not know".
    #[test]
    fn the_old_describe_layout_padded_with_tabs() {
        let text = "Name:\t\tweb-1\nNamespace:\tshop\nNode:\t\tnode-1/10.0.0.1\nEvents:\n\
  FirstSeen\tLastSeen\tCount\tFrom\t\t\tSubObjectPath\t\tType\t\tReason\t\tMessage\n\
  ---------\t--------\t-----\t----\t\t\t-------------\t\t--------\t------\t\t-------\n\
  2m\t\t2m\t\t1\t{default-scheduler }\t\t\t\tNormal\t\tScheduled\tSuccessfully assigned web-1 to node-1\n\
  1m\t\t15s\t\t4\t{kubelet node-1}\tspec.containers{web}\tWarning\t\tBackOff\t\tBack-off restarting failed container\n";
        let p = parse(text);
        assert!(p.notes.is_empty(), "{:?}", p.notes);
        assert_eq!(p.events.len(), 2, "{p:?}");
        assert_eq!(p.events[0].kind, "Pod");
        assert_eq!(p.events[0].source.as_deref(), Some("default-scheduler"));
        let e = &p.events[1];
        assert_eq!(
            (e.count, e.first, e.field_path.as_str()),
            (Some(4), parse_age("1m"), "spec.containers{web}")
        );
        assert_eq!(e.message, "Back-off restarting failed container");
    }

    /// The old layout's table pasted alone, squeezed: its Events, with no
    /// object (said in a note).
    #[test]
    fn the_old_describe_layout_alone() {
        let text = "\
$ kubectl describe pod web-1 | tail -4
Events:
  FirstSeen  LastSeen  Count  From  SubObjectPath  Type  Reason  Message
  ---------  --------  -----  ----  -------------  --------  ------  -------
  1m  1m  1  {default-scheduler }  Normal  Scheduled  Successfully assigned web-1 to node-1
";
        let p = parse(text);
        assert_eq!(p.events.len(), 1, "{p:?}");
        assert_eq!(p.events[0].count, Some(1));
        assert_eq!(
            (p.events[0].kind.as_str(), p.events[0].name.as_str()),
            ("", "")
        );
        assert!(
            p.notes[0].contains("an Events: table with no object above it"),
            "{:?}",
            p.notes
        );
    }

    /// A line like a row that does not read is said and skipped, never
    /// added to the message above it; a prompt ends the table.
    #[test]
    fn a_describe_row_that_does_not_read_is_never_glued() {
        let text = "\
Name:             web-1
Namespace:        shop
Service Account:  default
Events:
  Type     Reason   Age   From     Message
  ----     ------   ----  ----     -------
  Warning  BackOff  5m    kubelet  Back-off restarting failed container
  Warning  BackOff  five minutes  kubelet  x
  Normal   Pulled   1m    kubelet  Container image pulled
$ kubectl get pods
NAME    READY   STATUS    RESTARTS   AGE
web-1   0/1     Running   3          5m
";
        let p = parse(text);
        assert_eq!(p.events.len(), 2, "{p:?}");
        assert_eq!(p.events[0].message, "Back-off restarting failed container");
        assert_eq!(p.events[1].message, "Container image pulled");
        assert_eq!(p.notes, ["line 8: not a row of the Events table; skipped"]);
    }

    #[test]
    fn describe_event_gives_identity_and_absolute_times() {
        let text = "\
Name:             too-big.17e0a1b2c3d4e5f6
Namespace:        imp
Labels:           <none>
Annotations:      <none>
API Version:      v1
Count:            3
Event Time:       <nil>
First Timestamp:  2026-11-29T03:00:00Z
Involved Object:
  API Version:       v1
  Kind:              Pod
  Name:              too-big
  Namespace:         imp
  UID:               1b4e28ba-2fa1-11d2-883f-0016d3cca427
Kind:                Event
Last Timestamp:      2026-11-29T03:05:00Z
Message:             0/1 nodes are available: 1 Insufficient cpu.
Metadata:
  Creation Timestamp:  2026-11-29T03:00:00Z
  UID:                 7c9e6679-7425-40de-944b-e07fc1f90ae7
Reason:                FailedScheduling
Source:
  Component:  default-scheduler
Type:         Warning
Events:       <none>
";
        let p = parse(text);
        assert_eq!(p.events.len(), 1, "{p:?}");
        let e = &p.events[0];
        assert_eq!(e.uid, "7c9e6679-7425-40de-944b-e07fc1f90ae7");
        assert_eq!(e.event_name, "too-big.17e0a1b2c3d4e5f6");
        assert_eq!((e.kind.as_str(), e.name.as_str()), ("Pod", "too-big"));
        assert_eq!(e.count, Some(3));
        assert!(matches!(e.first, Some(When::At(_))));
        assert!(matches!(e.last, When::At(_)));
        assert_eq!(e.source.as_deref(), Some("default-scheduler"));
        assert_eq!(e.message, "0/1 nodes are available: 1 Insufficient cpu.");
    }
}
