//! Retention: by age (`--retain`) and by size (`--max-db-size`), oldest first,
//! then an incremental vacuum so the file shrinks.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension, named_params};

use crate::store::StoreError;

const SQL_DELETE_OCCURRENCES: &str =
    include_str!("../../queries/store/retention_delete_occurrences.sql");
const SQL_DELETE_EVENTS: &str = include_str!("../../queries/store/retention_delete_events.sql");
const SQL_DELETE_GAPS: &str = include_str!("../../queries/store/retention_delete_gaps.sql");
const SQL_CUTOFF_FOR_FRACTION: &str =
    include_str!("../../queries/store/retention_cutoff_for_fraction.sql");

/// What to keep; 0 means no limit.
#[derive(Debug, Clone, Copy, Default)]
pub struct Retention {
    pub max_age_ms: i64,
    pub max_bytes: u64,
}

/// The recording's size on disk: the file and its WAL.
pub fn db_bytes(path: &Path) -> u64 {
    let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    size(path) + size(Path::new(&wal))
}

fn delete_before(conn: &Connection, path: &Path, cutoff: i64) -> Result<(), StoreError> {
    let q = |e| StoreError::query("retention", path, e);
    conn.execute_batch("BEGIN IMMEDIATE").map_err(q)?;
    let done = (|| {
        for sql in [SQL_DELETE_OCCURRENCES, SQL_DELETE_EVENTS, SQL_DELETE_GAPS] {
            conn.prepare_cached(sql)?
                .execute(named_params! {":cutoff": cutoff})?;
        }
        Ok(())
    })();
    match done {
        Ok(()) => conn.execute_batch("COMMIT").map_err(q)?,
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            return Err(q(e));
        }
    }
    // Give freed pages back to the file system, a bounded amount at a time.
    conn.execute_batch("PRAGMA incremental_vacuum(20000)")
        .map_err(q)?;
    Ok(())
}

/// Drops what is older than the age limit, then the oldest tenth at a time
/// while the file is over the size limit.
pub fn apply(conn: &Connection, path: &Path, r: &Retention, now: i64) -> Result<(), StoreError> {
    if r.max_age_ms > 0 {
        delete_before(conn, path, now - r.max_age_ms)?;
    }
    if r.max_bytes > 0 {
        for _ in 0..10 {
            let _ = conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)");
            if db_bytes(path) <= r.max_bytes {
                break;
            }
            let cutoff: Option<i64> = conn
                .prepare_cached(SQL_CUTOFF_FOR_FRACTION)
                .and_then(|mut st| {
                    st.query_row(named_params! {":fraction": 0.1}, |row| row.get(0))
                        .optional()
                })
                .map_err(|e| StoreError::query("retention", path, e))?;
            match cutoff {
                Some(cutoff) => delete_before(conn, path, cutoff + 1)?,
                None => break,
            }
        }
    }
    Ok(())
}
