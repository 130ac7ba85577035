//! The timeline as a table (kubectl style) or as the documented JSON shape.

use std::io::Write;

use super::{Paint, escape, plain_table};
use crate::timeline::fold::{Folded, fold};
use crate::timeline::{Entry, EntryKind, Timeline};
use crate::units::human_duration;

fn time(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.format("%Y-%m-%d %H:%M:%S").to_string())
        .unwrap_or_default()
}

fn object(e: &Entry) -> String {
    if e.entry == EntryKind::Gap {
        format!(
            "({})",
            if e.source == "import" {
                "imports"
            } else {
                "recorder"
            }
        )
    } else {
        escape(&format!("{}/{}", e.object.kind, e.object.name)).into_owned()
    }
}

fn message(e: &Entry) -> String {
    let text = escape(&e.message.replace('\n', " ")).into_owned();
    match (e.entry, e.until_ms) {
        (EntryKind::Event, Some(until)) if e.count > 1 => format!(
            "×{} over {} (until {}): {text}",
            e.count,
            human_duration(until - e.at_ms),
            time(until)
        ),
        (EntryKind::Event, _) if e.count > 1 => format!("×{}: {text}", e.count),
        _ => text,
    }
}

fn entry_kind(e: &Entry) -> &'static str {
    match e.entry {
        EntryKind::Event => "event",
        EntryKind::Transition => "change",
        EntryKind::Gap => "gap",
    }
}

/// `-o table` / `-o wide`. The table folds what sibling Pods say alike into one line
/// (`timeline::fold`); wide keeps every entry.
pub fn table(t: &Timeline, out: &mut dyn Write, wide: bool, paint: Paint) -> std::io::Result<()> {
    if let Some(summary) = &t.summary {
        for (label, text) in crate::timeline::summary::lines(summary) {
            let label = format!("{label}:");
            writeln!(out, "{label:<9}{}", escape(&text.replace('\n', " ")))?;
        }
        writeln!(out)?;
    }
    let start = t.entries.first().map_or(t.since_ms, |e| e.at_ms);
    // A reconstruction (no recording) says how certain each entry is.
    let certain = t.entries.iter().any(|e| e.certainty.is_some());
    let mut header = vec!["TIME (UTC)", "REL", "OBJECT", "ENTRY"];
    if certain {
        header.push("CERTAINTY");
    }
    header.extend(["REASON", "MESSAGE"]);
    if wide {
        header.extend(["WRITER", "SOURCE"]);
    }
    let lines = if wide {
        t.entries
            .iter()
            .map(|e| Folded {
                entry: e.clone(),
                names: vec![e.object.name.clone()],
                last_at: e.at_ms,
                flips: None,
            })
            .collect()
    } else {
        fold(&t.entries)
    };
    let rows = lines.iter().map(|f| {
        let e = &f.entry;
        let reason = escape(&e.reason);
        let reason = match (e.entry, e.type_.as_str()) {
            (EntryKind::Gap, _) => paint.red(&reason),
            (_, "Warning") => paint.yellow(&reason),
            _ => reason.into_owned(),
        };
        let (object, message) = match (&f.flips, f.label()) {
            (Some(flips), _) => (
                object(e),
                format!(
                    "{}, back and forth {} times until {} (by {})",
                    escape(&flips.fields),
                    flips.count,
                    time(f.last_at),
                    escape(&flips.writers.join(", "))
                ),
            ),
            (None, label) => match label {
                Some(label) if f.last_at - e.at_ms >= 1_000 => (
                    escape(&label).into_owned(),
                    format!(
                        "{} (within {})",
                        message(e),
                        human_duration(f.last_at - e.at_ms)
                    ),
                ),
                Some(label) => (escape(&label).into_owned(), message(e)),
                None => (object(e), message(e)),
            },
        };
        let mut row = vec![
            time(e.at_ms),
            format!("+{}", human_duration(e.at_ms - start)),
            object,
            entry_kind(e).to_string(),
        ];
        if certain {
            // NB: a recorded story completed from the live cluster mixes both.
            // NB: nor is all of a recording the recorder's: an audit log's
            // version is not told as recorded.
            row.push(
                match (e.certainty, e.provenance) {
                    (Some(c), _) => c.as_str(),
                    (None, _) if e.entry == EntryKind::Gap && e.source == "import" => "imports",
                    (None, p) => p.said().unwrap_or("recorded"),
                }
                .to_string(),
            );
        }
        let message =
            if e.writers.is_empty() || wide || e.entry != EntryKind::Transition || !certain {
                message
            } else {
                format!("{message} (by {})", escape(&e.writers.join(", ")))
            };
        row.extend([reason, message]);
        if wide {
            row.push(escape(&e.writers.join(",")).into_owned());
            // A transition's source is where its version comes from, when
            // not the recorder's watch.
            row.push(match e.provenance.said() {
                Some(said) if e.source.is_empty() => said.to_string(),
                _ => escape(&e.source).into_owned(),
            });
        }
        row
    });
    plain_table(out, header, rows)
}

/// `-o json`: the shape documented in docs/timeline.md.
pub fn json(t: &Timeline, target: &serde_json::Value, out: &mut dyn Write) -> std::io::Result<()> {
    let mut doc = serde_json::json!({
        "target": target,
        "since": t.since,
        "until": t.until,
    });
    if let Some(summary) = &t.summary {
        doc["summary"] = serde_json::json!(summary);
    }
    doc["objects"] = serde_json::json!(t.objects);
    doc["entries"] = serde_json::json!(t.entries);
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    writeln!(out)
}
