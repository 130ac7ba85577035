//! The recorder's shipping task: one [`Shipper`] per destination sends what
//! the writer committed and tells the writer the new cursor, which lands in
//! the writer's next transaction (`ship::outbox::confirm`).
// NB: here, not in `ship`: it speaks the writer's channel (`sink::Msg`) and
// reads its `Stats`, and `ship` is an edge that the recorder uses, never the reverse.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use super::sink::{Msg, Stats};
use crate::ship::outbox::{self, BATCH_KEYS, Registered};
use crate::ship::{Destination, backoff, reader};

/// One destination's sender inside `record`.
pub struct Shipper {
    pub destination: Arc<Destination>,
    pub registered: Registered,
    pub path: PathBuf,
    /// What deduplication tokens start with: the recorded cluster's uid and the destination's id.
    pub tag: String,
    pub stats: Arc<Stats>,
}

impl Shipper {
    /// Sends until `stop` turns true: takes what the writer committed, sends
    /// it, and tells the writer the new cursor. Returns the cursor reached.
    pub async fn run(
        self,
        tx: tokio::sync::mpsc::Sender<Msg>,
        mut stop: tokio::sync::watch::Receiver<bool>,
    ) -> i64 {
        let mut cursor = self.registered.cursor;
        let mut conn = match reader(&self.path) {
            Ok(c) => Some(c),
            Err(e) => {
                self.stats.ship.fail(format!("reading the outbox: {e}"));
                None
            }
        };
        let mut failures = 0u32;
        while !*stop.borrow() {
            let Some(c) = conn.take() else { break };
            let commits = self.stats.commits.load(Ordering::Relaxed);
            let destination = self.destination.clone();
            let taken = tokio::task::spawn_blocking(move || {
                let b = destination.take(&c, cursor, BATCH_KEYS);
                let newest = outbox::newest(&c).unwrap_or(0);
                (c, b, newest)
            })
            .await;
            let Ok((c, taken, newest)) = taken else { break };
            conn = Some(c);
            self.stats.ship.backlog.store(
                newest.saturating_sub(cursor).max(0) as u64,
                Ordering::Relaxed,
            );
            let batch = match taken {
                Ok(Some(b)) => {
                    self.stats.ship.behind();
                    b
                }
                Ok(None) => {
                    self.stats.ship.caught_up();
                    // Nothing new until the writer commits again.
                    while !*stop.borrow() && self.stats.commits.load(Ordering::Relaxed) == commits {
                        tokio::select! {
                            _ = tokio::time::sleep(Duration::from_millis(100)) => {}
                            _ = stop.changed() => {}
                        }
                    }
                    continue;
                }
                Err(e) => {
                    self.stats.ship.fail(e.to_string());
                    tokio::select! {
                        _ = tokio::time::sleep(backoff(failures)) => {}
                        _ = stop.changed() => {}
                    }
                    failures += 1;
                    continue;
                }
            };
            match self.destination.send(&self.tag, &batch).await {
                Ok(()) => {
                    failures = 0;
                    cursor = batch.last;
                    let rows = batch.rows() as u64;
                    self.stats.ship.rows.fetch_add(rows, Ordering::Relaxed);
                    self.stats.ship.ok();
                    let msg = Msg::Shipped {
                        destination: self.registered.id,
                        cursor,
                        rows,
                    };
                    if tx.send(msg).await.is_err() {
                        break;
                    }
                }
                Err(e) => {
                    let wait = e.wait(failures);
                    self.stats.ship.fail(e.to_string());
                    tokio::select! {
                        _ = tokio::time::sleep(wait) => {}
                        _ = stop.changed() => {}
                    }
                    failures += 1;
                }
            }
        }
        cursor
    }
}
