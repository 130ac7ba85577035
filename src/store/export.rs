//! Reading stored occurrences back, for `kubectl diag export`.

use rusqlite::named_params;

use super::{Recording, StoreError, expand_event_name, uid_text};
use crate::model::{ObjectRef, Occurrence};

const SQL_EXPORT: &str = include_str!("../../queries/store/export.sql");

impl Recording {
    /// Calls `each` for every occurrence last seen at or after `since`, oldest first.
    pub fn for_each_occurrence(
        &self,
        since: i64,
        cluster: Option<&str>,
        mut each: impl FnMut(Occurrence) -> std::io::Result<()>,
    ) -> Result<(), ExportError> {
        let err = |e| ExportError::Store(self.q("export")(e));
        let mut st = self.conn.prepare_cached(SQL_EXPORT).map_err(err)?;
        let mut rows = st
            .query(named_params! {":since": since, ":cluster": cluster})
            .map_err(err)?;
        while let Some(r) = rows.next().map_err(err)? {
            let uid: super::UidKey = r.get("event_uid").map_err(err)?;
            let event_uid = uid_text(&uid);
            let message: String = r.get("message").map_err(err)?;
            let row = Occurrence {
                cluster: r.get("cluster").map_err(err)?,
                message_truncated: event_uid.starts_with(super::imported::TEXT_UID_PREFIX)
                    && message.ends_with("..."),
                event_uid,
                count: r.get("count").map_err(err)?,
                occurrences: r.get("occurrences").map_err(err)?,
                first: r.get("first").map_err(err)?,
                last: r.get("last").map_err(err)?,
                type_: r.get("type").map_err(err)?,
                reason: r.get("reason").map_err(err)?,
                message,
                object: ObjectRef {
                    api_version: r.get("api_version").map_err(err)?,
                    kind: r.get("kind").map_err(err)?,
                    namespace: r.get("namespace").map_err(err)?,
                    name: r.get("name").map_err(err)?,
                    uid: r.get("uid").map_err(err)?,
                    field_path: r.get("field_path").map_err(err)?,
                },
                reporting_controller: r.get("reporting_controller").map_err(err)?,
                reporting_instance: r.get("reporting_instance").map_err(err)?,
                source_host: r.get("source_host").map_err(err)?,
                action: r.get("action").map_err(err)?,
                event_namespace: r.get("event_namespace").map_err(err)?,
                event_name: expand_event_name(
                    r.get("event_name").map_err(err)?,
                    &r.get::<_, String>("name").map_err(err)?,
                ),
            };
            each(row).map_err(ExportError::Write)?;
        }
        Ok(())
    }
}

/// Export fails either reading the store or writing the output.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("writing the export: {0}")]
    Write(#[source] std::io::Error),
}
