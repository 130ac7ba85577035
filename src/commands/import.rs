//! `kubectl diag import FILE…`: Events from `kubectl get events -o json|yaml`
//! dumps (a List or a single Event) or JSON Lines, core/v1 and
//! events.k8s.io/v1 alike, stored through the recorder's own normalisation
//! and exactly-once rules under the cluster id given by `--cluster`.
//!
//! Each file is parsed whole before anything is stored, and stored in one
//! transaction: a bad file stores nothing, and the other files still import.

use std::io::{Read, Write};
use std::path::Path;

use anyhow::Context;
use serde_json::Value;
use thiserror::Error;

use crate::cli::{GlobalArgs, ImportArgs};
use crate::k8s::event::WireEvent;
use crate::model::{EventChange, EventObservation};
use crate::store::writer::Writer;
use crate::store::{self, Mode, session};

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
    #[error("{file}: not valid YAML: {reason}")]
    Yaml { file: String, reason: String },
    #[error(
        "{file}: {place} is {what}, not an Event (import takes `kubectl get events -o json|yaml` output or JSON Lines of Events)"
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
    #[error("{file}: holds no Events")]
    Empty { file: String },
}

/// Parses one file's text into Event observations. Pure: no I/O.
pub fn parse(file: &str, text: &str) -> Result<Vec<EventObservation>, ImportError> {
    let trimmed = text.trim_start();
    let docs: Vec<Value> = if trimmed.starts_with('{') || trimmed.starts_with('[') {
        // One JSON document, or JSON Lines (several documents in a row).
        let mut docs = Vec::new();
        for doc in serde_json::Deserializer::from_str(text).into_iter::<Value>() {
            docs.push(doc.map_err(|e| ImportError::Json {
                file: file.into(),
                line: e.line(),
                column: e.column(),
                reason: e.to_string(),
            })?);
        }
        docs
    } else {
        serde_saphyr::from_str_multiple::<Value, _>(text).map_err(|e| ImportError::Yaml {
            file: file.into(),
            reason: e.to_string(),
        })?
    };
    let mut events = Vec::new();
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
            match wire.into_observation() {
                Some(o) => events.push(o),
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
    if events.is_empty() {
        return Err(ImportError::Empty { file: file.into() });
    }
    Ok(events)
}

fn read(file: &str) -> Result<String, ImportError> {
    let mut text = String::new();
    let done = if file == "-" {
        std::io::stdin().read_to_string(&mut text).map(|_| ())
    } else {
        std::fs::read_to_string(Path::new(file)).map(|t| text = t)
    };
    done.map_err(|e| ImportError::Read {
        file: file.into(),
        reason: e.to_string(),
    })?;
    Ok(text)
}

pub fn run(
    global: &GlobalArgs,
    args: &ImportArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> anyhow::Result<u8> {
    let path = crate::paths::db_path(global.db.as_ref());
    let conn = store::open(&path, Mode::Write)?;
    let now = chrono::Utc::now().timestamp_millis();
    let cluster = session::register_cluster(&conn, &path, &args.cluster, &args.cluster, "", now)?;
    let mut writer = Writer::new(conn, &path, cluster);
    let mut failed = 0;
    for file in &args.files {
        let parsed = read(file).and_then(|text| parse(file, &text));
        let events = match parsed {
            Ok(events) => events,
            Err(e) => {
                writeln!(err, "error: {e}; nothing of it was stored")?;
                failed += 1;
                continue;
            }
        };
        writer.begin()?;
        let mut occurrences = 0;
        for o in events.iter() {
            let applied = writer
                .apply(&EventChange::Upsert(Box::new(o.clone())))
                .inspect_err(|_| writer.rollback())
                .with_context(|| format!("storing {file}"))?;
            occurrences += applied.occurrences;
        }
        writer.commit().with_context(|| format!("storing {file}"))?;
        writeln!(
            out,
            "{file}: {} Event(s), {occurrences} new occurrence(s) stored under cluster {:?}",
            events.len(),
            args.cluster
        )?;
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
        let events = parse("f.json", CORE_LIST).unwrap();
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].count, 3);
        assert_eq!(events[0].involved.name, "p");
    }

    #[test]
    fn json_lines_and_events_k8s_io() {
        let text = r#"{"kind":"Event","metadata":{"name":"a","uid":"1"},"reason":"X"}
{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"b","uid":"2"},"regarding":{"kind":"Node","name":"n"},"note":"hi","eventTime":"2026-11-29T03:00:00.000000Z","series":{"count":4,"lastObservedTime":"2026-11-29T03:05:00.000000Z"}}"#;
        let events = parse("f.jsonl", text).unwrap();
        assert_eq!(events.len(), 2);
        assert_eq!(events[1].count, 4);
        assert_eq!(events[1].message, "hi");
        assert_eq!(events[1].involved.kind, "Node");
    }

    #[test]
    fn yaml_list_and_single() {
        let text = "apiVersion: v1\nkind: List\nitems:\n- kind: Event\n  metadata: {name: a, uid: '1'}\n  reason: Pulled\n  count: 2\n";
        assert_eq!(parse("f.yaml", text).unwrap()[0].count, 2);
        let single = "kind: Event\nmetadata:\n  name: a\n  uid: '1'\nreason: Pulled\n";
        assert_eq!(parse("f.yaml", single).unwrap()[0].reason, "Pulled");
    }

    #[test]
    fn a_truncated_file_names_the_place() {
        let cut = &CORE_LIST[..CORE_LIST.len() / 2];
        let err = parse("dump.json", cut).unwrap_err();
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
            parse("e.json", r#"{"kind":"List","items":[]}"#),
            Err(ImportError::Empty { .. })
        ));
    }
}
