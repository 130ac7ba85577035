//! `record --check-every`: `check` run on the recording inside the recorder,
//! its findings kept for `/metrics` (`metrics::Findings`).
//!
//! NB: it reads through a read-only connection of its own, on a blocking
//! thread: the writer never waits for it (WAL readers do not block the
//! writer), and a check that runs long delays the next one, never a commit.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::checks::{self, Options, Report};
use crate::metrics::Findings;
use crate::store::{Mode, Recording};

/// The findings of the recording of cluster `cluster_uid` at its latest
/// moment, with `check`'s options and `--window` (the span of recorded update
/// counters the hot-loop check rates).
pub fn once(
    path: &Path,
    cluster_uid: &str,
    (options, window_ms): &(Options, i64),
) -> anyhow::Result<(Report, i64)> {
    let recording = Recording::open(path, Mode::ReadOnly)?;
    let (cluster, _, _) = recording.choose_cluster(Some(cluster_uid))?;
    let at = recording.latest_time(cluster)?;
    let snapshot = recording.snapshot(cluster, at, *window_ms)?;
    Ok((checks::run(&snapshot, &[], options), at))
}

/// Checks every `every` until the process ends; the first check at once.
pub async fn every(
    path: PathBuf,
    cluster_uid: String,
    every: Duration,
    options: (Options, i64),
    findings: Arc<Findings>,
) {
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let options = Arc::new(options);
    loop {
        tick.tick().await;
        let (path, uid, options) = (path.clone(), cluster_uid.clone(), options.clone());
        let started = Instant::now();
        let done = tokio::task::spawn_blocking(move || once(&path, &uid, &options)).await;
        match done {
            Ok(Ok((report, at))) => {
                let took = started.elapsed().as_millis() as u64;
                findings.publish(&report.findings, at, Some(took));
            }
            Ok(Err(e)) => {
                findings.failed();
                eprintln!(
                    "warning: --check-every: the check failed (the last findings stay on /metrics): {e:#}"
                );
            }
            Err(e) => {
                findings.failed();
                eprintln!("warning: --check-every: the check stopped: {e}");
            }
        }
    }
}
