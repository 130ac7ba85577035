//! The recording: one SQLite file, WAL, append-only migrations tracked by
//! `PRAGMA user_version`. Every statement lives under `queries/` and is
//! loaded with `include_str!`; parameters are named; nothing is built with
//! `format!`.

pub mod export;
pub mod history;
pub mod imported;
pub mod migrate;
pub mod session;
pub mod snapshot;
pub mod timeline;
pub mod writer;

use std::fs::OpenOptions;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags};
use thiserror::Error;

/// What went wrong with the recording file.
#[derive(Debug, Error)]
pub enum StoreError {
    /// The folder or file could not be created or opened.
    #[error(
        "cannot open the recording {path}; check that its folder is writable, or pass --db PATH"
    )]
    Open {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// A reader was pointed at a file that does not exist.
    #[error("no recording at {path}: record one with `kubectl diag record`, or pass --db PATH")]
    Missing { path: PathBuf },

    /// SQLite refused the file (not a database, corrupt, locked by another program).
    #[error("the recording {path} cannot be used (is it a kubectl-diag recording?)")]
    Sqlite {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },

    /// The file was written by a newer kubectl-diag.
    #[error(
        "the recording {path} has schema version {found}, newer than this kubectl-diag understands ({known}); upgrade kubectl-diag"
    )]
    TooNew {
        path: PathBuf,
        found: i64,
        known: i64,
    },

    /// The disk is full: what is committed stays, the rest is retried.
    #[error(
        "the disk holding {path} is full; free space or lower --retain/--max-db-size (nothing already stored is lost)"
    )]
    DiskFull { path: PathBuf },

    /// Another recorder is writing this cluster into the same file.
    #[error(
        "another recorder (pid {pid} on {host}, last seen {age_s}s ago) is already recording cluster {cluster} into {path}; stop it first, or use another --db"
    )]
    Busy {
        path: PathBuf,
        cluster: String,
        host: String,
        pid: i64,
        age_s: i64,
    },

    /// Any other SQLite error while reading or writing.
    #[error("database error in {what}")]
    Query {
        what: &'static str,
        #[source]
        source: rusqlite::Error,
    },
}

impl StoreError {
    /// Wraps a SQLite error, recognising a full disk.
    pub fn query(what: &'static str, path: &Path, source: rusqlite::Error) -> StoreError {
        if let rusqlite::Error::SqliteFailure(e, _) = &source
            && e.code == rusqlite::ErrorCode::DiskFull
        {
            return StoreError::DiskFull {
                path: path.to_path_buf(),
            };
        }
        StoreError::Query { what, source }
    }
}

/// How a connection will be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The recorder: creates the file (mode 0600) and migrates it.
    Write,
    /// Readers (timeline, check, query, export): the file must exist; never written.
    ReadOnly,
}

/// How long a statement waits for another connection's lock before it fails.
pub const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Opens (and for writers, creates and migrates) the recording.
pub fn open(path: &Path, mode: Mode) -> Result<Connection, StoreError> {
    let sqlite = |source| StoreError::Sqlite {
        path: path.to_path_buf(),
        source,
    };
    let conn = match mode {
        Mode::Write => {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir).map_err(|source| StoreError::Open {
                    path: path.to_path_buf(),
                    source,
                })?;
            }
            // NB: create the file ourselves so it is born 0600; SQLite would use 0644.
            OpenOptions::new()
                .create(true)
                .append(true)
                .mode(0o600)
                .open(path)
                .map_err(|source| StoreError::Open {
                    path: path.to_path_buf(),
                    source,
                })?;
            Connection::open(path).map_err(sqlite)?
        }
        Mode::ReadOnly => {
            if !path.exists() {
                return Err(StoreError::Missing {
                    path: path.to_path_buf(),
                });
            }
            Connection::open_with_flags(
                path,
                OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            )
            .map_err(sqlite)?
        }
    };
    conn.busy_timeout(BUSY_TIMEOUT).map_err(sqlite)?;
    if mode == Mode::Write {
        // auto_vacuum and page_size must be chosen before the first table exists
        // (an existing file keeps its own).
        // NB: 8 KiB pages: the writer commits batches of thousands of rows and
        // stored more a second than with 4 KiB pages; 16 KiB stored more still but
        // made timelines (random reads) slower (docs/performance.md).
        // NB: a checkpoint every 40,000 pages (320 MiB of WAL), not 10,000: index
        // pages that every batch dirties are copied back once per checkpoint, and
        // into a DB of 10 M occurrences commits took 14.1 s instead of 21.7 s per
        // million changes. `record` lowers it under a small --max-db-size.
        conn.execute_batch(
            "PRAGMA page_size = 8192;
             PRAGMA auto_vacuum = INCREMENTAL;
             PRAGMA journal_mode = WAL;
             PRAGMA synchronous = NORMAL;
             PRAGMA wal_autocheckpoint = 40000;
             PRAGMA cache_size = -16384;
             PRAGMA foreign_keys = OFF;",
        )
        .map_err(sqlite)?;
        migrate::migrate(&conn, path)?;
    } else {
        // A reader still checks the file is a recording it understands.
        let version: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(sqlite)?;
        if version > migrate::LATEST {
            return Err(StoreError::TooNew {
                path: path.to_path_buf(),
                found: version,
                known: migrate::LATEST,
            });
        }
        if version == 0 {
            return Err(StoreError::Sqlite {
                path: path.to_path_buf(),
                source: rusqlite::Error::InvalidQuery,
            });
        }
    }
    Ok(conn)
}

pub use crate::units::fnv1a;

/// An object's uid as stored: a 16-byte BLOB when it is a UUID (as every
/// apiserver-made uid is), else TEXT. SQLite keeps the two storage classes
/// apart, so the two can never be confused.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum UidKey {
    Uuid([u8; 16]),
    Text(String),
}

impl rusqlite::ToSql for UidKey {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, ValueRef};
        Ok(match self {
            UidKey::Uuid(b) => ToSqlOutput::Borrowed(ValueRef::Blob(b)),
            UidKey::Text(t) => ToSqlOutput::Borrowed(ValueRef::Text(t.as_bytes())),
        })
    }
}

impl rusqlite::types::FromSql for UidKey {
    fn column_result(value: rusqlite::types::ValueRef<'_>) -> rusqlite::types::FromSqlResult<Self> {
        use rusqlite::types::{FromSqlError, ValueRef};
        match value {
            ValueRef::Blob(b) => {
                b.try_into()
                    .map(UidKey::Uuid)
                    .map_err(|_| FromSqlError::InvalidBlobSize {
                        expected_size: 16,
                        blob_size: b.len(),
                    })
            }
            ValueRef::Text(t) => Ok(UidKey::Text(String::from_utf8_lossy(t).into_owned())),
            _ => Err(FromSqlError::InvalidType),
        }
    }
}

/// The stored form of a uid.
pub fn uid_key(uid: &str) -> UidKey {
    match parse_uuid(uid.as_bytes()) {
        Some(bytes) => UidKey::Uuid(bytes),
        None => UidKey::Text(uid.to_string()),
    }
}

/// The 16 bytes of a UUID written 8-4-4-4-12 in hex digits, if `text` is one.
///
/// NB: once per stored Event, so by table: an iterator over the bytes that
/// skipped the dashes cost about 700 instructions a call, this about 150.
fn parse_uuid(text: &[u8]) -> Option<[u8; 16]> {
    // Each hex digit's value; anything else has the 0x10 bit.
    const VALUE: [u8; 256] = {
        let mut table = [0x10; 256];
        let mut i = 0;
        while i < 10 {
            table[b'0' as usize + i] = i as u8;
            i += 1;
        }
        let mut i = 0;
        while i < 6 {
            table[b'a' as usize + i] = 10 + i as u8;
            table[b'A' as usize + i] = 10 + i as u8;
            i += 1;
        }
        table
    };
    // Where each byte's two digits start.
    const AT: [usize; 16] = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];
    let text: &[u8; 36] = text.try_into().ok()?;
    if [8, 13, 18, 23].iter().any(|&i| text[i] != b'-') {
        return None;
    }
    let mut bytes = [0u8; 16];
    let mut invalid = 0;
    for (byte, &at) in bytes.iter_mut().zip(&AT) {
        let (high, low) = (VALUE[text[at] as usize], VALUE[text[at + 1] as usize]);
        invalid |= high | low;
        *byte = high << 4 | (low & 0x0f);
    }
    (invalid & 0x10 == 0).then_some(bytes)
}

/// The inverse of [`uid_key`]: the uid as the apiserver wrote it.
pub fn uid_text(key: &UidKey) -> String {
    match key {
        UidKey::Uuid(b) => {
            let h: String = b.iter().map(|b| format!("{b:02x}")).collect();
            format!(
                "{}-{}-{}-{}-{}",
                &h[0..8],
                &h[8..12],
                &h[12..16],
                &h[16..20],
                &h[20..32]
            )
        }
        UidKey::Text(t) => t.clone(),
    }
}

/// The stored form of an Event's name. client-go names Events
/// `<object name>.<hex nanoseconds>`; such a name is stored as the integer of
/// its hex part, since the object's name is stored anyway. Others stay text.
pub fn compact_event_name(name: &str, object_name: &str) -> rusqlite::types::Value {
    use rusqlite::types::Value;
    let hex = name
        .strip_prefix(object_name)
        .and_then(|rest| rest.strip_prefix('.'))
        .filter(|h| {
            !h.is_empty()
                && h.len() <= 16
                && !h.starts_with('0')
                && h.bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        });
    match hex.and_then(|h| u64::from_str_radix(h, 16).ok()) {
        Some(v) if !object_name.is_empty() => Value::Integer(v as i64),
        _ => Value::Text(name.to_string()),
    }
}

/// The inverse of [`compact_event_name`].
pub fn expand_event_name(stored: rusqlite::types::Value, object_name: &str) -> String {
    use rusqlite::types::Value;
    match stored {
        Value::Integer(v) => format!("{object_name}.{:x}", v as u64),
        Value::Text(t) => t,
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_go_event_names_are_stored_as_integers() {
        use rusqlite::types::Value;
        let name = "web-7c9d-x2.187c3a4b5d6e7f80";
        let stored = compact_event_name(name, "web-7c9d-x2");
        assert!(matches!(stored, Value::Integer(_)));
        assert_eq!(expand_event_name(stored, "web-7c9d-x2"), name);
        // Leading zero, other object, upper case: kept as text, exactly.
        for (name, object) in [("a.0f", "a"), ("a.ff", "b"), ("a.FF", "a"), ("plain", "")] {
            let stored = compact_event_name(name, object);
            assert!(matches!(stored, Value::Text(_)), "{name}");
            assert_eq!(expand_event_name(stored, object), name);
        }
    }

    #[test]
    fn uuids_are_stored_in_16_bytes_and_come_back() {
        let uid = "0f8e2a5c-1b2d-4e3f-8a9b-0c1d2e3f4a5b";
        let key = uid_key(uid);
        assert!(matches!(key, UidKey::Uuid(_)));
        assert_eq!(uid_text(&key), uid);
    }

    #[test]
    fn other_uids_are_kept_as_text() {
        // 16 bytes of text: must not be taken for a UUID.
        assert_eq!(uid_text(&uid_key("imported/ns/name")), "imported/ns/name");
        assert!(matches!(uid_key("imported/ns/name"), UidKey::Text(_)));
        // 36 bytes, but not 32 hex digits and dashes.
        for uid in [
            "0f8e2a5c01b2d04e3f08a9b00c1d2e3f4a5b",
            "0f8e2a5c-1b2d-4e3f-8a9b-0c1d2e3f4a-b",
            "0f8e2a5c-1b2d-4e3f-8a9b-0c1d2e3f4a5g",
            // 32 hex digits and four dashes, but not where a UUID has them:
            // as bytes it would come back with the dashes moved.
            "-0f8e2a5c1b2d-4e3f-8a9b0c1d2e3f4a5b-",
            "0f8e2a5c1-b2d-4e3f-8a9b-0c1d2e3f4a5b",
        ] {
            assert!(matches!(uid_key(uid), UidKey::Text(_)), "{uid}");
            assert_eq!(uid_text(&uid_key(uid)), uid);
        }
    }

    #[test]
    fn fnv_is_stable() {
        assert_eq!(fnv1a(""), 0xcbf2_9ce4_8422_2325_u64 as i64);
        assert_ne!(fnv1a("a"), fnv1a("b"));
    }

    #[test]
    fn new_file_is_private_and_migrated() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/diag.db");
        let conn = open(&path, Mode::Write).unwrap();
        let v: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(v, migrate::LATEST);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        drop(conn);
        // Opening again migrates nothing and fails nothing.
        open(&path, Mode::Write).unwrap();
        open(&path, Mode::ReadOnly).unwrap();
    }

    #[test]
    fn a_file_that_is_not_sqlite_is_refused_clearly() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("diag.db");
        std::fs::write(
            &path,
            b"this is not a database, just some text\n".repeat(200),
        )
        .unwrap();
        let err = open(&path, Mode::Write).unwrap_err().to_string();
        assert!(err.contains("cannot be used"), "{err}");
        // Not damaged by the attempt.
        assert!(std::fs::read(&path).unwrap().starts_with(b"this is not"));
    }
}
