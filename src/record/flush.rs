//! When the writer thread commits, and when the WAL is folded back into the
//! recording: the recorder's disk I/O.
//!
//! Every commit appends each page it dirtied to the WAL, whole, and some
//! pages are dirtied by any commit however little it holds (the header, the
//! pointer map, the watch positions, the last page of each growing table and
//! index). So a commit is worth its cost only once it holds many changes: a
//! transaction stays open until it holds [`WORTH_BATCH`] messages, or its
//! oldest change is `--commit-every` old ([`DEFAULT_COMMIT_EVERY`], a minute), or a
//! reader asks for what the recorder has received (`record::ask`), or it is
//! [`MAX_BATCH`] messages while catching up; one that holds a list commits
//! whenever the channel is empty. Nothing is lost by waiting: a
//! watch resumes from its last committed position, so after a crash the
//! apiserver presents again whatever was not committed (issue 33). The WAL
//! has a small page budget while the recorder keeps up, and a large one only
//! while it catches up, where a large WAL saves copying the same index pages
//! back again and again (docs/performance.md, "Disk I/O").

use std::time::Duration;

/// Most messages one transaction takes; more wait for the next.
pub const MAX_BATCH: usize = 10_000;

/// How long the oldest change of a transaction waits for others by default
/// (`record --commit-every`). A commit dirties about 16 pages of 4 KiB however
/// little it holds, so at 10 changes a second a 5 s window wrote ~1,650 bytes
/// per change and a 20 s one ~660, against an event exporter's ~490; a minute
/// spreads them over ~600 changes. Readers do not wait for it, they ask
/// (`record::ask`), and a crash loses nothing: the watches resume from the
/// last committed position (docs/performance.md, "Disk I/O", issue 33).
pub const DEFAULT_COMMIT_EVERY: Duration = Duration::from_secs(60);

/// The default window with `--ship`: a destination reads the outbox as soon as
/// a commit lands, like a reader that never stops looking, so its lag is the
/// window (issues 31 and 32: at most 5 s to the store).
pub const DEFAULT_COMMIT_EVERY_SHIPPING: Duration = Duration::from_secs(5);

/// The longest window of a recorder that shares its file with another
/// recorder (two clusters into one file), which answers for the file: this
/// one asks it to commit when it needs the lock, and holds the lock itself no
/// longer than this, well inside the other's busy timeout.
pub const SHARED_COMMIT_EVERY: Duration = Duration::from_secs(1);

/// Messages that make a transaction worth its fixed pages: about 12 pages at
/// 200 changes a second spread over 2,000 changes are ~50 bytes each. Reached
/// before the window only above 400 changes a second, where it also keeps a
/// transaction's dirty pages well inside SQLite's 16 MiB page cache.
pub const WORTH_BATCH: usize = 2_000;

/// Messages in one transaction under which the writer is quiet: the first
/// such batch after a burst gives the burst's memory back.
pub const QUIET_BATCH: usize = 32;

/// The WAL's size, in bytes, at which it is checkpointed while the recorder
/// keeps up. After the checkpoint the WAL starts over and is cut back to this
/// size, so the disk holds the recording plus about this much (and a `kill -9`
/// leaves at most about this much beside it).
pub const STEADY_WAL_BYTES: u64 = 8 << 20;

/// The writer's sleep while a transaction waits for more, before it waits for
/// the next arrival: what arrives meanwhile waits in the channel at most this
/// long before it is stored into the open transaction, so a burst does not
/// pile up there, and at thousands a second it wakes once per slice.
pub const WAIT_SLICE: Duration = Duration::from_millis(10);

/// What the writer does after taking what the channel held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Commit the open transaction now.
    Commit,
    /// Take what is waiting in the channel into this transaction.
    Take,
    /// Nothing is waiting and the window is still open for this long: sleep
    /// [`WAIT_SLICE`], then wait for the next arrival at most this long, and
    /// decide again.
    Wait(Duration),
}

/// Where a transaction stands when the writer decides what to do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Open {
    /// Messages taken into it.
    pub taken: usize,
    /// How long ago its oldest change was received (`None`: it holds no
    /// change, only heartbeats, positions, gaps).
    pub age: Option<Duration>,
    /// A reader asked for what the recorder has received.
    pub asked: bool,
    /// It holds changes from a list (the start, a relist): the recorder is
    /// catching up, a burst that is worth its commit whenever it pauses.
    pub listing: bool,
    pub channel_empty: bool,
    pub channel_closed: bool,
}

/// Decides [`Next`] for the open transaction, which commits at the latest
/// `commit_every` after its oldest change.
pub fn next(open: Open, commit_every: Duration) -> Next {
    // NB: an asked commit does not take what is waiting first: the request
    // came through the channel, so all that came before it is in.
    if open.taken >= MAX_BATCH || open.asked || open.channel_closed {
        return Next::Commit;
    }
    if !open.channel_empty {
        return Next::Take;
    }
    // NB: a list's end commits when the channel is empty, not a window later:
    // its watch's position lands with it, and how long the start (or a
    // relist) takes to be in the file is measured (issue 16).
    if open.listing {
        return Next::Commit;
    }
    match open.age {
        // Heartbeats, positions and gaps alone: nothing to gather them for.
        None => Next::Commit,
        Some(_) if open.taken >= WORTH_BATCH => Next::Commit,
        Some(age) if age >= commit_every => Next::Commit,
        Some(age) => Next::Wait(commit_every - age),
    }
}

/// How many WAL pages may accumulate before SQLite checkpoints after a commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WalBudget {
    /// While batches are not full: the recorder keeps up.
    pub steady_pages: i64,
    /// While batches are full: the recorder catches up (an initial list, a relist).
    pub catch_up_pages: i64,
}

impl WalBudget {
    /// The budget for a recording of `page_size`-byte pages whose WAL may
    /// grow to `catch_up_pages` while catching up (see `retention::wal_pages`).
    pub fn new(page_size: u64, catch_up_pages: i64) -> WalBudget {
        let steady = (STEADY_WAL_BYTES / page_size.max(512)) as i64;
        WalBudget {
            steady_pages: steady.min(catch_up_pages),
            catch_up_pages,
        }
    }

    /// The page budget after a batch of `taken` messages.
    pub fn pages(&self, taken: usize) -> i64 {
        if taken >= MAX_BATCH {
            self.catch_up_pages
        } else {
            self.steady_pages
        }
    }
}

/// This process's bytes written to storage so far (`write_bytes` of
/// `/proc/self/io`, less what was cancelled by truncation), where the kernel
/// tells it.
pub fn process_bytes_written() -> Option<u64> {
    let io = std::fs::read_to_string("/proc/self/io").ok()?;
    let field = |name: &str| -> Option<u64> {
        io.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().parse().ok())
    };
    let written = field("write_bytes:")?;
    Some(written.saturating_sub(field("cancelled_write_bytes:").unwrap_or(0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);
    const EVERY: Duration = DEFAULT_COMMIT_EVERY;

    fn open(taken: usize, age_ms: u64) -> Open {
        Open {
            taken,
            age: Some(Duration::from_millis(age_ms)),
            asked: false,
            listing: false,
            channel_empty: true,
            channel_closed: false,
        }
    }

    #[test]
    fn a_full_batch_commits_at_once() {
        assert_eq!(next(open(MAX_BATCH, 0), EVERY), Next::Commit);
        let waiting = Open {
            channel_empty: false,
            ..open(MAX_BATCH, 0)
        };
        assert_eq!(next(waiting, EVERY), Next::Commit);
    }

    #[test]
    fn what_is_waiting_joins_the_batch() {
        let waiting = Open {
            channel_empty: false,
            ..open(10, 10 * 5_000)
        };
        assert_eq!(next(waiting, EVERY), Next::Take);
    }

    #[test]
    fn an_empty_channel_waits_out_the_window_of_the_oldest_change() {
        assert_eq!(next(open(1, 100), EVERY), Next::Wait(EVERY - 100 * MS));
        assert_eq!(next(open(1, 0), EVERY), Next::Wait(EVERY));
        assert_eq!(
            next(open(1, 100), 250 * MS),
            Next::Wait(150 * MS),
            "--commit-every sets the window"
        );
    }

    #[test]
    fn a_change_older_than_the_window_commits() {
        let every_ms = EVERY.as_millis() as u64;
        assert_eq!(next(open(1, every_ms), EVERY), Next::Commit);
        assert_eq!(next(open(1, 10 * every_ms), EVERY), Next::Commit);
        assert_eq!(next(open(1, 0), Duration::ZERO), Next::Commit);
    }

    #[test]
    fn a_transaction_worth_its_pages_does_not_wait_for_the_window() {
        assert_eq!(next(open(WORTH_BATCH, 10), EVERY), Next::Commit);
        assert_eq!(
            next(open(WORTH_BATCH - 1, 10), EVERY),
            Next::Wait(EVERY - 10 * MS)
        );
        // Catching up (the channel is not empty), it keeps taking up to MAX_BATCH.
        let waiting = Open {
            channel_empty: false,
            ..open(WORTH_BATCH, 10)
        };
        assert_eq!(next(waiting, EVERY), Next::Take);
    }

    #[test]
    fn a_reader_asking_commits_without_waiting() {
        let asked = Open {
            asked: true,
            ..open(3, 10)
        };
        assert_eq!(next(asked, EVERY), Next::Commit);
        let behind = Open {
            channel_empty: false,
            ..asked
        };
        assert_eq!(next(behind, EVERY), Next::Commit);
    }

    #[test]
    fn a_list_commits_whenever_the_channel_is_empty() {
        let listing = Open {
            listing: true,
            ..open(300, 10)
        };
        assert_eq!(next(listing, EVERY), Next::Commit);
        let more = Open {
            channel_empty: false,
            ..listing
        };
        assert_eq!(next(more, EVERY), Next::Take);
    }

    #[test]
    fn heartbeats_alone_commit_at_once() {
        let idle = Open {
            age: None,
            ..open(1, 0)
        };
        assert_eq!(next(idle, EVERY), Next::Commit);
    }

    #[test]
    fn shutdown_commits_without_waiting() {
        let closed = Open {
            channel_closed: true,
            ..open(1, 0)
        };
        assert_eq!(next(closed, EVERY), Next::Commit);
    }

    #[test]
    fn the_wal_budget_is_small_while_keeping_up_and_large_while_catching_up() {
        let budget = WalBudget::new(8192, 40_000);
        assert_eq!(budget.steady_pages, 1024);
        assert_eq!(budget.pages(1), 1024);
        assert_eq!(budget.pages(MAX_BATCH - 1), 1024);
        assert_eq!(budget.pages(MAX_BATCH), 40_000);
        assert_eq!(WalBudget::new(4096, 40_000).steady_pages, 2048);
    }

    #[test]
    fn a_small_size_limit_caps_the_steady_budget_too() {
        assert_eq!(WalBudget::new(8192, 500).steady_pages, 500);
    }

    #[test]
    fn bytes_written_are_read_where_the_kernel_tells_them() {
        if std::path::Path::new("/proc/self/io").exists() {
            assert!(process_bytes_written().is_some());
        }
    }
}
