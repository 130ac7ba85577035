//! Append-only schema migrations. Migration N is `queries/migrations/00N_*.sql`;
//! `PRAGMA user_version` records the last one applied. Never edit a shipped
//! migration: add the next one.

use std::path::Path;

use rusqlite::Connection;

use super::StoreError;

const MIGRATIONS: &[&str] = &[
    include_str!("../../queries/migrations/001_events.sql"),
    include_str!("../../queries/migrations/002_object_history.sql"),
    include_str!("../../queries/migrations/003_version_generations.sql"),
    include_str!("../../queries/migrations/004_event_name_index.sql"),
    include_str!("../../queries/migrations/005_spec_diffs.sql"),
    include_str!("../../queries/migrations/006_update_count_fields.sql"),
    include_str!("../../queries/migrations/007_audit.sql"),
    include_str!("../../queries/migrations/008_outbox.sql"),
    include_str!("../../queries/migrations/009_session_window.sql"),
    include_str!("../../queries/migrations/010_outbox_every_table.sql"),
    include_str!("../../queries/migrations/011_string_epoch.sql"),
    include_str!("../../queries/migrations/012_touches.sql"),
    include_str!("../../queries/migrations/013_version_provenance.sql"),
];

/// The schema version this build writes.
pub const LATEST: i64 = MIGRATIONS.len() as i64;

/// Brings the file up to [`LATEST`], one transaction per migration.
pub fn migrate(conn: &Connection, path: &Path) -> Result<(), StoreError> {
    let sqlite = |source| StoreError::Sqlite {
        path: path.to_path_buf(),
        source,
    };
    let current: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(sqlite)?;
    if current > LATEST {
        return Err(StoreError::TooNew {
            path: path.to_path_buf(),
            found: current,
            known: LATEST,
        });
    }
    for (index, sql) in MIGRATIONS.iter().enumerate().skip(current as usize) {
        let version = index as i64 + 1;
        super::in_transaction(conn, sqlite, |tx| {
            tx.execute_batch(sql)
                .and_then(|_| tx.pragma_update(None, "user_version", version))
                .map_err(sqlite)
        })?;
    }
    Ok(())
}
