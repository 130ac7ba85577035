//! The recording: one SQLite file, WAL, append-only migrations tracked by
//! `PRAGMA user_version`. Every statement lives under `queries/` and is
//! loaded with `include_str!`; parameters are named; nothing is built with
//! `format!`.

pub mod ask;
pub mod audit;
pub mod changes;
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

use rusqlite::{Connection, OpenFlags, Transaction, TransactionBehavior};
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

    /// The recording holds no cluster to read.
    #[error("the recording {path} holds no cluster yet: record one with `kubectl diag record`")]
    NoCluster { path: PathBuf },

    /// `--cluster` names no recorded cluster.
    #[error("--cluster {wanted}: not in the recording; it holds: {holds}")]
    NoSuchCluster { wanted: String, holds: String },

    /// No `--cluster`, and the recording holds several.
    #[error(
        "the recording holds several clusters; choose one with --cluster UID (or a label only one has): {holds}"
    )]
    SeveralClusters { holds: String },

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

    /// The disk is full. The transaction under way is rolled back; what was
    /// committed before it stays.
    // NB: not "nothing is lost": the changes of the failed transaction are
    // not stored (a recorder that restarts fetches them again while the
    // apiserver still holds them), and retention deletes what its limits ask.
    #[error(
        "the disk holding {path} is full: the changes being written were not stored (what was committed before stays); free space or lower --retain/--max-db-size, then run again"
    )]
    DiskFull { path: PathBuf },

    /// `--db` names a device, a folder or a pipe.
    #[error(
        "{path} is not a regular file (a device, folder or pipe), so it cannot be a recording; pass --db with the path of a recording file"
    )]
    NotAFile { path: PathBuf },

    /// The file is not a SQLite database at all.
    #[error(
        "the recording {path} cannot be used: it is not a SQLite file, so not a kubectl-diag recording (it was left untouched); pass --db with the path of a recording"
    )]
    NotSqlite { path: PathBuf },

    /// Another program's SQLite database.
    #[error(
        "{path} is a SQLite database of another program ({what}), not a kubectl-diag recording; it was left untouched: pass --db with the path of a recording or of a new file"
    )]
    Foreign { path: PathBuf, what: String },

    /// A reader was pointed at an empty file.
    #[error(
        "{path} is empty, not a recording yet: record into it with `kubectl diag record --db {path}`, or pass --db with the path of a recording"
    )]
    Empty { path: PathBuf },

    /// The file (or its folder, for the WAL beside it) cannot be read.
    #[error(
        "cannot read the recording {path}: check that the file is readable (and, while a recorder runs, its -wal and -shm files beside it)"
    )]
    Unreadable {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },

    /// A writer (record, import) cannot write the file or create its WAL beside it.
    #[error(
        "cannot write the recording {path}: record and import need the file and its folder writable (readers do not); copy it somewhere writable, or pass --db PATH"
    )]
    Unwritable {
        path: PathBuf,
        #[source]
        source: Option<rusqlite::Error>,
    },

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

/// The error of a failed statement: what it did, on which file. One helper
/// for every reader (`.map_err(q("versions", path))`).
pub(crate) fn q<'a>(
    what: &'static str,
    path: &'a Path,
) -> impl Fn(rusqlite::Error) -> StoreError + 'a {
    move |e| StoreError::query(what, path, e)
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

/// An open recording: its connection, and the path that names it in errors.
/// The readers of the recording are its methods (the `impl Recording` of
/// each module of `store`).
pub struct Recording {
    conn: Connection,
    path: PathBuf,
    /// Read without migrating, from before versions kept their provenance
    /// (migration 13): the clusters with an audit import, whose versions'
    /// provenance is unknown (as migration 13 marks them).
    provenance_unkept: Vec<i64>,
}

impl Recording {
    /// Opens the recording at `path` for `mode` (see [`open`]).
    pub fn open(path: &Path, mode: Mode) -> Result<Recording, StoreError> {
        let conn = open(path, mode)?;
        register_rules(&conn).map_err(|source| StoreError::Sqlite {
            path: path.to_path_buf(),
            source,
        })?;
        let provenance_unkept = provenance_unkept(&conn).map_err(|source| StoreError::Sqlite {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(Recording {
            conn,
            path: path.to_path_buf(),
            provenance_unkept,
        })
    }

    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    /// The connection, to set what only a `&mut` may (a busy handler).
    pub fn connection_mut(&mut self) -> &mut Connection {
        &mut self.conn
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The connection, for a [`writer::Writer`] to own.
    pub fn into_connection(self) -> Connection {
        self.conn
    }

    /// What a failure of the statement `what` on this recording is.
    fn q(&self, what: &'static str) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
        q(what, &self.path)
    }
}

/// The model's rules that the readers' SQL calls, so that a rule has one
/// definition in Rust rather than a copy in SQL (issue 43):
/// `diag_looked_back(type, reason)` is [`crate::model::event::looked_back`].
fn register_rules(conn: &Connection) -> rusqlite::Result<()> {
    use rusqlite::functions::FunctionFlags;
    let flags = FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC;
    conn.create_scalar_function("diag_looked_back", 2, flags, |ctx| {
        let (type_, reason): (String, String) = (ctx.get(0)?, ctx.get(1)?);
        Ok(crate::model::event::looked_back(&type_, &reason))
    })
}

/// Runs `f` in one transaction that takes the write lock at its start
/// (IMMEDIATE), for the writes outside the [`writer::Writer`]: committed when
/// `f` succeeds, rolled back otherwise. `err` tells what a failure to begin or
/// commit was.
///
/// NB: rusqlite's [`Transaction`] rolls back when dropped, so a `?` inside `f`
/// leaves no transaction open.
pub fn in_transaction<T>(
    conn: &Connection,
    err: impl Fn(rusqlite::Error) -> StoreError,
    f: impl FnOnce(&Transaction<'_>) -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    let tx = Transaction::new_unchecked(conn, TransactionBehavior::Immediate).map_err(&err)?;
    let done = f(&tx)?;
    tx.commit().map_err(err)?;
    Ok(done)
}

/// How a connection will be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The recorder and `import`: creates the file (mode 0600) and migrates it.
    Write,
    /// Readers (timeline, check, query, export, sql): the file must exist;
    /// neither it nor its folder is written (see [`open`]).
    ReadOnly,
}

/// How long a statement waits for another connection's lock before it fails.
pub const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Tables every recording of schema version 1 or later holds (migration 1),
/// and from version 2 on (migration 2): what tells a recording from another
/// program's SQLite file.
const TABLES_V1: &[&str] = &[
    "clusters",
    "strings",
    "objects",
    "events",
    "occurrences",
    "recorder_sessions",
    "gaps",
    "watch_positions",
];
const TABLES_V2: &[&str] = &["versions", "update_counts", "relations", "resource_types"];

/// What a file holds, as found without writing to it.
#[derive(Debug, PartialEq, Eq)]
enum Found {
    /// Zero bytes, or a SQLite file with no schema at all: a new recording.
    Empty,
    /// A recording of this schema version (at most [`migrate::LATEST`]).
    Recording(i64),
}

/// How a read-only open finds the WAL's contents.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ReadWal {
    /// No `-wal`: SQLite neither locks the file nor looks for (or creates)
    /// `-wal`/`-shm` beside it.
    Immutable,
    /// Through the `-shm` beside it (created if missing), as a recorder does.
    Shared,
    /// Neither locks nor `-shm`: the WAL index is built in this process's
    /// memory (`locking_mode=EXCLUSIVE` on the `unix-none` VFS). Only where
    /// no recorder runs: a copied recording with its `-wal` and no `-shm`.
    Private,
}

/// The SQLite URI that opens `path` read-only, reading its WAL as `wal` says.
fn read_only_uri(path: &Path, wal: ReadWal) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut uri = String::from("file:");
    for &b in path.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            uri.push(b as char);
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri.push_str(match wal {
        ReadWal::Immutable => "?mode=ro&immutable=1",
        ReadWal::Shared => "?mode=ro",
        ReadWal::Private => "?mode=ro&vfs=unix-none",
    });
    uri
}

/// `path` with `suffix` appended (`diag.db-wal`).
fn beside(path: &Path, suffix: &str) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(suffix);
    PathBuf::from(p)
}

/// Opens `path` for reading only, leaving no file behind.
///
/// Without a `-wal` beside the file no recorder is writing it and none died
/// mid-write: the file is opened immutable, so SQLite creates no `-shm`/`-wal`
/// and needs no write access to the file or its folder (a copied recording,
/// a read-only mount). With a `-wal` (a recorder runs, or was killed), it is
/// opened read-only in WAL mode so the reader sees what the WAL holds.
/// NB: an immutable reader takes no lock; a recorder started during the read
/// could checkpoint under it. Such a read is short, and a reader that sees a
/// torn page gets an error, which a rerun clears.
///
/// NB: a recording copied with its `-wal` but without `-shm` into a folder
/// the reader may not write (issue 27.17: another user, a read-only mount)
/// cannot get a `-shm`, and SQLite answers "unable to open database file" at
/// the first read; as root it worked, since root may write anywhere. No
/// `-shm` means no recorder is writing it, so such a file is read with the
/// WAL index in memory instead ([`ReadWal::Private`]).
fn open_read_only(path: &Path) -> Result<Connection, StoreError> {
    let wal = if !beside(path, "-wal").exists() {
        ReadWal::Immutable
    } else {
        ReadWal::Shared
    };
    match open_read_only_with(path, wal) {
        Err(StoreError::Unreadable { .. })
            if wal == ReadWal::Shared && !beside(path, "-shm").exists() =>
        {
            open_read_only_with(path, ReadWal::Private)
        }
        other => other,
    }
}

fn open_read_only_with(path: &Path, wal: ReadWal) -> Result<Connection, StoreError> {
    let conn = Connection::open_with_flags(
        read_only_uri(path, wal),
        OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|source| read_failure(path, source))?;
    conn.busy_timeout(BUSY_TIMEOUT)
        .map_err(|source| read_failure(path, source))?;
    if wal == ReadWal::Private {
        conn.pragma_update(None, "locking_mode", "EXCLUSIVE")
            .map_err(|source| read_failure(path, source))?;
    }
    // The first read is where a missing `-shm` shows.
    conn.query_row("SELECT count(*) FROM sqlite_master", [], |_| Ok(()))
        .map_err(|source| read_failure(path, source))?;
    Ok(conn)
}

/// A SQLite error met while reading, with its real cause named.
fn read_failure(path: &Path, source: rusqlite::Error) -> StoreError {
    use rusqlite::ErrorCode;
    let code = match &source {
        rusqlite::Error::SqliteFailure(e, _) => Some(e.code),
        _ => None,
    };
    match code {
        Some(ErrorCode::NotADatabase) => StoreError::NotSqlite {
            path: path.to_path_buf(),
        },
        Some(ErrorCode::ReadOnly | ErrorCode::CannotOpen | ErrorCode::PermissionDenied) => {
            StoreError::Unreadable {
                path: path.to_path_buf(),
                source,
            }
        }
        _ => StoreError::Sqlite {
            path: path.to_path_buf(),
            source,
        },
    }
}

/// What the file at `path` is, read without writing a byte to it or beside
/// it (for a file with a `-wal`, see [`open_read_only`]). Refuses anything
/// that is not a recording this build understands.
fn inspect(path: &Path) -> Result<Found, StoreError> {
    let refuse_foreign = |what: String| StoreError::Foreign {
        path: path.to_path_buf(),
        what,
    };
    // The header first, by hand: SQLite is not even asked to open other files.
    let mut header = [0u8; 16];
    let len = std::fs::File::open(path)
        .and_then(|mut f| {
            use std::io::Read;
            let n = f.read(&mut header)?;
            Ok((n, f.metadata()?.len()))
        })
        .map_err(|source| StoreError::Open {
            path: path.to_path_buf(),
            source,
        })?;
    if len.1 == 0 {
        return Ok(Found::Empty);
    }
    if len.0 < 16 || &header != b"SQLite format 3\0" {
        return Err(StoreError::NotSqlite {
            path: path.to_path_buf(),
        });
    }
    let conn = open_read_only(path)?;
    let sqlite = |source| read_failure(path, source);
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(sqlite)?;
    let mut tables: Vec<String> = conn
        .prepare(SQL_SCHEMA_TABLES)
        .and_then(|mut st| st.query_map([], |r| r.get(0))?.collect())
        .map_err(sqlite)?;
    tables.sort();
    let objects: i64 = conn
        .query_row(SQL_SCHEMA_OBJECTS, [], |r| r.get(0))
        .map_err(sqlite)?;
    let has = |wanted: &[&str]| wanted.iter().all(|t| tables.iter().any(|have| have == t));
    let shown = || {
        let mut names = tables
            .iter()
            .take(5)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ");
        if tables.len() > 5 {
            names.push_str(", …");
        }
        names
    };
    if version == 0 {
        return if objects == 0 {
            Ok(Found::Empty)
        } else {
            Err(refuse_foreign(format!(
                "schema version 0 and tables {}",
                shown()
            )))
        };
    }
    if !has(TABLES_V1) || ((2..=migrate::LATEST).contains(&version) && !has(TABLES_V2)) {
        return Err(refuse_foreign(if tables.is_empty() {
            format!("schema version {version} and no tables")
        } else {
            format!("schema version {version} and tables {}", shown())
        }));
    }
    if version > migrate::LATEST {
        return Err(StoreError::TooNew {
            path: path.to_path_buf(),
            found: version,
            known: migrate::LATEST,
        });
    }
    Ok(Found::Recording(version))
}

const SQL_AUDIT_IMPORTED_CLUSTERS: &str =
    include_str!("../../queries/store/audit_imported_clusters.sql");

/// In this recording, read as it is, the clusters whose versions do not say
/// their provenance: before migration 13, those an audit log was imported
/// into (see [`Recording`]).
fn provenance_unkept(conn: &Connection) -> rusqlite::Result<Vec<i64>> {
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if !(7..13).contains(&version) {
        return Ok(Vec::new());
    }
    conn.prepare(SQL_AUDIT_IMPORTED_CLUSTERS)?
        .query_map([], |r| r.get(0))?
        .collect()
}

const SQL_SCHEMA_TABLES: &str = include_str!("../../queries/store/schema_tables.sql");
const SQL_SCHEMA_OBJECTS: &str = include_str!("../../queries/store/schema_objects.sql");

/// Opens (and for writers, creates and migrates) the recording.
///
/// Before any PRAGMA or write, the file is inspected read-only: a path that is
/// not a regular file, a file that is not a kubectl-diag recording (another
/// program's SQLite database, anything else) or a recording of a newer schema
/// is refused, and left exactly as it was.
pub fn open(path: &Path, mode: Mode) -> Result<Connection, StoreError> {
    let sqlite = |source| StoreError::Sqlite {
        path: path.to_path_buf(),
        source,
    };
    let exists = match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => true,
        Ok(_) => {
            return Err(StoreError::NotAFile {
                path: path.to_path_buf(),
            });
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
        Err(source) => {
            return Err(StoreError::Open {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    match mode {
        Mode::ReadOnly => {
            if !exists {
                return Err(StoreError::Missing {
                    path: path.to_path_buf(),
                });
            }
            // NB: a `-wal` beside the file: a recorder may be writing it, with
            // a transaction open for up to --commit-every. Asked, it commits
            // what it has received before this read starts (`ask`).
            if beside(path, "-wal").exists() {
                ask::ask_to_commit(path);
            }
            if inspect(path)? == Found::Empty {
                return Err(StoreError::Empty {
                    path: path.to_path_buf(),
                });
            }
            open_read_only(path)
        }
        Mode::Write => {
            // Whether the file holds no table yet (new, or empty).
            let fresh = !exists || inspect(path)? == Found::Empty;
            if !exists {
                if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    std::fs::create_dir_all(dir).map_err(|source| StoreError::Open {
                        path: path.to_path_buf(),
                        source,
                    })?;
                }
                // NB: create the file ourselves so it is born 0600; SQLite would use 0644.
                OpenOptions::new()
                    .create_new(true)
                    .write(true)
                    .mode(0o600)
                    .open(path)
                    .map_err(|source| StoreError::Open {
                        path: path.to_path_buf(),
                        source,
                    })?;
            }
            let conn = Connection::open_with_flags(
                path,
                OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            )
            .map_err(sqlite)?;
            conn.busy_timeout(BUSY_TIMEOUT).map_err(sqlite)?;
            if conn.is_readonly(rusqlite::MAIN_DB).map_err(sqlite)? {
                return Err(StoreError::Unwritable {
                    path: path.to_path_buf(),
                    source: None,
                });
            }
            let sqlite = |source: rusqlite::Error| match &source {
                rusqlite::Error::SqliteFailure(e, _)
                    if matches!(
                        e.code,
                        rusqlite::ErrorCode::ReadOnly | rusqlite::ErrorCode::CannotOpen
                    ) =>
                {
                    StoreError::Unwritable {
                        path: path.to_path_buf(),
                        source: Some(source),
                    }
                }
                _ => sqlite(source),
            };
            // auto_vacuum and page_size must be chosen before the first table exists
            // (an existing file keeps its own).
            // NB: 4 KiB pages (8 KiB from session 3 to issue 33): the recorder now
            // keeps up by committing a few changes every few seconds, and each commit
            // writes every page it touched whole, so smaller pages write about half as
            // much; catching up ran within the noise of 8 KiB (docs/performance.md,
            // "Disk I/O"). 16 KiB stored more a second but made timelines slower.
            // NB: a checkpoint every 40,000 pages (320 MiB of WAL), not 10,000: index
            // pages that every batch dirties are copied back once per checkpoint, and
            // into a DB of 10 M occurrences commits took 14.1 s instead of 21.7 s per
            // million changes. `record` lowers it under a small --max-db-size.
            // NB: only on a fresh file: on one that has tables, setting auto_vacuum
            // (even to what it is) waits for the write lock, which a recorder may
            // hold for up to its --commit-every, a minute by default.
            if fresh {
                conn.execute_batch(
                    "PRAGMA page_size = 4096;
                     PRAGMA auto_vacuum = INCREMENTAL;",
                )
                .map_err(sqlite)?;
            }
            conn.execute_batch(
                "PRAGMA journal_mode = WAL;
                 PRAGMA synchronous = NORMAL;
                 PRAGMA wal_autocheckpoint = 40000;
                 PRAGMA cache_size = -16384;
                 PRAGMA foreign_keys = OFF;",
            )
            .map_err(sqlite)?;
            migrate::migrate(&conn, path)?;
            Ok(conn)
        }
    }
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
            let mut out = String::with_capacity(36);
            push_uuid(b, &mut out);
            out
        }
        UidKey::Text(t) => t.clone(),
    }
}

/// Appends a UUID's 16 bytes written 8-4-4-4-12 in lowercase hex digits.
pub fn push_uuid(bytes: &[u8; 16], out: &mut String) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for (i, b) in bytes.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            out.push('-');
        }
        out.push(char::from(HEX[usize::from(b >> 4)]));
        out.push(char::from(HEX[usize::from(b & 15)]));
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

/// The throwaway recording of unit tests.
#[cfg(test)]
pub(crate) mod testing {
    use super::{Mode, Recording, writer::Writer};

    /// A new recording in a temporary folder (removed when the folder is
    /// dropped), with one cluster (uid `uid`, label `ctx`), and its writer.
    pub(crate) fn recording() -> (tempfile::TempDir, Writer) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("diag.db");
        let rec = Recording::open(&path, Mode::Write).unwrap();
        let cluster = rec.register_cluster("uid", "ctx", "", 0).unwrap();
        (dir, Writer::new(rec, cluster))
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

    /// Every file beside `path` (`-wal`, `-shm`, `-journal`) that exists.
    fn beside_files(path: &Path) -> Vec<String> {
        ["-wal", "-shm", "-journal"]
            .iter()
            .map(|suffix| beside(path, suffix))
            .filter(|p| p.exists())
            .map(|p| p.display().to_string())
            .collect()
    }

    /// Regression: `import` into another program's SQLite file added the
    /// tool's schema and switched it to WAL (user_version 0), failed after
    /// switching it to WAL (3), or refused after changing its bytes (99).
    #[test]
    fn a_foreign_sqlite_file_is_refused_untouched() {
        let dir = tempfile::tempdir().unwrap();
        for version in [0, 1, 3, migrate::LATEST, 99] {
            let path = dir.path().join(format!("other-{version}.db"));
            {
                let conn = Connection::open(&path).unwrap();
                conn.execute_batch(
                    "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT);
                     INSERT INTO notes (body) VALUES ('keep me');",
                )
                .unwrap();
                conn.pragma_update(None, "user_version", version).unwrap();
            }
            let before = std::fs::read(&path).unwrap();
            for mode in [Mode::Write, Mode::ReadOnly] {
                let err = open(&path, mode).unwrap_err();
                assert!(
                    matches!(err, StoreError::Foreign { .. }),
                    "{version} {mode:?}: {err:?}"
                );
                let text = err.to_string();
                assert!(text.contains(&path.display().to_string()), "{text}");
                assert!(text.contains("left untouched"), "{text}");
                // Byte for byte (so sha256 too), and nothing created beside it.
                assert!(
                    std::fs::read(&path).unwrap() == before,
                    "{version} {mode:?}"
                );
                assert_eq!(beside_files(&path), Vec::<String>::new());
            }
        }
    }

    #[test]
    fn a_recording_from_a_newer_schema_is_refused_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("diag.db");
        drop(open(&path, Mode::Write).unwrap());
        {
            let conn = Connection::open(&path).unwrap();
            conn.pragma_update(None, "user_version", 99).unwrap();
            conn.pragma_update(None, "journal_mode", "DELETE").unwrap();
        }
        let before = std::fs::read(&path).unwrap();
        for mode in [Mode::Write, Mode::ReadOnly] {
            let err = open(&path, mode).unwrap_err();
            assert!(
                matches!(err, StoreError::TooNew { found: 99, .. }),
                "{err:?}"
            );
            assert!(std::fs::read(&path).unwrap() == before, "{mode:?}");
            assert_eq!(beside_files(&path), Vec::<String>::new());
        }
    }

    /// Regression: `--db /dev/null import x` left a world-writable `/dev/null-journal`.
    #[test]
    fn a_device_or_folder_is_refused_and_nothing_is_created_beside_it() {
        for mode in [Mode::Write, Mode::ReadOnly] {
            let err = open(Path::new("/dev/null"), mode).unwrap_err();
            assert!(matches!(err, StoreError::NotAFile { .. }), "{err:?}");
            assert!(err.to_string().contains("/dev/null"), "{err}");
        }
        assert!(!Path::new("/dev/null-journal").exists());
        assert!(!Path::new("/dev/null-wal").exists());
        let dir = tempfile::tempdir().unwrap();
        let err = open(dir.path(), Mode::Write).unwrap_err();
        assert!(matches!(err, StoreError::NotAFile { .. }), "{err:?}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    /// A recording with one cluster, closed cleanly (no `-wal` left).
    fn closed_recording(path: &Path) {
        let rec = Recording::open(path, Mode::Write).unwrap();
        rec.register_cluster("uid-1", "ctx", "", 0).unwrap();
    }

    fn clusters(conn: &Connection) -> i64 {
        conn.query_row("SELECT COUNT(*) FROM clusters", [], |r| r.get(0))
            .unwrap()
    }

    /// Regression: a read left `-shm`/`-wal` beside the file (and failed in a
    /// read-only folder).
    #[test]
    fn a_read_leaves_no_files_behind() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("diag.db");
        closed_recording(&path);
        assert_eq!(beside_files(&path), Vec::<String>::new());
        let before = std::fs::read(&path).unwrap();
        let conn = open(&path, Mode::ReadOnly).unwrap();
        assert_eq!(clusters(&conn), 1);
        assert_eq!(beside_files(&path), Vec::<String>::new());
        drop(conn);
        assert_eq!(beside_files(&path), Vec::<String>::new());
        assert!(std::fs::read(&path).unwrap() == before);
    }

    /// A copied recording: the file and its folder read-only.
    /// NB: root ignores these permissions; as any other user they bite.
    #[test]
    fn reading_works_from_a_read_only_folder_and_file() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("snapshot");
        let path = sub.join("diag.db");
        closed_recording(&path);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o400)).unwrap();
        std::fs::set_permissions(&sub, std::fs::Permissions::from_mode(0o555)).unwrap();
        let read = open(&path, Mode::ReadOnly).map(|conn| clusters(&conn));
        let left = beside_files(&path);
        let write = open(&path, Mode::Write).map(drop);
        std::fs::set_permissions(&sub, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(read.unwrap(), 1);
        assert_eq!(left, Vec::<String>::new());
        // The writer is told what it lacks (root may write anyway).
        if let Err(e) = write {
            assert!(matches!(e, StoreError::Unwritable { .. }), "{e:?}");
        }
    }

    /// With a live writer (its `-wal` beside the file), a reader sees every
    /// commit, including those still only in the WAL.
    #[test]
    fn a_reader_sees_what_a_live_writer_committed_in_the_wal() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("diag.db");
        closed_recording(&path);
        let writer = Recording::open(&path, Mode::Write).unwrap();
        writer
            .connection()
            .pragma_update(None, "wal_autocheckpoint", 0)
            .unwrap();
        writer.register_cluster("uid-2", "ctx2", "", 0).unwrap();
        assert!(beside(&path, "-wal").exists());
        let reader = open(&path, Mode::ReadOnly).unwrap();
        assert_eq!(clusters(&reader), 2);
        writer.register_cluster("uid-3", "ctx3", "", 0).unwrap();
        assert_eq!(clusters(&reader), 3);
        drop(reader);
        drop(writer);
        // The writer's close folds the WAL back: the next read needs nothing beside.
        assert_eq!(beside_files(&path), Vec::<String>::new());
        assert_eq!(clusters(&open(&path, Mode::ReadOnly).unwrap()), 3);
    }

    #[test]
    fn an_empty_file_is_no_recording_for_readers_and_a_new_one_for_writers() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("diag.db");
        std::fs::write(&path, b"").unwrap();
        let err = open(&path, Mode::ReadOnly).unwrap_err();
        assert!(matches!(err, StoreError::Empty { .. }), "{err:?}");
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 0);
        drop(open(&path, Mode::Write).unwrap());
        assert_eq!(clusters(&open(&path, Mode::ReadOnly).unwrap()), 0);
    }
}
