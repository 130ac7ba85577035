//! Readers ask a running recorder to commit before they read.
//!
//! The recorder keeps a transaction open for up to `--commit-every` (a minute
//! by default) to spread each commit's fixed pages over many changes (issue 33).
//! A reader of a live recording wants what the recorder has received, not
//! what it committed seconds ago, so it asks: it connects to the Unix socket
//! the recorder listens on beside the file ([`socket_path`]: `diag.db` →
//! `diag.db-commit.sock`), writes [`REQUEST`], and waits (at most [`WAIT`])
//! for [`ANSWER`], which the recorder sends once everything it had received
//! before the request is committed. Nobody reading costs nothing: the
//! recorder's listener sits idle, and a reader of a file no recorder writes
//! fails to connect at once (no socket, or a stale one left by a `kill -9`).

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What a reader sends.
pub const REQUEST: &[u8] = b"commit\n";
/// What the recorder answers once it committed.
pub const ANSWER: &[u8] = b"committed\n";
/// How long a reader waits for the answer before it reads what is committed.
/// The request queues behind what the watches already sent the writer (at
/// most a full channel while catching up, a fraction of a second).
pub const WAIT: Duration = Duration::from_secs(2);

/// The socket beside the recording `db` through which readers ask.
pub fn socket_path(db: &Path) -> PathBuf {
    let mut p = db.as_os_str().to_owned();
    p.push("-commit.sock");
    PathBuf::from(p)
}

/// What asking gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asked {
    /// A recorder committed what it had received.
    Committed,
    /// No recorder listens for this file (none runs, or one died).
    NoRecorder,
    /// A recorder took the request but did not answer in time, or answered
    /// something else: the reader reads what is committed.
    NoAnswer,
}

/// Asks the recorder writing `db`, if one runs, to commit what it has
/// received, and waits for it (at most [`WAIT`]).
pub fn ask_to_commit(db: &Path) -> Asked {
    // NB: connect fails at once without a listener (ENOENT, ECONNREFUSED), and
    // for a path longer than a socket address holds (the recorder could not
    // listen there either).
    let Ok(mut stream) = UnixStream::connect(socket_path(db)) else {
        return Asked::NoRecorder;
    };
    let asked = stream
        .set_write_timeout(Some(WAIT))
        .and_then(|()| stream.set_read_timeout(Some(WAIT)))
        .and_then(|()| stream.write_all(REQUEST));
    if asked.is_err() {
        return Asked::NoAnswer;
    }
    let mut answer = Vec::with_capacity(ANSWER.len());
    match stream.take(ANSWER.len() as u64).read_to_end(&mut answer) {
        Ok(_) if answer == ANSWER => Asked::Committed,
        _ => Asked::NoAnswer,
    }
}

/// How long a writer other than the recorder ([`ask_while_busy`]) waits for
/// the write lock, asking all along.
pub const WAIT_FOR_LOCK: Duration = Duration::from_secs(30);

/// The recording whose recorder a busy writer of this process asks.
///
/// NB: process-wide, not per thread: the recorder sets it up on the thread
/// that opens the file and its writer thread waits on the lock. A process
/// writes one recording; a stale path only makes an ask that nobody answers.
static BUSY_ASKS: std::sync::Mutex<Option<PathBuf>> = std::sync::Mutex::new(None);

thread_local! {
    /// When this thread's current wait for the lock began.
    static BUSY_SINCE: std::cell::Cell<Option<std::time::Instant>> = const { std::cell::Cell::new(None) };
}

/// Makes `conn`, a writer other than the recorder that answers for `db`
/// (`import`, or a recorder of another cluster into the same file), ask that
/// recorder to commit whenever it finds the file locked, and try again at
/// once, for up to [`WAIT_FOR_LOCK`].
///
/// NB: a recorder holds its transaction for up to --commit-every (a minute by
/// default), longer than SQLite's busy timeout. Asked, it commits and lets
/// the lock go until its next change arrives, which may be a millisecond
/// later: one ask before BEGIN could lose that race, an ask at every busy
/// retry wins it. Never on the recorder's own connection: it would ask itself.
pub fn ask_while_busy(conn: &mut rusqlite::Connection, db: &Path) -> rusqlite::Result<()> {
    if let Ok(mut asks) = BUSY_ASKS.lock() {
        *asks = Some(db.to_path_buf());
    }
    conn.busy_handler(Some(on_busy))
}

/// Whether this process's writer asks the recorder holding the lock
/// ([`ask_while_busy`] was set up). NB: its busy handler is the connection's
/// only one: `busy_timeout` (or `PRAGMA busy_timeout`) would replace it, and
/// the writer would then wait without asking, and fail "database is locked".
pub fn asking() -> bool {
    BUSY_ASKS.lock().map(|p| p.is_some()).unwrap_or(false)
}

fn on_busy(attempt: i32) -> bool {
    let now = std::time::Instant::now();
    let since = BUSY_SINCE.with(|s| {
        if attempt == 0 || s.get().is_none() {
            s.set(Some(now));
        }
        s.get().unwrap_or(now)
    });
    if now.duration_since(since) > WAIT_FOR_LOCK {
        return false;
    }
    if attempt > 0 {
        // Another writer than a recorder (a second import), or the race lost:
        // a short pause, then ask again.
        std::thread::sleep(Duration::from_millis((5 * attempt as u64).min(50)));
    }
    let db = BUSY_ASKS.lock().ok().and_then(|p| p.clone());
    if let Some(db) = db {
        ask_to_commit(&db);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::net::UnixListener;

    #[test]
    fn the_socket_is_named_after_the_recording() {
        assert_eq!(
            socket_path(Path::new("/data/diag.db")),
            Path::new("/data/diag.db-commit.sock")
        );
    }

    #[test]
    fn without_a_recorder_a_reader_does_not_wait() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("diag.db");
        let start = std::time::Instant::now();
        assert_eq!(ask_to_commit(&db), Asked::NoRecorder);
        // A socket left by a killed recorder: nobody listens on it.
        drop(UnixListener::bind(socket_path(&db)).unwrap());
        assert_eq!(ask_to_commit(&db), Asked::NoRecorder);
        assert!(start.elapsed() < WAIT, "{:?}", start.elapsed());
    }

    /// A writer waiting on another thread than the one that set it up still
    /// asks: the recorder's writer thread, behind another recorder of the file.
    #[test]
    fn a_busy_writer_asks_the_recorder_holding_the_lock_from_any_thread() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("diag.db");
        let holder = rusqlite::Connection::open(&db).unwrap();
        holder
            .execute_batch("PRAGMA journal_mode = WAL; CREATE TABLE t (x); BEGIN IMMEDIATE; INSERT INTO t VALUES (1);")
            .unwrap();
        let listener = UnixListener::bind(socket_path(&db)).unwrap();
        // The recorder holding the lock: commits when asked, as its writer would.
        let recorder = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut request = [0u8; REQUEST.len()];
            s.read_exact(&mut request).unwrap();
            holder.execute_batch("COMMIT").unwrap();
            s.write_all(ANSWER).unwrap();
        });
        let mut waiter = rusqlite::Connection::open(&db).unwrap();
        ask_while_busy(&mut waiter, &db).unwrap();
        // NB: the holder commits only when asked: without the ask this waits
        // WAIT_FOR_LOCK and fails.
        std::thread::spawn(move || waiter.execute("INSERT INTO t VALUES (2)", []).map(|_| ()))
            .join()
            .unwrap()
            .unwrap();
        recorder.join().unwrap();
    }

    #[test]
    fn a_recorder_that_answers_has_committed() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("diag.db");
        let listener = UnixListener::bind(socket_path(&db)).unwrap();
        let recorder = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut request = [0u8; REQUEST.len()];
            s.read_exact(&mut request).unwrap();
            assert_eq!(request, REQUEST);
            s.write_all(ANSWER).unwrap();
        });
        assert_eq!(ask_to_commit(&db), Asked::Committed);
        recorder.join().unwrap();
    }
}
