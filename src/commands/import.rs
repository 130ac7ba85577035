//! `kubectl diag import FILE…`: Events from what people have at hand.
//!
//! Read by content:
//! - `kubectl get events -o json|yaml` dumps (a List or a single Event) and
//!   JSON Lines, core/v1 and events.k8s.io/v1 alike;
//! - kubectl's text: `get events` tables in every layout since 1.4,
//!   `describe` output (its Events: table) and `describe event` (see
//!   [`crate::k8s::text`]).
//!
//! Everything is stored through the recorder's own normalisation and
//! exactly-once rules under the cluster id given by `--cluster`. Each file is
//! stored in one transaction: a bad file stores nothing, and the other files
//! still import. A JSON dump is read as a stream and stored a chunk at a
//! time inside that transaction ([`stream`]), so memory stays bounded; so
//! is a `kubectl get events` table, a line at a time ([`text::Lines`]).
//! YAML and other text (`describe`, fragments) are parsed whole first.
//!
//! Text rows have no uid and only relative ages. An age becomes the interval
//! it leaves open, counted back from `--taken-at` (or the file's mtime); the
//! row gets a made-up uid, and is matched against Events already stored so
//! that the same Event imported twice, as text or as JSON, is counted once
//! (the rule is in docs/schema.md, "Imports of kubectl text").

pub mod audit;
mod stream;

use std::collections::HashMap;
use std::io::{BufRead, Read, Write};
use std::path::Path;

use anyhow::Context;
use serde_json::Value;
use thiserror::Error;

use crate::k8s::event::WireEvent;
use crate::k8s::text::{self, TextEvent, When};
use crate::model::{EventChange, EventObservation, ObjectRef};
use crate::store::imported::{self, Candidate, TEXT_UID_PREFIX};
use crate::store::writer::{Batch, Writer};
use crate::store::{self, Mode};

/// The cluster imported Events are stored under without `--cluster`.
pub const DEFAULT_CLUSTER: &str = "imported";

/// The formats `import` reads, for the error that says a file is none of them.
pub const ACCEPTED: &str = "import reads `kubectl get events` tables (any layout since 1.4, \
with -o wide or -A, --watch pastes), `kubectl events` tables, `kubectl get events -o json|yaml`, JSON Lines of Events, `kubectl describe` \
output with its Events: table (or that table alone), `kubectl describe event`, and kube-apiserver \
audit logs (JSON lines, an EventList, Cloud Logging or CloudWatch Logs exports)";

/// Why one file could not be imported.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum ImportError {
    #[error("{file}: cannot read it: {reason}")]
    Read { file: String, reason: String },
    #[error("{file}: not valid JSON at line {line}, column {column}: {reason}")]
    Json {
        file: String,
        line: usize,
        column: usize,
        reason: String,
    },
    #[error("{file}: not a format import reads ({ACCEPTED}); read as YAML it fails: {reason}")]
    Unrecognised { file: String, reason: String },
    #[error(
        "{file}: {place} is {what}, not an Event (import takes `kubectl get events` output or JSON Lines of Events)"
    )]
    NotAnEvent {
        file: String,
        place: String,
        what: String,
    },
    #[error("{file}: {place} is not a valid Event: {reason}")]
    BadEvent {
        file: String,
        place: String,
        reason: String,
    },
    #[error(
        "{file}: more than 128 MiB of text, the most import reads whole (YAML, and kubectl text \
         other than `get events` tables, which are read as a stream); split it, or import \
         `kubectl get events -o json`, which is read as a stream"
    )]
    TooLarge { file: String },
    #[error("{file}: holds no Events")]
    Empty { file: String },
}

/// JSON or YAML Events, with what was changed to store them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Objects {
    pub events: Vec<EventObservation>,
    /// Events whose count was above the API's int32 limit, stored at it.
    pub clamped: usize,
    /// Events with no time at all, stored at the time of the import.
    pub untimed: usize,
}

impl Objects {
    /// What `import` says on stderr about how these were stored.
    pub fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        if self.clamped > 0 {
            notes.push(format!(
                "{} Event(s) with a count above {} (an Event's count is an int32): stored with that count",
                self.clamped,
                crate::model::MAX_COUNT
            ));
        }
        if self.untimed > 0 {
            notes.push(format!(
                "{} Event(s) carry no time at all (no firstTimestamp, eventTime, lastTimestamp or \
                 creationTimestamp): stored at the time of this import",
                self.untimed
            ));
        }
        notes
    }
}

/// One file's Events, as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// JSON or YAML Events: uids and exact times.
    Objects(Objects),
    /// kubectl text.
    Text(text::Parsed),
}

/// Parses one file's text; `now` stands in for the time of an Event that has
/// none. Pure: no I/O.
pub fn parse_input(file: &str, text: &str, now: i64) -> Result<Input, ImportError> {
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') || trimmed.starts_with('[') {
        return parse(file, text, now).map(Input::Objects);
    }
    let read = text::parse(text);
    if read.recognised {
        if read.events.is_empty() {
            return Err(ImportError::Empty { file: file.into() });
        }
        return Ok(Input::Text(read));
    }
    parse(file, text, now).map(Input::Objects)
}

/// Parses JSON or YAML into Event observations; an Event with no time at
/// all is placed at `now` (see [`Objects::untimed`]). Pure: no I/O.
pub fn parse(file: &str, text: &str, now: i64) -> Result<Objects, ImportError> {
    let trimmed = text.trim_start();
    let docs: Vec<Value> = if trimmed.starts_with('{') || trimmed.starts_with('[') {
        // One JSON document, or JSON Lines (several documents in a row).
        let mut events = Vec::new();
        let counts = stream::read(file, text.as_bytes(), now, &mut |o| {
            events.push(o);
            Ok(())
        });
        return match counts {
            Ok(c) => Ok(Objects {
                events,
                clamped: c.clamped,
                untimed: c.untimed,
            }),
            Err(stream::Stop::Bad(e)) => Err(e),
            Err(stream::Stop::Sink(e)) => Err(ImportError::Read {
                file: file.into(),
                reason: e.to_string(),
            }),
        };
    } else {
        let docs: Vec<Value> = serde_saphyr::from_str_multiple::<Value, _>(text).map_err(|e| {
            ImportError::Unrecognised {
                file: file.into(),
                reason: e.to_string(),
            }
        })?;
        // NB: YAML reads any line of prose as a string: only mappings and
        // lists can be Events.
        if let Some(doc) = docs
            .iter()
            .find(|d| !matches!(d, Value::Object(_) | Value::Array(_) | Value::Null))
        {
            return Err(ImportError::Unrecognised {
                file: file.into(),
                reason: format!("it is {}, not a mapping", yaml_what(doc)),
            });
        }
        docs
    };
    let mut read = Objects::default();
    for (d, doc) in docs.into_iter().enumerate() {
        let place = |i: Option<usize>| match i {
            Some(i) => format!("document {} item {}", d + 1, i + 1),
            None => format!("document {}", d + 1),
        };
        let items: Vec<(Option<usize>, Value)> = match doc {
            Value::Array(items) => items
                .into_iter()
                .enumerate()
                .map(|(i, v)| (Some(i), v))
                .collect(),
            Value::Object(ref map) if map.contains_key("items") => match doc {
                Value::Object(mut map) => match map.remove("items") {
                    Some(Value::Array(items)) => items
                        .into_iter()
                        .enumerate()
                        .map(|(i, v)| (Some(i), v))
                        .collect(),
                    _ => Vec::new(),
                },
                _ => Vec::new(),
            },
            Value::Null => Vec::new(),
            other => vec![(None, other)],
        };
        for (i, item) in items {
            let kind = item.get("kind").and_then(Value::as_str).unwrap_or("Event");
            if kind != "Event" {
                return Err(ImportError::NotAnEvent {
                    file: file.into(),
                    place: place(i),
                    what: format!("a {kind}"),
                });
            }
            let wire: WireEvent =
                serde_json::from_value(item).map_err(|e| ImportError::BadEvent {
                    file: file.into(),
                    place: place(i),
                    reason: e.to_string(),
                })?;
            read.clamped += usize::from(wire.count_too_high());
            let untimed = wire.has_no_time();
            match wire.into_observation() {
                Some(mut o) => {
                    // NB: left alone it would be stored at 1970-01-01, and
                    // dropped by the first retention.
                    if untimed {
                        (o.first, o.last) = (now, now);
                        read.untimed += 1;
                    }
                    read.events.push(o)
                }
                None => {
                    return Err(ImportError::BadEvent {
                        file: file.into(),
                        place: place(i),
                        reason: "it has neither metadata.uid nor metadata.name".into(),
                    });
                }
            }
        }
    }
    if read.events.is_empty() {
        return Err(ImportError::Empty { file: file.into() });
    }
    Ok(read)
}

fn yaml_what(doc: &Value) -> &'static str {
    match doc {
        Value::String(_) => "a line of text",
        Value::Number(_) => "a number",
        Value::Bool(_) => "a boolean",
        _ => "something else",
    }
}

/// A made-up uid for a text row, from what identifies it (see docs/schema.md):
/// the same row read with the same `--taken-at` gets the same one.
fn text_uid(e: &TextEvent, first: (i64, i64)) -> String {
    let message = e.message.strip_suffix("...").unwrap_or(&e.message);
    let key = [
        e.kind.as_str(),
        &e.namespace,
        &e.name,
        &e.reason,
        e.source.as_deref().unwrap_or(""),
        message.trim(),
        &first.0.to_string(),
        &first.1.to_string(),
    ]
    .join("\u{0}");
    format!("{TEXT_UID_PREFIX}{:016x}", crate::units::fnv1a(&key) as u64)
}

/// A text row made storable, with what matching it needs to know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextObservation {
    pub obs: EventObservation,
    /// The layout showed a source column.
    pub has_source: bool,
    /// The layout showed a count (else `obs.count` is 1: the last occurrence only).
    pub counted: bool,
    /// The text gave the Event's own uid and absolute times (`describe event`):
    /// it is matched as JSON is.
    pub identified: bool,
    pub line: usize,
}

/// Turns the rows of kubectl text into observations, counting ages back from
/// `taken_at` (the capture happened within that interval). Rows whose times
/// are `<unknown>` cannot be placed and are skipped with a note; `namespace`
/// stands in for a table without one.
pub fn text_observations(
    parsed: &text::Parsed,
    taken_at: (i64, i64),
    namespace: Option<&str>,
    notes: &mut Vec<String>,
) -> Vec<TextObservation> {
    let mut unplaced_namespace = 0;
    let out: Vec<TextObservation> = parsed
        .events
        .iter()
        .filter_map(|e| {
            text_observation(
                e.clone(),
                taken_at,
                namespace,
                notes,
                &mut unplaced_namespace,
            )
        })
        .collect();
    if let Some(note) = unplaced_note(unplaced_namespace) {
        notes.push(note);
    }
    if let Some(note) = uncounted_note(out.iter().filter(|o| !o.counted).count()) {
        notes.push(note);
    }
    out
}

/// What is said of the rows whose layout shows no count, if any: each is
/// stored as one occurrence at its last time, so a storm of such a row
/// reads as once (regression: a `kubectl get events` table of a storm of 16
/// was stored, and later told, as one occurrence, with nothing said).
fn uncounted_note(rows: usize) -> Option<String> {
    (rows > 0).then(|| {
        format!(
            "{rows} row(s) show no count (plain `kubectl get events` prints none): each is \
             stored as seen once, at its last time, though it may have happened more often; \
             `kubectl get events -o wide`, `kubectl events` and `kubectl describe` print the count"
        )
    })
}

/// What is said of the rows of a table without a NAMESPACE column, if any.
fn unplaced_note(rows: usize) -> Option<String> {
    (rows > 0).then(|| {
        format!(
            "{rows} row(s) of a table without a NAMESPACE column: stored with an \
             empty namespace; pass -n NAMESPACE (the one it was taken in) to place them"
        )
    })
}

/// One row of kubectl text as an observation (see [`text_observations`]);
/// `None`, with a note, when it cannot be placed in time. A row with no
/// namespace to put it in adds one to `unplaced_namespace`.
pub fn text_observation(
    mut e: TextEvent,
    taken_at: (i64, i64),
    namespace: Option<&str>,
    notes: &mut Vec<String>,
    unplaced_namespace: &mut usize,
) -> Option<TextObservation> {
    let Some(last) = e.last.span(taken_at) else {
        notes.push(format!(
            "line {}: last seen {}: the Event cannot be placed in time; skipped",
            e.line, "<unknown>"
        ));
        return None;
    };
    let first = match e.first {
        None => last,
        Some(when) => match when.span(taken_at) {
            Some(first) => first,
            None if e.count == Some(1) => last,
            None => {
                notes.push(format!(
                    "line {}: first seen <unknown>: the Event cannot be placed in time; skipped",
                    e.line
                ));
                return None;
            }
        },
    };
    if e.count.is_some_and(|c| c > crate::model::MAX_COUNT) {
        notes.push(format!(
            "line {}: count {} is above {} (an Event's count is an int32): stored with that count",
            e.line,
            e.count.unwrap_or_default(),
            crate::model::MAX_COUNT
        ));
    }
    if e.event_namespace.is_empty() {
        match namespace {
            Some(ns) => {
                e.event_namespace = ns.to_string();
                if !text::cluster_scoped(&e.kind) {
                    e.namespace = ns.to_string();
                }
            }
            None => *unplaced_namespace += 1,
        }
    }
    let first = (first.0.min(last.0), first.1.min(last.1));
    let exact = matches!(e.last, When::At(_));
    let identified = !e.uid.is_empty() && exact;
    let uid = if e.uid.is_empty() {
        text_uid(&e, first)
    } else {
        std::mem::take(&mut e.uid)
    };
    Some(TextObservation {
        identified,
        has_source: e.source.is_some(),
        counted: e.count.is_some(),
        line: e.line,
        obs: EventObservation {
            uid,
            namespace: e.event_namespace,
            name: e.event_name,
            resource_version: String::new(),
            involved: ObjectRef {
                api_version: e.api_version,
                kind: e.kind,
                namespace: e.namespace,
                name: e.name,
                uid: e.object_uid,
                field_path: e.field_path,
            },
            related: None,
            reason: e.reason,
            type_: e.type_,
            message: crate::k8s::event::cut_message(e.message),
            action: String::new(),
            reporting_controller: e.source.unwrap_or_default(),
            reporting_instance: String::new(),
            source_host: e.host,
            first: first.0,
            last: last.1,
            count: e.count.unwrap_or(1).clamp(1, crate::model::MAX_COUNT),
            last_from: (!exact && last.0 != last.1).then_some(last.0),
        },
    })
}

/// Whether two messages are the same, allowing for one cut by kubectl (`...`).
pub fn same_message(a: &str, b: &str) -> bool {
    let (a, b) = (a.trim(), b.trim());
    a == b
        || a.strip_suffix("...")
            .is_some_and(|p| b.starts_with(p.trim_end()))
        || b.strip_suffix("...")
            .is_some_and(|p| a.starts_with(p.trim_end()))
}

/// Whether a stored Event may be the Event an observation is of: the same
/// reporting controller (when both name one), a message the same but for
/// kubectl's cut, and times that overlap.
fn matches(c: &Candidate, o: &EventObservation, check_source: bool) -> bool {
    let source_ok = !check_source
        || c.controller.is_empty()
        || o.reporting_controller.is_empty()
        || c.controller == o.reporting_controller;
    source_ok
        && c.messages.iter().any(|m| same_message(m, &o.message))
        && c.first <= o.last
        && o.first <= c.last
}

/// What to do with one observation, against what is stored.
enum Plan {
    Store(Box<EventObservation>),
    /// Stored, and known not to be stored under its uid (no look-up found it).
    New(Box<EventObservation>),
    /// Stored already (as text or JSON), with as high a count.
    Known,
}

/// The stored Events that `o` may be: same object and reason.
fn candidates(
    writer: &Writer,
    o: &EventObservation,
) -> Result<Vec<imported::Candidate>, store::StoreError> {
    writer.recording().import_candidates(
        writer.cluster(),
        (&o.involved.kind, &o.involved.namespace, &o.involved.name),
        &o.reason,
    )
}

/// What planning found of the Events this file stored itself, in an earlier
/// chunk: rows that are one of them are not counted again, and what a
/// replaced one stored is taken off what the file says it stored.
#[derive(Debug, Default)]
struct Own {
    /// Events with a higher id were stored by this file.
    before: i64,
    /// Rows that are an Event this file stored already.
    events: usize,
    /// Occurrences of this file's Events that a later row replaced.
    occurrences: u64,
}

impl Own {
    fn new(before: i64) -> Own {
        Own {
            before,
            ..Own::default()
        }
    }

    /// A row is `c`: counted once, whichever row of the file stays.
    fn is(&mut self, c: &Candidate) {
        if c.id > self.before {
            self.events += 1;
        }
    }

    /// `c` is replaced by a row of the file; `occurrences` were deleted with it.
    fn replaced(&mut self, c: &Candidate, occurrences: u64) {
        if c.id > self.before {
            self.events += 1;
            self.occurrences += occurrences;
        }
    }
}

/// Decides, for one text row, whether it is an Event stored already. A
/// text-only Event it outcounts is replaced by it; an Event with a uid of its
/// own takes any occurrences the row adds.
fn plan_text(
    writer: &Writer,
    t: &TextObservation,
    own: &mut Own,
) -> Result<Plan, store::StoreError> {
    let o = &t.obs;
    let found = candidates(writer, o)?;
    let Some(c) = found
        .iter()
        .filter(|c| c.uid == o.uid || matches(c, o, t.has_source))
        .max_by_key(|c| (c.uid == o.uid, c.last))
    else {
        return Ok(Plan::Store(Box::new(o.clone())));
    };
    if o.count <= c.count {
        own.is(c);
        return Ok(Plan::Known);
    }
    if c.from_text() && t.counted {
        // Both are text; this one has seen more: its row replaces the other's.
        let deleted = writer.recording().delete_event(c.id)?;
        own.replaced(c, deleted);
        return Ok(Plan::Store(Box::new(o.clone())));
    }
    // The rest happened after what is stored: stored under that Event.
    own.is(c);
    let mut under = o.clone();
    under.uid = c.uid.clone();
    under.name = c.name.clone();
    under.namespace = c.namespace.clone();
    Ok(Plan::Store(Box::new(under)))
}

/// Decides, for one Event with a uid (JSON, YAML, describe event), whether an
/// Event imported from text is the same one: replaced when this one counts
/// as many, else this one adds nothing.
fn plan_object(
    writer: &Writer,
    o: &EventObservation,
    own: &mut Own,
) -> Result<Plan, store::StoreError> {
    let found = candidates(writer, o)?;
    for c in found
        .iter()
        .filter(|c| c.from_text() && matches(c, o, true))
    {
        if o.count < c.count {
            own.is(c);
            return Ok(Plan::Known);
        }
        let deleted = writer.recording().delete_event(c.id)?;
        own.replaced(c, deleted);
    }
    Ok(Plan::Store(Box::new(o.clone())))
}

/// Within one file, the same Event shown twice (a describe and a table of the
/// same incident): the row with the higher count (else the earlier) stays.
///
/// NB: rows are grouped by what must be equal (object and reason), and only a
/// row's group is searched: scanning every kept row made a `get events -A`
/// table quadratic (80,000 rows took 86 s). A message may match another cut
/// by kubectl (`...`), so messages are compared within the group.
fn dedupe(rows: Vec<TextObservation>) -> Vec<TextObservation> {
    let mut kept: Vec<TextObservation> = Vec::with_capacity(rows.len());
    let mut groups: HashMap<(String, String, String, String), Vec<usize>> = HashMap::new();
    for row in rows {
        let key = (
            row.obs.involved.kind.clone(),
            row.obs.involved.namespace.clone(),
            row.obs.involved.name.clone(),
            row.obs.reason.clone(),
        );
        let group = groups.entry(key).or_default();
        let same = group.iter().copied().find(|&i| {
            let k = &kept[i];
            let (a, b) = (&k.obs, &row.obs);
            same_message(&a.message, &b.message)
                && (!k.has_source
                    || !row.has_source
                    || a.reporting_controller == b.reporting_controller)
                && a.first <= b.last
                && b.first <= a.last
        });
        match same {
            Some(i) if row.obs.count > kept[i].obs.count => kept[i] = row,
            Some(_) => {}
            None => {
                group.push(kept.len());
                kept.push(row);
            }
        }
    }
    kept
}

/// The file, or standard input for `-`, buffered; gunzipped when it is
/// gzip (by content, whatever its name: a CloudWatch export, a rotated log).
fn open_input(file: &str) -> Result<Box<dyn BufRead>, ImportError> {
    let mut reader: Box<dyn BufRead> = if file == "-" {
        Box::new(std::io::BufReader::new(std::io::stdin()))
    } else {
        std::fs::File::open(Path::new(file))
            .map(|f| Box::new(std::io::BufReader::with_capacity(1 << 16, f)) as Box<dyn BufRead>)
            .map_err(|e| ImportError::Read {
                file: file.into(),
                reason: e.to_string(),
            })?
    };
    let gzip = reader
        .fill_buf()
        .is_ok_and(|b| b.starts_with(&[0x1f, 0x8b]));
    if gzip {
        // NB: MultiGzDecoder: rotated and concatenated logs are several members.
        let inflated = flate2::bufread::MultiGzDecoder::new(reader);
        reader = Box::new(std::io::BufReader::with_capacity(1 << 16, inflated));
    }
    Ok(reader)
}

/// The files under a folder, at any depth, in name order.
fn files_under(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut entries: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            out.extend(files_under(&p));
        } else if p.is_file() {
            out.push(p);
        }
    }
    out
}

/// Whether the input is an audit log (any shape [`audit`] reads), from its
/// first buffered bytes: its first document when the first line holds it,
/// else the marks only an audit shape has (a compact array on one line, a
/// document cut by the buffer, gcloud's YAML). Only peeks.
fn starts_like_audit(reader: &mut Box<dyn BufRead>) -> bool {
    let Ok(buf) = reader.fill_buf() else {
        return false;
    };
    let head = String::from_utf8_lossy(&buf[..buf.len().min(1 << 16)]);
    let head = head.trim_start_matches('\u{feff}');
    let first = head
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default()
        .trim();
    let first = audit::strip_prefix(first);
    if crate::k8s::audit::looks_like_audit(first) || audit::csv_header(first) {
        return true;
    }
    let json = first.starts_with(['{', '[']);
    let marked = head.contains("\"audit.k8s.io/v1")
        || head.contains("\"protoPayload\"")
        || head.contains("\\\"auditID\\\"")
        || head.contains("\"auditID\"")
        || head.contains("\"AuditId\"");
    // gcloud's YAML: `protoPayload:` documents of the k8s.io service.
    let yaml = !json
        && head.contains("protoPayload:")
        && (head.contains("serviceName: k8s.io") || head.contains("methodName: io.k8s."));
    (json && marked) || yaml
}

/// Whether the input's first non-blank byte opens a JSON object or array.
/// Only peeks: nothing is consumed (text keeps its line numbers).
fn starts_like_json(reader: &mut Box<dyn BufRead>) -> bool {
    reader.fill_buf().is_ok_and(|buf| {
        buf.iter()
            .find(|b| !b.is_ascii_whitespace())
            .is_some_and(|b| matches!(b, b'{' | b'['))
    })
}

/// The most of kubectl text or YAML read whole (JSON and `get events` tables
/// are streamed, whatever their size). NB: without it `import /dev/zero` or `yes | import -` grew
/// without bound (3.4 GB in 7 s); 100 MB of `kubectl get events` text fits.
pub const MAX_WHOLE: u64 = 128 * 1024 * 1024;

/// The next line of `reader` in `buf`, without its line break (`\n` or
/// `\r\n`, as [`str::lines`] splits); `None` at the end. A line that does not
/// fit in `room` bytes is [`ImportError::TooLarge`]: reading stops there.
fn next_line<'b>(
    file: &str,
    reader: &mut dyn BufRead,
    buf: &'b mut Vec<u8>,
    room: u64,
) -> Result<Option<&'b str>, ImportError> {
    buf.clear();
    let n = reader
        .take(room.saturating_add(1))
        .read_until(b'\n', buf)
        .map_err(|e| ImportError::Read {
            file: file.into(),
            reason: e.to_string(),
        })?;
    if n == 0 {
        return Ok(None);
    }
    if n as u64 > room {
        return Err(ImportError::TooLarge { file: file.into() });
    }
    if buf.last() == Some(&b'\n') {
        buf.pop();
        if buf.last() == Some(&b'\r') {
            buf.pop();
        }
    }
    std::str::from_utf8(buf)
        .map(Some)
        .map_err(|_| ImportError::Read {
            file: file.into(),
            reason: "stream did not contain valid UTF-8".into(),
        })
}

/// What places the rows of a text file: the command line's flags.
struct TextArgs<'a> {
    given: Option<(i64, i64)>,
    /// `-n`: the namespace of a table without a NAMESPACE column.
    namespace: Option<&'a str>,
    /// `--object`: whose rows a fragment without its object holds.
    object: Option<&'a (String, String)>,
    now: i64,
    cluster: &'a str,
}

/// Bits of a fixed size said to hold a key once [`Seen::add`]ed (a Bloom
/// filter): never a false no, now and then a false yes.
const SEEN_BITS: usize = 1 << 25;

/// What the rows stored so far of a file may be matched by: their object,
/// reason and message. A row whose object, reason and message no stored row
/// has cannot be the same Event as any ([`same_message`]), so into a cluster
/// that held nothing before the file it is stored without a look-up.
///
/// NB: looking every row up among the Events of its object and reason made
/// a table of many Events per object quadratic (a 100 MB table has hundreds
/// per Pod), and an exact set of what was stored grows with the file; this
/// is 4 MiB whatever its size. A false yes only costs the look-up.
struct Seen {
    bits: Vec<u64>,
}

impl Seen {
    fn new() -> Seen {
        Seen {
            bits: vec![0; SEEN_BITS / 64],
        }
    }

    /// The message as [`same_message`] compares it, and whether kubectl cut it.
    fn message(o: &EventObservation) -> (&str, bool) {
        let m = o.message.trim();
        (m, m.ends_with("..."))
    }

    fn key(o: &EventObservation, message: Option<&str>) -> u64 {
        use std::hash::BuildHasher;
        let i = &o.involved;
        foldhash::quality::FixedState::with_seed(27).hash_one((
            &i.kind,
            &i.namespace,
            &i.name,
            &o.reason,
            message,
        ))
    }

    /// Where a key's bits are: four, by double hashing.
    fn probes(key: u64) -> impl Iterator<Item = usize> {
        let step = (key >> 32) | 1;
        (0..4u64).map(move |i| (key.wrapping_add(i.wrapping_mul(step)) % SEEN_BITS as u64) as usize)
    }

    fn set(&mut self, key: u64) {
        for b in Self::probes(key) {
            self.bits[b / 64] |= 1 << (b % 64);
        }
    }

    fn has(&self, key: u64) -> bool {
        Self::probes(key).all(|b| self.bits[b / 64] & (1 << (b % 64)) != 0)
    }

    /// A row was stored (as an Event or under one).
    fn add(&mut self, o: &EventObservation) {
        let (message, cut) = Self::message(o);
        // A cut message matches any that begins like it: every later row of
        // this object and reason is looked up.
        if cut {
            self.set(Self::key(o, None));
        }
        self.set(Self::key(o, Some(message)));
    }

    /// Whether a stored row may be the same Event as `o`.
    fn may_match(&self, o: &EventObservation) -> bool {
        let (message, cut) = Self::message(o);
        cut || self.has(Self::key(o, None)) || self.has(Self::key(o, Some(message)))
    }
}

/// Rows of kubectl text stored a chunk at a time inside the file's one
/// transaction, as they are read: what is held is the chunk being decided
/// (at most [`CHUNK`] rows). Within a chunk the same Event shown twice is
/// told by [`dedupe`]; across chunks, by the store, where the earlier chunk
/// already is (the same rule, [`plan_text`]: the row with the higher count
/// stays), so that the file holds nothing twice whatever its size.
struct TextStore<'w, 'a> {
    batch: Batch<'w>,
    file: &'a str,
    args: &'a TextArgs<'a>,
    /// When the ages count back from, once a row needed it.
    at: Option<(i64, i64)>,
    chunk: Vec<TextObservation>,
    layouts: Vec<&'static str>,
    /// Events with a higher id were stored by this file.
    before: i64,
    /// The cluster held nothing when the file began: a row need be looked
    /// up only when [`Seen`] says a row of the file may match it.
    fresh: bool,
    seen: Seen,
    /// Rows read (before any is found to be another's).
    rows: usize,
    /// Events the file holds, and the occurrences stored of them.
    events: usize,
    occurrences: u64,
    unplaced_namespace: usize,
    /// Rows whose layout shows no count (see [`uncounted_note`]).
    uncounted: usize,
}

impl<'w, 'a> TextStore<'w, 'a> {
    fn begin(
        writer: &'w mut Writer,
        file: &'a str,
        args: &'a TextArgs<'a>,
    ) -> anyhow::Result<TextStore<'w, 'a>> {
        let batch = writer.begin()?;
        let before = batch.recording().events_before()?;
        let fresh = batch.recording().cluster_empty(batch.cluster())?;
        Ok(TextStore {
            batch,
            file,
            args,
            at: None,
            chunk: Vec::with_capacity(CHUNK),
            layouts: Vec::new(),
            before,
            fresh,
            seen: Seen::new(),
            rows: 0,
            events: 0,
            occurrences: 0,
            unplaced_namespace: 0,
            uncounted: 0,
        })
    }

    /// Takes what the reader has read so far: its notes said, its Events
    /// stored a chunk at a time.
    fn take(&mut self, parsed: &mut text::Parsed, err: &mut dyn Write) -> anyhow::Result<()> {
        for note in parsed.notes.drain(..) {
            writeln!(err, "{}: {note}", self.file)?;
        }
        for e in parsed.events.drain(..) {
            self.event(e, err)?;
        }
        Ok(())
    }

    fn event(&mut self, mut e: TextEvent, err: &mut dyn Write) -> anyhow::Result<()> {
        self.rows += 1;
        if let Some((kind, name)) = self.args.object
            && e.kind.is_empty()
            && e.name.is_empty()
        {
            e.kind = kind.clone();
            e.name = name.clone();
        }
        if !self.layouts.contains(&e.layout) {
            self.layouts.push(e.layout);
        }
        // NB: an exact time (`describe event`) does not depend on when the
        // text was taken; only an age asks for it (and says so, once).
        let relative =
            matches!(e.last, When::Ago { .. }) || matches!(e.first, Some(When::Ago { .. }));
        let at = match (relative, self.at) {
            (false, _) => (self.args.now, self.args.now),
            (true, Some(at)) => at,
            (true, None) => *self.at.insert(taken_at(self.file, self.args.given, err)?),
        };
        let mut notes = Vec::new();
        let row = text_observation(
            e,
            at,
            self.args.namespace,
            &mut notes,
            &mut self.unplaced_namespace,
        );
        for note in &notes {
            writeln!(err, "{}: {note}", self.file)?;
        }
        if let Some(row) = row {
            self.uncounted += usize::from(!row.counted);
            self.chunk.push(row);
            if self.chunk.len() >= CHUNK {
                self.store_chunk()?;
            }
        }
        Ok(())
    }

    /// Stores the chunk: every decision on it is made before any of it is
    /// stored (see `store_chunk` for JSON).
    fn store_chunk(&mut self) -> anyhow::Result<()> {
        let file = self.file;
        // NB: rows the writer holds back go in first: the chunk's rows are
        // looked up among them, and deciding may delete an Event.
        self.batch
            .flush()
            .with_context(|| format!("storing {file}"))?;
        let rows = dedupe(std::mem::take(&mut self.chunk));
        let mut own = Own::new(self.before);
        let mut plans = Vec::with_capacity(rows.len());
        for t in &rows {
            let plan = if t.identified {
                plan_object(&self.batch, &t.obs, &mut own)
            } else if self.fresh && !self.seen.may_match(&t.obs) {
                Ok(Plan::New(Box::new(t.obs.clone())))
            } else {
                plan_text(&self.batch, t, &mut own)
            };
            let plan = plan.with_context(|| format!("storing {file}"))?;
            if let Plan::Store(o) | Plan::New(o) = &plan {
                self.seen.add(o);
            }
            plans.push(plan);
        }
        self.batch
            .forget()
            .with_context(|| format!("storing {file}"))?;
        for plan in plans {
            let applied = match plan {
                Plan::Store(o) => self.batch.apply(&EventChange::Upsert(o)),
                Plan::New(o) => self.batch.apply_new(&o),
                Plan::Known => continue,
            };
            self.occurrences += applied
                .with_context(|| format!("storing {file}"))?
                .occurrences;
        }
        self.events += rows.len().saturating_sub(own.events);
        self.occurrences = self.occurrences.saturating_sub(own.occurrences);
        self.chunk = rows;
        self.chunk.clear();
        Ok(())
    }

    /// The file has ended: the last chunk is stored and the transaction
    /// committed. Returns 1 for a file that held no Events (nothing stored).
    fn finish(mut self, out: &mut dyn Write, err: &mut dyn Write) -> anyhow::Result<usize> {
        let file = self.file;
        if self.rows == 0 {
            drop(self.batch);
            let e = ImportError::Empty { file: file.into() };
            writeln!(err, "error: {e}; nothing of it was stored")?;
            return Ok(1);
        }
        self.store_chunk()?;
        if let Some(note) = unplaced_note(self.unplaced_namespace) {
            writeln!(err, "{file}: {note}")?;
        }
        if let Some(note) = uncounted_note(self.uncounted) {
            writeln!(err, "{file}: {note}")?;
        }
        self.batch
            .commit()
            .with_context(|| format!("storing {file}"))?;
        self.layouts.sort_unstable();
        writeln!(
            out,
            "{file}: {} Event(s), {} new occurrence(s) stored under cluster {:?} (read as {})",
            self.events,
            self.occurrences,
            self.args.cluster,
            self.layouts.join(", ")
        )?;
        Ok(0)
    }
}

/// Imports kubectl text as it is read, a line at a time (see
/// [`text::Lines`]): a `get events` table is stored a chunk of rows at a
/// time, whatever its length. Other text is held until it ends (at most
/// [`MAX_WHOLE`]); a file with no table is read whole, as YAML when it is not
/// kubectl's text. One transaction: a bad file stores nothing. Returns 1 for
/// a file refused, 0 for one stored.
fn import_text(
    writer: &mut Writer,
    file: &str,
    mut reader: Box<dyn BufRead>,
    args: &TextArgs<'_>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> anyhow::Result<usize> {
    let mut store = TextStore::begin(writer, file, args)?;
    let mut lines = text::Lines::new();
    let mut parsed = text::Parsed::default();
    let mut buf = Vec::new();
    loop {
        let room = MAX_WHOLE.saturating_sub(lines.held() as u64);
        match next_line(file, &mut reader, &mut buf, room) {
            Ok(Some(line)) => lines.line(line, &mut parsed),
            Ok(None) => break,
            Err(e) => {
                drop(store);
                writeln!(err, "error: {e}; nothing of it was stored")?;
                return Ok(1);
            }
        }
        if lines.tables() {
            store.take(&mut parsed, err)?;
        }
    }
    if lines.tables() {
        lines.finish(&mut parsed);
        store.take(&mut parsed, err)?;
        return store.finish(out, err);
    }
    let whole = lines.into_whole().unwrap_or_default();
    match parse_input(file, &whole, args.now) {
        Ok(Input::Text(mut parsed)) => {
            drop(whole);
            store.take(&mut parsed, err)?;
            store.finish(out, err)
        }
        Ok(Input::Objects(read)) => {
            drop(whole);
            import_objects(store.batch, file, read, args.cluster, out, err)
        }
        Err(e) => {
            drop(store);
            writeln!(err, "error: {e}; nothing of it was stored")?;
            Ok(1)
        }
    }
}

/// Stores YAML Events (read whole) in `batch`: every decision is made before
/// any of them is stored, as for a chunk of JSON.
fn import_objects(
    mut batch: Batch<'_>,
    file: &str,
    read: Objects,
    cluster: &str,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> anyhow::Result<usize> {
    for note in read.notes() {
        writeln!(err, "{file}: {note}")?;
    }
    let events = read.events.len();
    let mut chunk = read.events;
    let texts = batch.recording().has_text_events(batch.cluster())?;
    let occurrences = store_chunk(&mut batch, &mut chunk, texts)
        .and_then(|n| Ok(batch.commit().map(|()| n)?))
        .with_context(|| format!("storing {file}"))?;
    writeln!(
        out,
        "{file}: {events} Event(s), {occurrences} new occurrence(s) stored under cluster {cluster:?}"
    )?;
    Ok(0)
}

/// Events stored a chunk at a time while a JSON dump is read.
const CHUNK: usize = 1_000;

/// Stores one chunk of JSON Events: every decision on the chunk is made
/// before any of it is stored, as for a whole file (see `run`).
fn store_chunk(
    batch: &mut Batch<'_>,
    chunk: &mut Vec<EventObservation>,
    texts: bool,
) -> anyhow::Result<u64> {
    let mut plans = Vec::with_capacity(chunk.len());
    if texts {
        // NB: rows the writer holds back go in first: deciding may delete an
        // Event imported from text, after which the caches are dropped.
        batch.flush()?;
        for o in chunk.iter() {
            plans.push(plan_object(batch, o, &mut Own::new(i64::MAX))?);
        }
        batch.forget()?;
    } else {
        // NB: with no Event from text in the cluster there is nothing to
        // replace: looking each Event up among its object's (every Event
        // of a JSON dump is one) made a dump quadratic.
        let mut occurrences = 0;
        for o in chunk.drain(..) {
            occurrences += batch.apply(&EventChange::Upsert(Box::new(o)))?.occurrences;
        }
        return Ok(occurrences);
    }
    let mut occurrences = 0;
    for plan in plans {
        let (Plan::Store(o) | Plan::New(o)) = plan else {
            continue;
        };
        occurrences += batch.apply(&EventChange::Upsert(o))?.occurrences;
    }
    chunk.clear();
    Ok(occurrences)
}

/// Imports a JSON dump (a List, an Event, JSON Lines) as it is read, in one
/// transaction: memory stays bounded whatever the file's size, and a bad
/// item anywhere rolls back everything of the file. Returns 1 for a file
/// refused, 0 for one stored.
fn import_json(
    writer: &mut Writer,
    file: &str,
    reader: Box<dyn BufRead>,
    now: i64,
    cluster: &str,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> anyhow::Result<usize> {
    let mut batch = writer.begin()?;
    let texts = batch.recording().has_text_events(batch.cluster())?;
    let mut chunk = Vec::with_capacity(CHUNK);
    let mut occurrences = 0;
    let read = stream::read(file, reader, now, &mut |o| {
        chunk.push(o);
        if chunk.len() >= CHUNK {
            occurrences += store_chunk(&mut batch, &mut chunk, texts)?;
        }
        Ok(())
    });
    let counts = match read {
        Ok(counts) => counts,
        Err(stream::Stop::Bad(e)) => {
            drop(batch);
            writeln!(err, "error: {e}; nothing of it was stored")?;
            return Ok(1);
        }
        Err(stream::Stop::Sink(e)) => return Err(e.context(format!("storing {file}"))),
    };
    let stored = store_chunk(&mut batch, &mut chunk, texts)
        .and_then(|n| Ok(batch.commit().map(|()| n)?))
        .with_context(|| format!("storing {file}"))?;
    occurrences += stored;
    let notes = Objects {
        events: Vec::new(),
        clamped: counts.clamped,
        untimed: counts.untimed,
    }
    .notes();
    for note in &notes {
        writeln!(err, "{file}: {note}")?;
    }
    writeln!(
        out,
        "{file}: {} Event(s), {occurrences} new occurrence(s) stored under cluster {cluster:?}",
        counts.events
    )?;
    Ok(0)
}

/// The moment a file's ages count back from: `--taken-at`, else its
/// modification time (standard input: now), said on stderr.
fn taken_at(
    file: &str,
    given: Option<(i64, i64)>,
    err: &mut dyn Write,
) -> anyhow::Result<(i64, i64)> {
    if let Some(t) = given {
        return Ok(t);
    }
    let mtime = (file != "-")
        .then(|| std::fs::metadata(file).and_then(|m| m.modified()).ok())
        .flatten()
        .map(chrono::DateTime::<chrono::Utc>::from);
    let (at, what) = match mtime {
        Some(t) => (t, "its modification time"),
        None => (
            chrono::Utc::now(),
            "now (standard input has no modification time)",
        ),
    };
    writeln!(
        err,
        "{file}: its ages count back from {what}, {}; pass --taken-at TIME to say when it was taken",
        at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    )?;
    let at = at.timestamp_millis();
    Ok((at, at))
}

/// What `import` was asked, its flags resolved once (`cli::resolve`).
#[derive(Debug, Clone, Default)]
pub struct ImportOptions {
    /// The files, `-` for standard input.
    pub files: Vec<String>,
    /// `-n`: the namespace kubectl text was taken in.
    pub namespace: Option<String>,
    /// `--cluster`: where every imported Event goes.
    pub cluster: Option<String>,
    /// `--taken-at`: the span the text's ages count back from.
    pub taken_at: Option<(i64, i64)>,
    /// `--object KIND/NAME`: whose Events text that does not say holds.
    pub object: Option<(String, String)>,
    /// `--configmap-values`.
    pub configmap_values: bool,
}

pub fn run(
    history: &super::source::Source,
    args: &ImportOptions,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> anyhow::Result<u8> {
    let given = args.taken_at;
    let path = history.path().to_path_buf();
    let mut conn = store::Recording::open(&path, Mode::Write)?;
    // A recorder writing this file holds its transaction for up to a minute:
    // while the file is locked, ask it to commit (`store::ask`).
    store::ask::ask_while_busy(conn.connection_mut(), &path)
        .map_err(|e| store::StoreError::query("busy handler", &path, e))?;
    let now = chrono::Utc::now().timestamp_millis();
    let cluster_name = args.cluster.as_deref().unwrap_or(DEFAULT_CLUSTER);
    let keep = crate::k8s::object::Decode {
        configmap_values: args.configmap_values,
        ..Default::default()
    };
    let mut failed = 0;
    // Audit logs are stored after every other file, all together in time
    // order; the rest one by one. NB: opened first, so that an import of
    // audit logs alone registers no cluster it does not store into.
    let mut logs: Vec<audit::Log> = Vec::new();
    let mut others: Vec<(&String, Box<dyn BufRead>)> = Vec::new();
    for file in &args.files {
        if file != "-" && Path::new(file).is_dir() {
            // A folder of logs (`oc adm must-gather`'s audit_logs, a bucket
            // copied down): every audit log in it; anything else said and left.
            for path in files_under(Path::new(file)) {
                let name = path.display().to_string();
                match open_input(&name) {
                    Ok(mut reader) => {
                        if reader.fill_buf().is_ok_and(|b| b.is_empty()) {
                            continue;
                        }
                        if starts_like_audit(&mut reader) {
                            logs.push(audit::Log { name, reader });
                        } else {
                            writeln!(err, "note: {name}: not an audit log; skipped")?;
                        }
                    }
                    Err(e) => writeln!(err, "note: {e}; skipped")?,
                }
            }
            continue;
        }
        match open_input(file) {
            Ok(mut reader) => {
                if starts_like_audit(&mut reader) {
                    logs.push(audit::Log {
                        name: file.clone(),
                        reader,
                    });
                } else {
                    others.push((file, reader));
                }
            }
            Err(e) => {
                writeln!(err, "error: {e}; nothing of it was stored")?;
                failed += 1;
            }
        }
    }
    // An audit log may go into a recorded cluster (its writes are matched by
    // resourceVersion); anything else is kept apart from recorded clusters.
    let recorded = conn.recorded_cluster_named(cluster_name)?;
    let cluster = if others.is_empty() {
        0
    } else {
        match &recorded {
            Some(c) => match conn.clusters(Some(&c.uid))?.first() {
                Some(row) => row.0,
                None => conn.register_cluster(&c.uid, &c.label, "", now)?,
            },
            None => conn.register_cluster(cluster_name, cluster_name, "", now)?,
        }
    };
    let mut writer = Writer::new(conn, cluster);
    for (file, mut reader) in others {
        if let Some(c) = &recorded {
            writeln!(
                err,
                "error: --cluster {:?} names the recorded cluster {} (uid {}) in {}; imported Events \
                 are kept apart from recorded ones (only an audit log joins a recorded cluster): \
                 pass another --cluster name; nothing of {file} was stored",
                cluster_name,
                c.label,
                c.uid,
                path.display()
            )?;
            failed += 1;
            continue;
        }
        if starts_like_json(&mut reader) {
            failed += import_json(&mut writer, file, reader, now, cluster_name, out, err)?;
            continue;
        }
        let text_args = TextArgs {
            given,
            namespace: args.namespace.as_deref(),
            object: args.object.as_ref(),
            now,
            cluster: cluster_name,
        };
        failed += import_text(&mut writer, file, reader, &text_args, out, err)?;
    }
    if !logs.is_empty() {
        // NB: a recorder writing this file holds what it received in an open
        // transaction for up to --commit-every; asked, it commits, so that what
        // this import merges with (an audit log's recorded versions) is all
        // there. Waiting for its lock is the busy handler's (`ask_while_busy`).
        let _ = crate::store::ask::ask_to_commit(&path);
        let target = audit::Target {
            path: &path,
            cluster: args.cluster.as_deref(),
            keep,
        };
        failed += audit::import(writer.recording(), logs, &target, out, err)?;
    }
    Ok(if failed > 0 {
        crate::exit::ERROR
    } else {
        crate::exit::OK
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const CORE_LIST: &str = r#"{"apiVersion":"v1","kind":"List","items":[
      {"apiVersion":"v1","kind":"Event","metadata":{"name":"p.1","namespace":"ns","uid":"a"},
       "involvedObject":{"kind":"Pod","name":"p"},"reason":"BackOff","type":"Warning","count":3,
       "firstTimestamp":"2026-11-29T03:00:00Z","lastTimestamp":"2026-11-29T03:02:00Z","message":"m"}]}"#;

    #[test]
    fn a_kubectl_json_list() {
        let events = parse("f.json", CORE_LIST, 0).unwrap().events;
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].count, 3);
        assert_eq!(events[0].involved.name, "p");
    }

    #[test]
    fn json_lines_and_events_k8s_io() {
        let text = r#"{"kind":"Event","metadata":{"name":"a","uid":"1"},"reason":"X"}
{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"b","uid":"2"},"regarding":{"kind":"Node","name":"n"},"note":"hi","eventTime":"2026-11-29T03:00:00.000000Z","series":{"count":4,"lastObservedTime":"2026-11-29T03:05:00.000000Z"}}"#;
        let events = parse("f.jsonl", text, 0).unwrap().events;
        assert_eq!(events.len(), 2);
        assert_eq!(events[1].count, 4);
        assert_eq!(events[1].message, "hi");
        assert_eq!(events[1].involved.kind, "Node");
    }

    #[test]
    fn yaml_list_and_single() {
        let text = "apiVersion: v1\nkind: List\nitems:\n- kind: Event\n  metadata: {name: a, uid: '1'}\n  reason: Pulled\n  count: 2\n";
        assert_eq!(parse("f.yaml", text, 0).unwrap().events[0].count, 2);
        let single = "kind: Event\nmetadata:\n  name: a\n  uid: '1'\nreason: Pulled\n";
        assert_eq!(
            parse("f.yaml", single, 0).unwrap().events[0].reason,
            "Pulled"
        );
    }

    #[test]
    fn a_truncated_file_names_the_place() {
        let cut = &CORE_LIST[..CORE_LIST.len() / 2];
        let err = parse("dump.json", cut, 0).unwrap_err();
        assert!(matches!(err, ImportError::Json { line: 3, .. }), "{err:?}");
        assert!(
            err.to_string()
                .starts_with("dump.json: not valid JSON at line 3"),
            "{err}"
        );
    }

    #[test]
    fn a_pod_is_refused() {
        let err = parse(
            "pods.json",
            r#"{"kind":"List","items":[{"kind":"Pod","metadata":{"name":"p"}}]}"#,
            0,
        )
        .unwrap_err();
        assert_eq!(
            err,
            ImportError::NotAnEvent {
                file: "pods.json".into(),
                place: "document 1 item 1".into(),
                what: "a Pod".into()
            }
        );
    }

    #[test]
    fn an_empty_list_is_an_error() {
        assert!(matches!(
            parse("e.json", r#"{"kind":"List","items":[]}"#, 0),
            Err(ImportError::Empty { .. })
        ));
    }

    #[test]
    fn prose_is_refused_naming_the_formats_read() {
        let err =
            parse_input("ticket.txt", "Hello,\nthe pod is broken: see below.\n", 0).unwrap_err();
        assert!(matches!(err, ImportError::Unrecognised { .. }), "{err:?}");
        assert!(err.to_string().contains(ACCEPTED), "{err}");
        let err = parse_input("one-line.txt", "just words\n", 0).unwrap_err();
        assert!(err.to_string().contains("a line of text"), "{err}");
    }

    #[test]
    fn messages_match_but_for_kubectls_cut() {
        assert!(same_message(
            "probe failed: one...",
            "probe failed: one\ntwo"
        ));
        assert!(same_message(
            "probe failed: one\ntwo",
            "probe failed: one..."
        ));
        assert!(same_message(" x ", "x"));
        assert!(!same_message("probe failed: two", "probe failed: one"));
    }

    fn row(name: &str, reason: &str, message: &str, count: i64, t: i64) -> TextObservation {
        TextObservation {
            obs: EventObservation {
                involved: ObjectRef {
                    kind: "Pod".into(),
                    namespace: "ns".into(),
                    name: name.into(),
                    ..ObjectRef::default()
                },
                reason: reason.into(),
                message: message.into(),
                count,
                first: t,
                last: t + 10,
                ..EventObservation::default()
            },
            has_source: false,
            counted: true,
            identified: false,
            line: 0,
        }
    }

    /// Regression (issue 27.9): every row was compared with every kept row,
    /// so 20k / 40k / 80k rows of `get events -A` took 7.4 / 24 / 86 s. Rows
    /// are now compared within their object and reason only; what is the
    /// same Event is still told as before.
    #[test]
    fn dedupe_compares_rows_of_one_object_and_reason_only() {
        let rows = vec![
            row("a", "BackOff", "probe failed: one...", 2, 0),
            row("b", "BackOff", "probe failed: one two", 9, 0),
            row("a", "Pulled", "probe failed: one two", 9, 0),
            row("a", "BackOff", "probe failed: one two", 5, 5),
            row("a", "BackOff", "probe failed: one two", 7, 1_000),
            row("a", "BackOff", "probe failed: one two", 1, 3),
        ];
        let kept: Vec<(String, String, i64)> = dedupe(rows)
            .into_iter()
            .map(|r| (r.obs.involved.name, r.obs.reason, r.obs.count))
            .collect();
        assert_eq!(
            kept,
            [
                ("a".into(), "BackOff".into(), 5),
                ("b".into(), "BackOff".into(), 9),
                ("a".into(), "Pulled".into(), 9),
                ("a".into(), "BackOff".into(), 7),
            ]
        );
        let many: Vec<TextObservation> = (0..100_000)
            .map(|i| row(&format!("p-{i}"), "BackOff", "m", 1, 0))
            .collect();
        assert_eq!(dedupe(many).len(), 100_000);
    }

    /// Regression (issue 27.9): kubectl text was read whole and every row
    /// kept until the file ended (about 2.7 KiB a row; a 100 MB table took
    /// gigabytes). Rows are now stored a chunk at a time while the table is
    /// read, and what is held (the chunk, the filter of what was stored) does
    /// not grow with it; a row shown again chunks later is still counted once.
    #[test]
    fn a_long_table_is_stored_a_chunk_at_a_time_while_it_is_read() {
        let (_dir, mut writer) = crate::store::testing::recording();
        let args = TextArgs {
            given: crate::units::parse_taken_at("2026-11-29T12:00:00Z"),
            namespace: None,
            object: None,
            now: 0,
            cluster: "c",
        };
        let row = |i: usize| {
            let (ns, age, pod) = (format!("ns-{}", i % 3), format!("{}m", i % 50 + 1), i % 7);
            format!("{ns:<11}{age:<12}Warning   BackOff   pod/web-{pod}  Back-off attempt {i}")
        };
        let mut store = TextStore::begin(&mut writer, "t.txt", &args).unwrap();
        let mut lines = text::Lines::new();
        let mut parsed = text::Parsed::default();
        let mut err = Vec::new();
        lines.line(
            "NAMESPACE  LAST SEEN   TYPE      REASON    OBJECT     MESSAGE",
            &mut parsed,
        );
        for i in 0..2_500 {
            lines.line(&row(i), &mut parsed);
            store.take(&mut parsed, &mut err).unwrap();
            assert!(store.chunk.len() < CHUNK);
        }
        // Before the input ends: two chunks are in the file's transaction.
        assert!(store.rows >= 2_499);
        assert_eq!(store.events, 2 * CHUNK);
        store.batch.flush().unwrap();
        assert_eq!(store.batch.recording().events_before().unwrap(), 2_000);
        assert_eq!(store.seen.bits.len(), SEEN_BITS / 64);
        // The same rows again, in the chunk after theirs: nothing new.
        for i in 1_000..1_100 {
            lines.line(&row(i), &mut parsed);
            store.take(&mut parsed, &mut err).unwrap();
        }
        lines.finish(&mut parsed);
        store.take(&mut parsed, &mut err).unwrap();
        let mut out = Vec::new();
        assert_eq!(store.finish(&mut out, &mut err).unwrap(), 0);
        let out = String::from_utf8(out).unwrap();
        assert!(
            out.starts_with("t.txt: 2500 Event(s), 2500 new occurrence(s) stored"),
            "{out}"
        );
    }

    #[test]
    fn the_limit_on_what_is_read_whole_is_the_one_its_error_names() {
        let e = ImportError::TooLarge { file: "-".into() };
        assert_eq!(MAX_WHOLE, 128 << 20);
        assert!(e.to_string().contains("more than 128 MiB"), "{e}");
    }

    #[test]
    fn a_default_table_row_is_its_last_occurrence_within_its_age() {
        let text = "LAST SEEN   TYPE      REASON    OBJECT      MESSAGE\n5m          Warning   BackOff   pod/web-1   Back-off\n";
        let Input::Text(parsed) = parse_input("t.txt", text, 0).unwrap() else {
            panic!("not read as text")
        };
        let t = 10_000_000;
        let rows = text_observations(&parsed, (t, t), Some("shop"), &mut Vec::new());
        let o = &rows[0].obs;
        assert_eq!(
            (o.count, o.first, o.last),
            (1, t - 360_000 + 1, t - 300_000)
        );
        assert_eq!(o.last_from, Some(t - 360_000 + 1));
        assert_eq!(
            (o.namespace.as_str(), o.involved.namespace.as_str()),
            ("shop", "shop")
        );
        assert!(o.uid.starts_with(TEXT_UID_PREFIX));
        assert!(!rows[0].counted);
    }
}
