//! `kubectl diag export`: every stored occurrence as one JSON line.
//!
//! The line's fields are documented in docs/schema.md and kept stable:
//! cluster, event_uid, count, first, last, type, reason, message,
//! object {apiVersion, kind, namespace, name, uid}, reporting_controller;
//! plus occurrences, event {namespace, name}, field_path, reporting_instance,
//! source_host, action.

use std::io::Write;

use serde_json::json;

use crate::model::Occurrence;
use crate::store::{self, Mode};
use crate::units::rfc3339;

pub fn line(row: &Occurrence) -> serde_json::Value {
    let mut line = json!({
        "cluster": row.cluster,
        "event_uid": row.event_uid,
        "count": row.count,
        "occurrences": row.occurrences,
        "first": rfc3339(row.first),
        "last": rfc3339(row.last),
        "type": row.type_,
        "reason": row.reason,
        "message": row.message,
        "object": {
            "apiVersion": row.object.api_version,
            "kind": row.object.kind,
            "namespace": row.object.namespace,
            "name": row.object.name,
            "uid": row.object.uid,
        },
        "field_path": row.object.field_path,
        "event": {"namespace": row.event_namespace, "name": row.event_name},
        "reporting_controller": row.reporting_controller,
        "reporting_instance": row.reporting_instance,
        "source_host": row.source_host,
        "action": row.action,
    });
    if row.message_truncated {
        line["message_truncated"] = json!(true);
    }
    line
}

/// Whether `-n` keeps this row: the Event's namespace or its object's, as
/// `kubectl get events -n` and `--field-selector involvedObject.namespace=` would.
// NB: both, because a text import without a NAMESPACE column stores the object's
// namespace only from `-n`, and a Node's Events live in `default`.
fn in_namespace(row: &Occurrence, namespace: &str) -> bool {
    row.event_namespace == namespace || row.object.namespace == namespace
}

/// What `export` was asked, its flags resolved once (`cli::resolve`).
#[derive(Debug, Clone, Default)]
pub struct ExportOptions {
    /// `-n`: only Events in it (the Event's namespace or its object's); None for all.
    pub namespace: Option<String>,
    /// `--since`: only occurrences last seen at or after it.
    pub since: Option<i64>,
    /// `--cluster`: only this cluster's; None for every cluster.
    pub cluster: Option<String>,
}

pub fn run(
    history: &super::source::Source,
    args: &ExportOptions,
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    let since = args.since.unwrap_or(i64::MIN);
    let namespace = args.namespace.clone();
    if let Some(several) = namespace.as_deref().filter(|n| n.contains(',')) {
        anyhow::bail!("-n {several}: export takes one namespace (or -A for all)");
    }
    let path = history.path().to_path_buf();
    let recording = store::Recording::open(&path, Mode::ReadOnly)?;
    let mut buf = std::io::BufWriter::new(out);
    recording.for_each_occurrence(since, args.cluster.as_deref(), |row| {
        if namespace
            .as_deref()
            .is_some_and(|ns| !in_namespace(&row, ns))
        {
            return Ok(());
        }
        serde_json::to_writer(&mut buf, &line(&row))?;
        buf.write_all(b"\n")
    })?;
    buf.flush()?;
    Ok(crate::exit::OK)
}
