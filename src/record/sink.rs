//! The writer thread: receives what the watches saw, stores it in batched
//! transactions, keeps the session's heartbeat, gaps and watch positions, and
//! applies retention. It is the only thread that writes to the recording.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use rusqlite::Connection;
use tokio::sync::mpsc;

use crate::model::Change;
use crate::store::StoreError;
use crate::store::session::Gap;
use crate::store::writer::{self, Applied, Writer};

use super::flush::{self, MAX_BATCH, Next, Open, WalBudget};
use super::retention::{self, Retention};

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
    /// Discovery found these types (again): kept so that names such as a
    /// custom resource's short name resolve offline.
    ResourceTypes(Vec<crate::model::ResourceType>),
    /// Time for the heartbeat.
    Tick,
    /// Time for retention.
    Maintain,
    /// A reader asks for what the recorder has received (`record::ask`):
    /// the open transaction commits, then `done` is told.
    Commit(tokio::sync::oneshot::Sender<()>),
    /// A destination confirmed the outbox up to `cursor` (`rows` rows): kept
    /// in the same transaction as the next changes (`ship::outbox::confirm`).
    Shipped {
        destination: i64,
        cursor: i64,
        rows: u64,
    },
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
    /// The WAL beside the recording, in bytes.
    pub wal_bytes: AtomicU64,
    pub commits: AtomicU64,
    /// When the writer last committed (epoch ms; 0: not yet), for `/healthz`.
    pub last_commit_ms: AtomicU64,
    /// When the writer last took messages into a transaction (epoch ms), for
    /// `/healthz`: inside a long window it takes heartbeats, not commits.
    pub last_taken_ms: AtomicU64,
    /// Occurrences of this cluster in the recording, every session's: set when
    /// the writer starts and after retention, moved by each commit.
    pub recording_occurrences: AtomicU64,
    /// Watches whose requests fail, by their key, with the time (epoch ms) the
    /// failures began: blind now, for /metrics, /healthz and the status line.
    pub blind: Blind,
    /// `--ship`: what the shippers did.
    pub ship: crate::ship::ShipStats,
    /// Occurrences by namespace, involved kind, reason and type, for /metrics.
    pub events: crate::metrics::EventRates,
}

/// The task id under which the recorder's own list probe marks a watch
/// blind (`record::Rediscovery::probe`).
pub const PROBE: u64 = u64::MAX;

/// The watches that are blind now (see [`Stats::blind`]): by key, the
/// failures' start and which watch task it is (a type's restarted watch
/// shares its key with the one it replaces, which may end after it started).
#[derive(Debug, Default)]
pub struct Blind(std::sync::Mutex<std::collections::BTreeMap<Arc<str>, (i64, u64)>>);

impl Blind {
    fn map(&self) -> std::sync::MutexGuard<'_, std::collections::BTreeMap<Arc<str>, (i64, u64)>> {
        // NB: nothing panics while holding it; a poisoned map is still right.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Watch task `task` of `watch` failed at `now` (or, for [`PROBE`], its
    /// type's list did): since when it has been failing.
    pub fn failing(&self, watch: &Arc<str>, task: u64, now: i64) -> i64 {
        let mut map = self.map();
        // NB: the earliest start stays: a watch restarted while blind (or
        // blind by the recorder's probe) was blind all along.
        let entry = map.entry(watch.clone()).or_insert((now, task));
        entry.1 = task;
        entry.0
    }

    /// Watch task `task` of `watch` sees again (or stopped): whether it had been failing.
    pub fn cleared(&self, watch: &str, task: u64) -> bool {
        let mut map = self.map();
        if map.get(watch).is_some_and(|(_, t)| *t == task) {
            map.remove(watch);
            return true;
        }
        false
    }

    /// Every blind watch with its start, in key order.
    pub fn list(&self) -> Vec<(Arc<str>, i64)> {
        self.map().iter().map(|(k, v)| (k.clone(), v.0)).collect()
    }

    pub fn count(&self) -> usize {
        self.map().len()
    }
}

pub use crate::units::now_ms;

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
    /// Its occurrences by label set, counted into [`Stats::events`] once committed.
    rates: Vec<(crate::metrics::EventLabels, u64)>,
    /// Retention was asked for.
    maintain: bool,
    /// It holds changes from a list (no resourceVersion of their own).
    listing: bool,
    /// Readers waiting for this transaction's commit.
    asked: Vec<tokio::sync::oneshot::Sender<()>>,
}

impl Batch {
    /// What the committed batch stored, counted into `stats`.
    fn count_into(&mut self, stats: &Stats) {
        stats.rows.fetch_add(self.applied.rows, Ordering::Relaxed);
        stats.events.add_all(self.rates.drain(..));
        stats
            .occurrences
            .fetch_add(self.applied.occurrences, Ordering::Relaxed);
        stats
            .recording_occurrences
            .fetch_add(self.applied.occurrences, Ordering::Relaxed);
        stats
            .versions
            .fetch_add(self.applied.versions, Ordering::Relaxed);
    }

    /// Stores one message in the open transaction.
    fn take(
        &mut self,
        msg: Msg,
        writer: &mut writer::Batch<'_>,
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
                // NB: the change is done with once stored: its strings move into the
                // labels, so counting costs the writer no allocation per change.
                if let (Change::Event(crate::model::EventChange::Upsert(mut o)), n @ 1..) =
                    (change, applied.occurrences)
                {
                    let take = std::mem::take::<String>;
                    self.rates.push((
                        crate::metrics::EventLabels {
                            namespace: take(&mut o.namespace),
                            involved_kind: take(&mut o.involved.kind),
                            reason: take(&mut o.reason),
                            type_: take(&mut o.type_),
                        },
                        n,
                    ));
                }
                self.applied.rows += applied.rows;
                self.applied.occurrences += applied.occurrences;
                self.applied.versions += applied.versions;
                stats.changes.fetch_add(1, Ordering::Relaxed);
                self.oldest.get_or_insert(received);
                match rv {
                    Some(rv) => {
                        self.positions.insert(resource, rv);
                    }
                    None => self.listing = true,
                }
            }
            Msg::Position { resource, rv } => {
                self.positions.insert(resource, rv);
            }
            Msg::Gap(gap) => {
                writer.recording().record_gap(writer.cluster(), &gap)?;
                stats.gaps.fetch_add(1, Ordering::Relaxed);
            }
            Msg::ResourceTypes(types) => writer
                .recording()
                .save_resource_types(writer.cluster(), &types)?,
            Msg::Tick => writer.recording().heartbeat(session_id, now_ms())?,
            Msg::Maintain => self.maintain = true,
            Msg::Commit(done) => self.asked.push(done),
            Msg::Shipped {
                destination,
                cursor,
                rows,
            } => crate::ship::outbox::confirm(
                writer.connection(),
                destination,
                cursor,
                rows,
                now_ms(),
            )
            .map_err(|source| StoreError::Sqlite {
                path: PathBuf::from("the recording's outbox"),
                source,
            })?,
        }
        Ok(())
    }
}

/// Runs until every sender is dropped; then commits what is left and stops
/// the session. A transaction commits at the latest `commit_every` after its
/// oldest change (see [`flush::next`]).
pub fn run(
    mut writer: Writer,
    path: PathBuf,
    session_id: i64,
    mut rx: mpsc::Receiver<Msg>,
    stats: Arc<Stats>,
    retention: Retention,
    commit_every: std::time::Duration,
) -> Result<(), StoreError> {
    let budget = wal_budget(writer.connection(), &path, &retention)?;
    let mut checkpoint_pages = budget.steady_pages;
    set_checkpoint_pages(writer.connection(), &path, checkpoint_pages)?;
    count_recording(&writer, &stats)?;
    // NB: messages are taken many at a time. Taken one by one from a full
    // channel (catching up), each gave a permit back and woke the waiting
    // watch task: a futex call per change. perf put the writer thread in
    // futex 20 % of its time before, 14 % after; the rest is glibc's free,
    // which mimalloc removed (docs/performance.md, session 6).
    let mut msgs = Vec::with_capacity(MAX_BATCH);
    // Only to wait for the channel with a timeout: it runs nothing else.
    // NB: without it (it could not be built) the writer sleeps in slices.
    let waiting = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .ok();
    // Whether the WAL holds more than heartbeats since it was last emptied.
    let mut wal_dirty = false;
    // Whether a large batch (a list, a burst) has passed since memory was last given back.
    let mut burst = false;
    // Whether the recording was said to be left over --max-db-size.
    let mut warned_over = false;
    while rx.blocking_recv_many(&mut msgs, MAX_BATCH) > 0 {
        let mut tx = writer.begin()?;
        let mut batch = Batch::default();
        loop {
            for msg in msgs.drain(..) {
                batch.take(msg, &mut tx, session_id, &stats)?;
            }
            stats
                .last_taken_ms
                .store(now_ms().unsigned_abs(), Ordering::Relaxed);
            let open = Open {
                taken: batch.taken,
                age: batch.oldest.map(|t| t.elapsed()),
                asked: !batch.asked.is_empty(),
                listing: batch.listing,
                channel_empty: rx.is_empty(),
                channel_closed: rx.is_closed(),
            };
            match flush::next(open, commit_every) {
                Next::Commit => break,
                Next::Take => {
                    rx.blocking_recv_many(&mut msgs, MAX_BATCH - batch.taken);
                }
                // NB: a short sleep first, so that at thousands a second the
                // writer wakes once per slice, not once per change; then, if
                // nothing came, a wait woken by the next arrival (a burst does
                // not wait in the channel as decoded objects: one sleep for a
                // whole window cost +17 MiB RSS for a list of 10,000 Pods),
                // not more sleeps: over a 5 s window at 10 changes a second,
                // 10 ms sleeps were 100 wake-ups a second, a tenth of the
                // recorder's CPU.
                Next::Wait(pause) => {
                    std::thread::sleep(pause.min(flush::WAIT_SLICE));
                    let left = pause.saturating_sub(flush::WAIT_SLICE);
                    if let Some(waiting) = waiting.as_ref().filter(|_| rx.is_empty())
                        && !left.is_zero()
                    {
                        let room = MAX_BATCH - batch.taken;
                        waiting.block_on(async {
                            let _ = tokio::time::timeout(left, rx.recv_many(&mut msgs, room)).await;
                        });
                    }
                }
            }
        }
        let now = now_ms();
        // The position lands in the same transaction as the data it covers:
        // after a crash, a resumed watch never skips what was not committed.
        for (resource, rv) in std::mem::take(&mut batch.positions) {
            tx.save_position(&resource, &rv, now)?;
        }
        // The budget applies to the checkpoint that follows this commit.
        let pages = budget.pages(batch.taken);
        if pages != checkpoint_pages {
            set_checkpoint_pages(tx.connection(), &path, pages)?;
            checkpoint_pages = pages;
        }
        tx.commit()?;
        for done in batch.asked.drain(..) {
            // NB: the reader may have given up waiting; nothing to tell then.
            let _ = done.send(());
        }
        batch.count_into(&stats);
        if let Some(received) = batch.oldest {
            stats
                .lag_ms
                .store(received.elapsed().as_millis() as u64, Ordering::Relaxed);
            wal_dirty = true;
        } else if wal_dirty {
            // Only heartbeats or bookmarks: nothing changed since the last
            // batch, so the WAL can go while nobody writes.
            // NB: once, not at every idle heartbeat: each truncation costs a
            // checkpoint and two fsyncs, more than the heartbeat's one page.
            wal_dirty = !truncate_wal_if_idle(writer.connection());
        }
        // NB: at the first quiet batch after a burst, not at the next idle
        // heartbeat: the burst's memory would stay for up to 5 s more, and
        // once, because the page cache is worth keeping while changes flow.
        if batch.taken >= flush::WORTH_BATCH {
            burst = true;
        } else if burst && batch.taken < flush::QUIET_BATCH {
            release_memory(writer.connection());
            burst = false;
        }
        if batch.maintain {
            maintain(&mut writer, &path, &retention, now, &mut warned_over)?;
            count_recording(&writer, &stats)?;
        }
        stats
            .db_bytes
            .store(retention::db_bytes(&path), Ordering::Relaxed);
        stats
            .wal_bytes
            .store(retention::wal_bytes(&path), Ordering::Relaxed);
        stats
            .last_commit_ms
            .store(now.unsigned_abs(), Ordering::Relaxed);
        // Last: whoever waits for a commit sees what followed it too.
        stats.commits.fetch_add(1, Ordering::Relaxed);
    }
    writer.recording().stop_session(session_id, now_ms())?;
    // A clean stop leaves a single file: fold the WAL back in.
    let _ = writer
        .connection()
        .execute_batch("PRAGMA wal_checkpoint(TRUNCATE)");
    Ok(())
}

/// Retention, asked for by a maintenance tick; says once while the file
/// stays over `--max-db-size`.
fn maintain(
    writer: &mut Writer,
    path: &std::path::Path,
    retention: &Retention,
    now: i64,
    warned_over: &mut bool,
) -> Result<(), StoreError> {
    let cluster = writer.cluster();
    let outcome =
        writer.delete_with(|conn, path| retention::apply(conn, path, retention, cluster, now))?;
    // Once while it stays over: a maintenance every 10 minutes would
    // say it again and again.
    match outcome.over {
        Some(used) if !*warned_over => {
            *warned_over = true;
            // NB: the writer thread has no borrow of the command's
            // writer; stderr as the watch tasks write it.
            eprintln!("\n{}", retention::over_limit_warning(path, used, retention));
        }
        Some(_) => {}
        None => *warned_over = false,
    }
    Ok(())
}

/// The WAL budget for this recording: its page size, and `--max-db-size`.
fn wal_budget(
    conn: &Connection,
    path: &Path,
    retention: &Retention,
) -> Result<WalBudget, StoreError> {
    let page_size: i64 = conn
        .pragma_query_value(None, "page_size", |r| r.get(0))
        .map_err(|e| StoreError::query("page_size", path, e))?;
    let page_size = page_size.unsigned_abs();
    let catch_up = retention::wal_pages(retention.max_bytes, page_size);
    let budget = WalBudget::new(page_size, catch_up);
    // A WAL that grew while catching up is cut back to the steady budget the
    // next time it starts over.
    conn.pragma_update(
        None,
        "journal_size_limit",
        budget.steady_pages * page_size as i64,
    )
    .map_err(|e| StoreError::query("journal_size_limit", path, e))?;
    Ok(budget)
}

/// Gives back what a burst (the initial list, a relist) left behind once the
/// writer is idle: SQLite's page cache, which a list of 30,000 objects fills
/// to its 16 MiB while an idle recorder touches a few pages a minute, and the
/// free holes that SQLite's allocations leave in the writer thread's glibc
/// arena, which glibc keeps mapped until told otherwise.
// NB: SQLite allocates through the C library's malloc, not the Rust global
// allocator (mimalloc), so its memory stays in glibc's arena after it is freed.
fn release_memory(conn: &Connection) {
    let _ = conn.execute_batch("PRAGMA shrink_memory");
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks glibc's own arenas; it takes no pointer of ours.
    unsafe {
        libc::malloc_trim(0);
    }
}

fn set_checkpoint_pages(conn: &Connection, path: &Path, pages: i64) -> Result<(), StoreError> {
    conn.pragma_update(None, "wal_autocheckpoint", pages)
        .map_err(|e| StoreError::query("wal_autocheckpoint", path, e))
}

/// Folds the WAL into the recording and empties it, unless a reader is using
/// it: then it is left for the next idle heartbeat, and the writer does not
/// wait. Whether it was emptied.
fn truncate_wal_if_idle(conn: &Connection) -> bool {
    // NB: a recorder sharing its file with another cluster's recorder must
    // keep the busy handler that asks it to commit: setting a busy timeout
    // here replaced it, and its next write then failed "database is locked"
    // (tests/it/record_cluster.rs, a recorder sharing its file, failed in CI).
    // Its WAL is left to SQLite's automatic checkpoints.
    if crate::store::ask::asking() {
        return true;
    }
    let _ = conn.busy_timeout(std::time::Duration::ZERO);
    // (busy, WAL frames, frames checkpointed): busy is 1 when a reader kept it.
    let busy = conn
        .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| {
            r.get::<_, i64>(0)
        })
        .unwrap_or(1);
    let _ = conn.busy_timeout(crate::store::BUSY_TIMEOUT);
    busy == 0
}

/// Sets [`Stats::recording_occurrences`] from what the recording holds.
fn count_recording(writer: &Writer, stats: &Stats) -> Result<(), StoreError> {
    let stored = writer.recording().occurrences_stored(writer.cluster())?;
    stats.recording_occurrences.store(stored, Ordering::Relaxed);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Change, EventChange, EventObservation, ObjectRef};
    use crate::store::{self, Mode};

    fn change(i: u64) -> Msg {
        Msg::Change {
            change: Change::Event(EventChange::Upsert(Box::new(EventObservation {
                uid: format!("00000000-0000-4000-8000-{i:012x}"),
                namespace: "ns".into(),
                name: format!("web.{i:x}"),
                involved: ObjectRef {
                    api_version: "v1".into(),
                    kind: "Pod".into(),
                    namespace: "ns".into(),
                    name: "web".into(),
                    ..Default::default()
                },
                reason: "BackOff".into(),
                message: "Back-off restarting failed container".into(),
                first: 1_795_000_000_000,
                last: 1_795_000_000_000,
                count: 1,
                ..Default::default()
            }))),
            resource: "events".into(),
            rv: Some(i.to_string()),
            received: Instant::now(),
        }
    }

    /// The writer thread on a fresh recording.
    struct Running {
        _dir: tempfile::TempDir,
        path: PathBuf,
        tx: mpsc::Sender<Msg>,
        thread: std::thread::JoinHandle<Result<(), StoreError>>,
        stats: Arc<Stats>,
    }

    fn spawn() -> Running {
        spawn_committing_every(std::time::Duration::from_millis(250))
    }

    fn spawn_committing_every(commit_every: std::time::Duration) -> Running {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sink.db");
        let conn = store::Recording::open(&path, Mode::Write).unwrap();
        let cluster = conn.register_cluster("uid", "test", "", 0).unwrap();
        let start = conn.start_session(cluster, "uid", "watch", 0).unwrap();
        let stats = Arc::new(Stats::default());
        let (tx, rx) = mpsc::channel(1_000);
        let thread = {
            let (path, stats) = (path.clone(), stats.clone());
            std::thread::spawn(move || {
                let writer = Writer::new(conn, cluster);
                run(
                    writer,
                    path,
                    start.id,
                    rx,
                    stats,
                    Retention::default(),
                    commit_every,
                )
            })
        };
        Running {
            _dir: dir,
            path,
            tx,
            thread,
            stats,
        }
    }

    fn wait_for_commits(stats: &Stats, n: u64) {
        while stats.commits.load(Ordering::Relaxed) < n {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }

    #[test]
    fn changes_arriving_within_the_commit_window_share_one_transaction() {
        // NB: bound, not left to `..`: the folder would go with the temporary.
        let Running {
            _dir,
            tx,
            thread,
            stats,
            ..
        } = spawn();
        for i in 0..50 {
            tx.blocking_send(change(i)).unwrap();
        }
        wait_for_commits(&stats, 1);
        drop(tx);
        thread.join().unwrap().unwrap();
        assert_eq!(stats.commits.load(Ordering::Relaxed), 1);
        assert_eq!(stats.occurrences.load(Ordering::Relaxed), 50);
        assert_eq!(stats.recording_occurrences.load(Ordering::Relaxed), 50);
        // Issue 45: /metrics's Event rates count the same occurrences, by reason.
        assert_eq!(stats.events.total(), 50);
        assert_eq!(stats.events.series(), 1);
    }

    /// A reader's request commits what came before it at once, however long
    /// the window: the reader is told only once it is in the file.
    #[test]
    fn a_reader_asking_gets_everything_received_before_it_committed() {
        let Running {
            _dir,
            path,
            tx,
            thread,
            stats,
        } = spawn_committing_every(std::time::Duration::from_secs(3600));
        for i in 0..3 {
            tx.blocking_send(change(i)).unwrap();
        }
        let (done, committed) = tokio::sync::oneshot::channel();
        tx.blocking_send(Msg::Commit(done)).unwrap();
        committed.blocking_recv().unwrap();
        let reader = store::Recording::open(&path, Mode::ReadOnly).unwrap();
        let stored: i64 = reader
            .connection()
            .query_row("SELECT SUM(n) FROM occurrences", [], |r| r.get(0))
            .unwrap();
        assert_eq!(stored, 3);
        // Idle, a request commits nothing new and is answered all the same.
        let (done, committed) = tokio::sync::oneshot::channel();
        tx.blocking_send(Msg::Commit(done)).unwrap();
        committed.blocking_recv().unwrap();
        drop(tx);
        thread.join().unwrap().unwrap();
        // One commit for each request: the hour-long window never ran out.
        assert_eq!(stats.commits.load(Ordering::Relaxed), 2);
    }

    #[test]
    fn an_idle_heartbeat_empties_the_wal() {
        let Running {
            _dir,
            path,
            tx,
            thread,
            stats,
        } = spawn();
        tx.blocking_send(change(1)).unwrap();
        wait_for_commits(&stats, 1);
        assert!(
            retention::wal_bytes(&path) > 0,
            "the change went to the WAL"
        );
        tx.blocking_send(Msg::Tick).unwrap();
        wait_for_commits(&stats, 2);
        assert_eq!(retention::wal_bytes(&path), 0);
        drop(tx);
        thread.join().unwrap().unwrap();
    }

    #[test]
    fn the_recording_count_includes_earlier_sessions() {
        let Running {
            _dir: dir,
            path,
            tx,
            thread,
            ..
        } = spawn();
        for i in 0..3 {
            tx.blocking_send(change(i)).unwrap();
        }
        drop(tx);
        thread.join().unwrap().unwrap();
        let conn = store::Recording::open(&path, Mode::Write).unwrap();
        let cluster = conn.register_cluster("uid", "test", "", 1).unwrap();
        let start = conn.start_session(cluster, "uid", "watch", 1).unwrap();
        let stats = Arc::new(Stats::default());
        let (tx, rx) = mpsc::channel(10);
        tx.blocking_send(change(3)).unwrap();
        drop(tx);
        let writer = Writer::new(conn, cluster);
        run(
            writer,
            path,
            start.id,
            rx,
            stats.clone(),
            Retention::default(),
            flush::DEFAULT_COMMIT_EVERY,
        )
        .unwrap();
        assert_eq!(stats.occurrences.load(Ordering::Relaxed), 1);
        assert_eq!(stats.recording_occurrences.load(Ordering::Relaxed), 4);
        drop(dir);
    }
}
