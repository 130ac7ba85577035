//! The writer thread: receives what the watches saw, stores it in batched
//! transactions, keeps the session's heartbeat, gaps and watch positions, and
//! applies retention. It is the only thread that writes to the recording.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use tokio::sync::mpsc;

use crate::model::Change;
use crate::store::StoreError;
use crate::store::session::{self, Gap};
use crate::store::writer::{Applied, Writer};

use super::retention::{self, Retention};

/// Most messages one transaction takes; more wait for the next.
pub const MAX_BATCH: usize = 10_000;

/// What the watches tell the writer.
#[derive(Debug)]
pub enum Msg {
    /// A change, with the resourceVersion it brings the watch of `resource` to (none during a list).
    Change {
        change: Change,
        resource: Arc<str>,
        rv: Option<String>,
        received: Instant,
    },
    /// The watch of `resource` is at `rv` (a bookmark, or the end of a list).
    Position { resource: Arc<str>, rv: String },
    /// An interval in which a watch was blind.
    Gap(Gap),
    /// Time for the heartbeat.
    Tick,
    /// Time for retention.
    Maintain,
}

/// Counters shared with the status line and /metrics.
#[derive(Debug, Default)]
pub struct Stats {
    pub changes: AtomicU64,
    pub rows: AtomicU64,
    pub occurrences: AtomicU64,
    pub versions: AtomicU64,
    pub gaps: AtomicU64,
    pub watch_restarts: AtomicU64,
    pub gone_410: AtomicU64,
    pub lag_ms: AtomicU64,
    pub db_bytes: AtomicU64,
    pub commits: AtomicU64,
}

pub fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// What one transaction gathered besides its rows.
#[derive(Default)]
struct Batch {
    /// Messages taken.
    taken: usize,
    /// When its oldest change was received.
    oldest: Option<Instant>,
    /// Where each watch stands once this batch is stored.
    positions: HashMap<Arc<str>, String>,
    /// What its changes stored, counted into [`Stats`] once committed.
    applied: Applied,
    /// Retention was asked for.
    maintain: bool,
}

impl Batch {
    /// Stores one message in the open transaction.
    fn take(
        &mut self,
        msg: Msg,
        writer: &mut Writer,
        path: &Path,
        session_id: i64,
        stats: &Stats,
    ) -> Result<(), StoreError> {
        self.taken += 1;
        match msg {
            Msg::Change {
                change,
                resource,
                rv,
                received,
            } => {
                let applied = writer.apply_change(&change)?;
                self.applied.rows += applied.rows;
                self.applied.occurrences += applied.occurrences;
                self.applied.versions += applied.versions;
                stats.changes.fetch_add(1, Ordering::Relaxed);
                self.oldest.get_or_insert(received);
                if let Some(rv) = rv {
                    self.positions.insert(resource, rv);
                }
            }
            Msg::Position { resource, rv } => {
                self.positions.insert(resource, rv);
            }
            Msg::Gap(gap) => {
                session::record_gap(writer.connection(), path, writer.cluster(), &gap)?;
                stats.gaps.fetch_add(1, Ordering::Relaxed);
            }
            Msg::Tick => session::heartbeat(writer.connection(), path, session_id, now_ms())?,
            Msg::Maintain => self.maintain = true,
        }
        Ok(())
    }
}

/// Runs until every sender is dropped; then commits what is left and stops the session.
pub fn run(
    mut writer: Writer,
    path: PathBuf,
    session_id: i64,
    mut rx: mpsc::Receiver<Msg>,
    stats: Arc<Stats>,
    retention: Retention,
) -> Result<(), StoreError> {
    // NB: messages are taken many at a time. Taken one by one from a full
    // channel (catching up), each gave a permit back and woke the waiting
    // watch task: a futex call per change. perf put the writer thread in
    // futex 20 % of its time before, 14 % after; the rest is glibc's free,
    // which mimalloc removed (docs/performance.md, session 6).
    let mut msgs = Vec::with_capacity(MAX_BATCH);
    while rx.blocking_recv_many(&mut msgs, MAX_BATCH) > 0 {
        writer.begin()?;
        let mut batch = Batch::default();
        loop {
            for msg in msgs.drain(..) {
                batch
                    .take(msg, &mut writer, &path, session_id, &stats)
                    .inspect_err(|_| writer.rollback())?;
            }
            // What arrived meanwhile joins this batch, up to its size.
            if batch.taken >= MAX_BATCH || rx.is_empty() {
                break;
            }
            rx.blocking_recv_many(&mut msgs, MAX_BATCH - batch.taken);
        }
        let now = now_ms();
        // The position lands in the same transaction as the data it covers:
        // after a crash, a resumed watch never skips what was not committed.
        for (resource, rv) in batch.positions {
            writer
                .save_position(&resource, &rv, now)
                .inspect_err(|_| writer.rollback())?;
        }
        writer.commit()?;
        stats.rows.fetch_add(batch.applied.rows, Ordering::Relaxed);
        stats
            .occurrences
            .fetch_add(batch.applied.occurrences, Ordering::Relaxed);
        stats
            .versions
            .fetch_add(batch.applied.versions, Ordering::Relaxed);
        stats.commits.fetch_add(1, Ordering::Relaxed);
        if let Some(received) = batch.oldest {
            stats
                .lag_ms
                .store(received.elapsed().as_millis() as u64, Ordering::Relaxed);
        }
        if batch.maintain {
            retention::apply(writer.connection(), &path, &retention, now)?;
            writer.forget();
        }
        stats
            .db_bytes
            .store(retention::db_bytes(&path), Ordering::Relaxed);
    }
    session::stop_session(writer.connection(), &path, session_id, now_ms())?;
    // A clean stop leaves a single file: fold the WAL back in.
    let _ = writer
        .connection()
        .execute_batch("PRAGMA wal_checkpoint(TRUNCATE)");
    Ok(())
}
