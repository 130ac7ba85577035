//! Receipt-to-commit latency of the recorder's writer at a steady rate: the
//! real channel and writer thread (`record::sink`), fed Event changes at
//! `--rate` per second as the watch tasks would feed them. The apiserver is
//! left out, because the local one cannot produce 5,000 Events/s on 2 cores.
//!
//!   cargo bench --bench record_sink -- [--rate 5000] [--seconds 30]
//!
//! For every committed batch the writer reports the lag of its oldest change;
//! the percentiles below are over batches, so they bound the per-change lag
//! from above. Also reports the bytes this process wrote to storage per
//! stored occurrence (`/proc/self/io`), the commits made, and the peak size of
//! the recording on disk (file + WAL) against its size after a clean stop.
//! The recording goes to a folder under `target/` (tmpfs would count no bytes).

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use kubectl_diag::record::sink::Msg;
use kubectl_diag::store::{self, Mode};

mod support;
use support::{bytes_written, disk_bytes, flag, memory_mib, percentile};

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let rate = flag(&args, "--rate", 5_000);
    let seconds = flag(&args, "--seconds", 30);
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let path = dir.path().join("sink.db");
    let conn = store::Recording::open(&path, Mode::Write).unwrap();
    let cluster = conn.register_cluster("bench", "bench", "", 0).unwrap();
    let start = conn.start_session(cluster, "bench", "watch", 0).unwrap();
    let (tx, thread, stats) = support::spawn_writer(conn, &path, cluster, start.id);
    let written_before = bytes_written("self");
    let mut peak_disk = 0u64;
    let resource: Arc<str> = "events".into();
    let total = rate * seconds;
    let begin = Instant::now();
    let (mut lags, mut seen_commits) = (Vec::new(), 0);
    let mut sent = 0u64;
    let mut tick = tokio::time::interval(Duration::from_millis(1));
    while sent < total {
        tick.tick().await;
        let due = ((begin.elapsed().as_secs_f64() * rate as f64) as u64).min(total);
        while sent < due {
            let msg = Msg::Change {
                change: kubectl_diag::model::Change::Event(support::event_change(sent)),
                resource: resource.clone(),
                rv: Some(sent.to_string()),
                received: Instant::now(),
            };
            tx.send(msg).await.unwrap();
            sent += 1;
        }
        let commits = stats.commits.load(Ordering::Relaxed);
        if commits != seen_commits {
            seen_commits = commits;
            lags.push(stats.lag_ms.load(Ordering::Relaxed));
            peak_disk = peak_disk.max(disk_bytes(&path));
        }
    }
    let elapsed = begin.elapsed().as_secs_f64();
    drop(tx);
    thread.join().unwrap().unwrap();
    let written = bytes_written("self") - written_before;
    let occurrences = stats.occurrences.load(Ordering::Relaxed).max(1);
    let after = disk_bytes(&path);
    lags.sort_unstable();
    let p = |q: f64| percentile(&lags, q);
    println!(
        "fed {sent} changes in {elapsed:.1}s = {:.0}/s; stored {} occurrences ({})",
        sent as f64 / elapsed,
        stats.occurrences.load(Ordering::Relaxed),
        if stats.occurrences.load(Ordering::Relaxed) == sent {
            "nothing dropped"
        } else {
            "MISMATCH"
        }
    );
    println!(
        "receipt-to-commit lag of each batch's oldest change over {} batches: p50 {} ms, p99 {} ms, max {} ms",
        lags.len(),
        p(0.5),
        p(0.99),
        p(1.0)
    );
    let mib = |b: u64| b as f64 / (1 << 20) as f64;
    println!(
        "written {:.1} MiB in {} commits = {:.0} bytes per occurrence; disk peak {:.1} MiB (file + WAL), {:.1} MiB after a clean stop",
        mib(written),
        stats.commits.load(Ordering::Relaxed),
        written as f64 / occurrences as f64,
        mib(peak_disk),
        mib(after)
    );
    println!(
        "process RSS: {:.1} MiB now, {:.1} MiB peak",
        memory_mib("self", "VmRSS:"),
        memory_mib("self", "VmHWM:")
    );
}
