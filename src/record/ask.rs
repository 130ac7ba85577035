//! The recorder's side of `store::ask`: a Unix socket beside the recording on
//! which readers ask for what the recorder has received. Each request goes to
//! the writer thread through the channel the watches use, so everything they
//! sent before it is in the transaction that commits for it; the reader is
//! answered after that commit. Idle, the listener costs nothing.

use std::io::ErrorKind;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use thiserror::Error;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::{mpsc, oneshot};

use crate::store::ask::{ANSWER, REQUEST, WAIT, socket_path};

use super::sink::Msg;

/// Requests answered at once; more wait in the listen queue.
const MAX_ASKING: usize = 16;

#[derive(Debug, Error)]
pub enum AskError {
    #[error("cannot listen for readers on {path}: {source}")]
    Bind {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// The socket readers ask on; removed when dropped (a clean stop).
pub struct Socket {
    listener: UnixListener,
    path: PathBuf,
}

impl Drop for Socket {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

impl Socket {
    /// Listens beside the recording `db`. `Ok(None)`: another recorder
    /// already answers for this file.
    pub async fn bind(db: &Path) -> Result<Option<Socket>, AskError> {
        let path = socket_path(db);
        let err = |source| AskError::Bind {
            path: socket_path(db),
            source,
        };
        if path.exists() {
            if UnixStream::connect(&path).await.is_ok() {
                return Ok(None);
            }
            // NB: left by a recorder that was killed: nobody answers on it.
            match std::fs::remove_file(&path) {
                Err(e) if e.kind() != ErrorKind::NotFound => return Err(err(e)),
                _ => {}
            }
        }
        let listener = UnixListener::bind(&path).map_err(err)?;
        let socket = Socket { listener, path };
        // Whoever may read the recording may ask (connecting needs write
        // permission on the socket): the file's own mode, 0600 as created.
        let mode = std::fs::metadata(db).map_or(0o600, |m| m.permissions().mode() & 0o666);
        std::fs::set_permissions(&socket.path, std::fs::Permissions::from_mode(mode))
            .map_err(err)?;
        Ok(Some(socket))
    }

    /// Answers readers until aborted. The writer is reached through a weak
    /// sender, so that this task never keeps it from finishing at shutdown;
    /// aborting it aborts the requests in flight.
    pub async fn serve(self, tx: mpsc::WeakSender<Msg>) {
        let mut asking = tokio::task::JoinSet::new();
        loop {
            let accepted = self.listener.accept().await;
            while asking.try_join_next().is_some() {}
            match accepted {
                Ok((stream, _)) if asking.len() < MAX_ASKING => {
                    asking.spawn(answer(stream, tx.clone()));
                }
                // Too many at once: the reader reads what is committed.
                Ok(_) => {}
                // NB: out of file descriptors, say: a pause instead of a hot loop.
                Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
            }
        }
    }
}

/// One reader's request: commit, then say so.
async fn answer(mut stream: UnixStream, tx: mpsc::WeakSender<Msg>) {
    let mut request = [0u8; REQUEST.len()];
    let read = tokio::time::timeout(WAIT, stream.read_exact(&mut request)).await;
    if !matches!(read, Ok(Ok(_))) || request != REQUEST {
        return;
    }
    let Some(tx) = tx.upgrade() else {
        return;
    };
    let (done, committed) = oneshot::channel();
    let asked = async {
        tx.send(Msg::Commit(done)).await.ok()?;
        drop(tx);
        committed.await.ok()
    };
    if let Ok(Some(())) = tokio::time::timeout(WAIT, asked).await {
        let _ = stream.write_all(ANSWER).await;
    }
}
