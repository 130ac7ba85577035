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
