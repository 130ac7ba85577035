//! When the writer thread commits, and when the WAL is folded back into the
//! recording: the recorder's disk I/O.
//!
//! Every commit appends each page it dirtied to the WAL, whole (8 KiB), and
//! a new Event dirties a page of each of its indexes wherever its key falls.
//! Committing whenever the channel was empty made almost every change at a
//! few hundred a second its own transaction: ~42 KB written per occurrence,
//! and a WAL of 300 MiB before a checkpoint (issue 20). So a transaction now
//! stays open for [`COMMIT_WINDOW`] after its oldest change, or for
//! [`BUSY_COMMIT_WINDOW`] when that first window brought many changes but not
//! [`LARGE_BATCH`] (or until it is [`MAX_BATCH`] messages, catching up), and
//! the WAL has a small page budget while
//! the recorder keeps up, and a large one only while it catches up, where a
//! large WAL saves copying the same index pages back again and again
//! (docs/performance.md, "Disk I/O").

use std::time::Duration;

/// Most messages one transaction takes; more wait for the next.
pub const MAX_BATCH: usize = 10_000;

/// How long the oldest change of a transaction may wait for others before it
/// commits. The receipt-to-commit lag is this plus the commit's own time:
/// under 300 ms at a few changes a second, under a second at 5,000/s
/// (docs/performance.md, "Disk I/O").
pub const COMMIT_WINDOW: Duration = Duration::from_millis(250);

/// How long a transaction stays open when it holds [`BUSY_BATCH`] messages or
/// more. Each commit also rewrites pages whatever it holds (the header, the
/// pointer map, the watch positions, an index's last page): three commits a
/// second instead of four spread them over more changes. Below a second of
/// lag at 5,000/s with the commit's own time (docs/performance.md, "Disk I/O").
pub const BUSY_COMMIT_WINDOW: Duration = Duration::from_millis(750);

/// Messages in one transaction that make it busy (over 120 a second in the
/// first window): below this, latency matters more than the bytes a commit costs.
pub const BUSY_BATCH: usize = 32;

/// Messages in one transaction that make a longer window pointless: the
/// commit's fixed pages are already spread thin, and at thousands a second
/// the commit's own time (longer on a loaded machine) must still fit in the
/// second of lag allowed. Such a transaction commits after [`COMMIT_WINDOW`].
pub const LARGE_BATCH: usize = 2_000;

/// The WAL's size, in bytes, at which it is checkpointed while the recorder
/// keeps up. After the checkpoint the WAL starts over and is cut back to this
/// size, so the disk holds the recording plus about this much (and a `kill -9`
/// leaves at most about this much beside it).
pub const STEADY_WAL_BYTES: u64 = 8 << 20;

/// Longest sleep of the writer while a transaction waits for more: what
/// arrives meanwhile waits in the channel at most this long before it is
/// stored into the open transaction, so a burst does not pile up there.
pub const WAIT_SLICE: Duration = Duration::from_millis(10);

/// What the writer does after taking what the channel held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Commit the open transaction now.
    Commit,
    /// Take what is waiting in the channel into this transaction.
    Take,
    /// Nothing is waiting and the window is still open for this long: sleep
    /// (at most [`WAIT_SLICE`]), then decide again.
    Wait(Duration),
}

/// Decides [`Next`] for a transaction holding `taken` messages, whose oldest
/// change was received `age` ago.
pub fn next(taken: usize, age: Duration, channel_empty: bool, channel_closed: bool) -> Next {
    if taken >= MAX_BATCH {
        return Next::Commit;
    }
    if !channel_empty {
        return Next::Take;
    }
    let window = if (BUSY_BATCH..LARGE_BATCH).contains(&taken) {
        BUSY_COMMIT_WINDOW
    } else {
        COMMIT_WINDOW
    };
    if channel_closed || age >= window {
        return Next::Commit;
    }
    Next::Wait(window - age)
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

    #[test]
    fn a_full_batch_commits_at_once() {
        assert_eq!(next(MAX_BATCH, Duration::ZERO, false, false), Next::Commit);
        assert_eq!(next(MAX_BATCH, Duration::ZERO, true, false), Next::Commit);
    }

    #[test]
    fn what_is_waiting_joins_the_batch() {
        assert_eq!(next(10, 10 * COMMIT_WINDOW, false, false), Next::Take);
    }

    #[test]
    fn an_empty_channel_waits_out_the_window_of_the_oldest_change() {
        assert_eq!(next(1, 100 * MS, true, false), Next::Wait(150 * MS));
        assert_eq!(
            next(1, Duration::ZERO, true, false),
            Next::Wait(COMMIT_WINDOW)
        );
    }

    #[test]
    fn a_change_older_than_the_window_commits() {
        assert_eq!(next(1, COMMIT_WINDOW, true, false), Next::Commit);
        assert_eq!(next(1, 10 * COMMIT_WINDOW, true, false), Next::Commit);
    }

    #[test]
    fn a_busy_transaction_stays_open_longer() {
        assert_eq!(
            next(BUSY_BATCH, COMMIT_WINDOW, true, false),
            Next::Wait(BUSY_COMMIT_WINDOW - COMMIT_WINDOW)
        );
        assert_eq!(
            next(BUSY_BATCH - 1, COMMIT_WINDOW, true, false),
            Next::Commit
        );
        assert_eq!(next(1_500, BUSY_COMMIT_WINDOW, true, false), Next::Commit);
    }

    #[test]
    fn a_large_transaction_does_not_wait_for_the_busy_window() {
        assert_eq!(next(LARGE_BATCH, COMMIT_WINDOW, true, false), Next::Commit);
        assert_eq!(
            next(LARGE_BATCH, COMMIT_WINDOW / 2, true, false),
            Next::Wait(COMMIT_WINDOW / 2)
        );
        // Catching up (the channel is not empty), it keeps taking up to MAX_BATCH.
        assert_eq!(next(LARGE_BATCH, COMMIT_WINDOW, false, false), Next::Take);
    }

    #[test]
    fn shutdown_commits_without_waiting() {
        assert_eq!(next(1, Duration::ZERO, true, true), Next::Commit);
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
