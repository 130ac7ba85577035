//! Reading stored occurrences back, for `kubectl diag export`.

use std::path::Path;

use rusqlite::{Connection, named_params};

use super::{StoreError, expand_event_name, uid_text};
use crate::model::ObjectRef;

const SQL_EXPORT: &str = include_str!("../../queries/store/export.sql");

/// One stored occurrence row, with its Event's fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OccurrenceRow {
    pub cluster: String,
    pub event_uid: String,
    pub event_namespace: String,
    pub event_name: String,
    pub count: i64,
    /// How many occurrences this row stands for (more than 1 after a count jump).
    pub occurrences: i64,
    pub first: i64,
    pub last: i64,
    pub type_: String,
    pub reason: String,
    pub message: String,
    /// The message was cut by kubectl (a text import whose message ends in
    /// `...`): stored as printed, marked here.
    pub message_truncated: bool,
    pub object: ObjectRef,
    pub reporting_controller: String,
    pub reporting_instance: String,
    pub source_host: String,
    pub action: String,
}

/// Calls `each` for every occurrence last seen at or after `since`, oldest first.
pub fn for_each_occurrence(
    conn: &Connection,
    path: &Path,
    since: i64,
    cluster: Option<&str>,
    mut each: impl FnMut(OccurrenceRow) -> std::io::Result<()>,
) -> Result<(), ExportError> {
    let err = |e| ExportError::Store(StoreError::query("export", path, e));
    let mut st = conn.prepare_cached(SQL_EXPORT).map_err(err)?;
    let mut rows = st
        .query(named_params! {":since": since, ":cluster": cluster})
        .map_err(err)?;
    while let Some(r) = rows.next().map_err(err)? {
        let uid: super::UidKey = r.get(1).map_err(err)?;
        let event_uid = uid_text(&uid);
        let message: String = r.get(8).map_err(err)?;
        let row = OccurrenceRow {
            cluster: r.get(0).map_err(err)?,
            message_truncated: event_uid.starts_with(super::imported::TEXT_UID_PREFIX)
                && message.ends_with("..."),
            event_uid,
            count: r.get(2).map_err(err)?,
            occurrences: r.get(3).map_err(err)?,
            first: r.get(4).map_err(err)?,
            last: r.get(5).map_err(err)?,
            type_: r.get(6).map_err(err)?,
            reason: r.get(7).map_err(err)?,
            message,
            object: ObjectRef {
                api_version: r.get(9).map_err(err)?,
                kind: r.get(10).map_err(err)?,
                namespace: r.get(11).map_err(err)?,
                name: r.get(12).map_err(err)?,
                uid: r.get(13).map_err(err)?,
                field_path: r.get(16).map_err(err)?,
            },
            reporting_controller: r.get(14).map_err(err)?,
            reporting_instance: r.get(15).map_err(err)?,
            source_host: r.get(17).map_err(err)?,
            action: r.get(18).map_err(err)?,
            event_namespace: r.get(19).map_err(err)?,
            event_name: expand_event_name(
                r.get(20).map_err(err)?,
                &r.get::<_, String>(12).map_err(err)?,
            ),
        };
        each(row).map_err(ExportError::Write)?;
    }
    Ok(())
}

/// Export fails either reading the store or writing the output.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("writing the export: {0}")]
    Write(#[source] std::io::Error),
}
