//! `--listen`: `/healthz` and Prometheus `/metrics` for the in-cluster recorder.
//!
//! NB: a deliberately tiny HTTP/1.1 responder (GET only, one response per
//! connection): two fixed endpoints do not justify a web framework.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

use super::flush::process_bytes_written;
use super::retention::{db_bytes, wal_bytes};
use super::sink::Stats;

/// What the recording takes on disk, read when /metrics is asked.
#[derive(Debug, Default, Clone, Copy)]
pub struct Disk {
    /// The file and its WAL.
    pub db_bytes: u64,
    /// The WAL alone.
    pub wal_bytes: u64,
    /// This process's writes to storage, where the kernel tells them.
    pub written: Option<u64>,
}

impl Disk {
    pub fn read(path: &std::path::Path) -> Disk {
        Disk {
            db_bytes: db_bytes(path),
            wal_bytes: wal_bytes(path),
            written: process_bytes_written(),
        }
    }
}

/// The Prometheus text exposition of the recorder's counters.
///
/// NB: `*_total` counters count what this process did and start at 0 with
/// it, as Prometheus counters do; `kubectl_diag_recording_*` gauges describe
/// the whole recording, earlier sessions included.
pub fn metrics_text(stats: &Stats, disk: Disk) -> String {
    let mut out = String::new();
    let mut metric = |name: &str, kind: &str, help: &str, value: u64| {
        out.push_str(&format!(
            "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}\n"
        ));
    };
    metric(
        "kubectl_diag_occurrences_stored_total",
        "counter",
        "Event occurrences stored by this process (0 at its start).",
        stats.occurrences.load(Ordering::Relaxed),
    );
    metric(
        "kubectl_diag_recording_occurrences",
        "gauge",
        "Event occurrences of this cluster in the recording, every session's, as of the last commit.",
        stats.recording_occurrences.load(Ordering::Relaxed),
    );
    metric(
        "kubectl_diag_object_versions_stored_total",
        "counter",
        "Object versions stored by this process (meaningful changes of watched objects).",
        stats.versions.load(Ordering::Relaxed),
    );
    metric(
        "kubectl_diag_changes_total",
        "counter",
        "Event and object changes received from the apiserver by this process.",
        stats.changes.load(Ordering::Relaxed),
    );
    metric(
        "kubectl_diag_watch_restarts_total",
        "counter",
        "Watches that ended with an error and were restarted.",
        stats.watch_restarts.load(Ordering::Relaxed),
    );
    metric(
        "kubectl_diag_watch_gone_total",
        "counter",
        "410 Gone answers (each forces a relist).",
        stats.gone_410.load(Ordering::Relaxed),
    );
    metric(
        "kubectl_diag_gaps_total",
        "counter",
        "Blind intervals recorded.",
        stats.gaps.load(Ordering::Relaxed),
    );
    metric(
        "kubectl_diag_lag_milliseconds",
        "gauge",
        "Receipt-to-commit time of the oldest change in the last batch.",
        stats.lag_ms.load(Ordering::Relaxed),
    );
    metric(
        "kubectl_diag_commits_total",
        "counter",
        "Transactions committed by this process.",
        stats.commits.load(Ordering::Relaxed),
    );
    metric(
        "kubectl_diag_db_bytes",
        "gauge",
        "Size of the recording (file and WAL).",
        disk.db_bytes,
    );
    metric(
        "kubectl_diag_wal_bytes",
        "gauge",
        "Size of the recording's WAL alone.",
        disk.wal_bytes,
    );
    if let Some(written) = disk.written {
        metric(
            "kubectl_diag_bytes_written_total",
            "counter",
            "Bytes this process wrote to storage (write_bytes less cancelled_write_bytes of /proc/self/io).",
            written,
        );
    }
    out
}

/// Connections served at once; more wait in the kernel's backlog.
const MAX_CONNECTIONS: usize = 64;

/// How long a client may take to send its request, and to take the answer.
const IO_TIMEOUT: Duration = Duration::from_secs(5);

/// `/healthz` fails when the writer has committed nothing for this long. The
/// heartbeat commits every 5 s, so a live writer is never near it.
pub const STALE_AFTER_MS: u64 = 60_000;

/// Longest pause after `accept` fails (out of file descriptors, say).
const MAX_ACCEPT_BACKOFF: Duration = Duration::from_secs(1);

/// The answer to `/healthz`: whether the writer has committed recently.
/// `now_ms` and the last commit are epoch milliseconds.
pub fn health(stats: &Stats, now_ms: u64) -> (&'static str, String) {
    let last = stats.last_commit_ms.load(Ordering::Relaxed);
    let age = now_ms.saturating_sub(last);
    if last == 0 {
        (
            "503 Service Unavailable",
            "starting: nothing committed yet\n".to_string(),
        )
    } else if age > STALE_AFTER_MS {
        (
            "503 Service Unavailable",
            format!(
                "stale: the last commit was {} s ago (the writer is stuck or has stopped; see the recorder's log)\n",
                age / 1000
            ),
        )
    } else {
        ("200 OK", format!("ok: last commit {} ms ago\n", age))
    }
}

/// Serves `/healthz` and `/metrics` until the process ends.
///
/// NB: a pod that opens connections and sends nothing must not take the
/// listener down: each connection has [`IO_TIMEOUT`] to speak, at most
/// [`MAX_CONNECTIONS`] are served at once, and a failing `accept` (file
/// descriptors exhausted) backs off instead of spinning.
pub async fn serve(listener: TcpListener, stats: Arc<Stats>, path: PathBuf) {
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    let mut backoff = Duration::from_millis(10);
    loop {
        let Ok(slot) = slots.clone().acquire_owned().await else {
            return;
        };
        let mut socket = match listener.accept().await {
            Ok((socket, _)) => {
                backoff = Duration::from_millis(10);
                socket
            }
            Err(_) => {
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(MAX_ACCEPT_BACKOFF);
                continue;
            }
        };
        let (stats, path) = (stats.clone(), path.clone());
        tokio::spawn(async move {
            let _slot = slot;
            let mut buf = [0u8; 2048];
            let Ok(Ok(n)) = tokio::time::timeout(IO_TIMEOUT, socket.read(&mut buf)).await else {
                return;
            };
            let request = String::from_utf8_lossy(&buf[..n]);
            let target = request.split_whitespace().nth(1).unwrap_or("");
            let (status, kind, body) = match target {
                "/healthz" | "/readyz" | "/livez" => {
                    let (status, body) = health(&stats, super::sink::now_ms().unsigned_abs());
                    (status, "text/plain", body)
                }
                "/metrics" => (
                    "200 OK",
                    "text/plain; version=0.0.4",
                    metrics_text(&stats, Disk::read(&path)),
                ),
                _ => ("404 Not Found", "text/plain", "not found\n".to_string()),
            };
            let head = format!(
                "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let answer = async {
                socket.write_all(head.as_bytes()).await?;
                socket.write_all(body.as_bytes()).await
            };
            let _ = tokio::time::timeout(IO_TIMEOUT, answer).await;
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_are_prometheus_text() {
        let stats = Stats::default();
        stats.occurrences.store(42, Ordering::Relaxed);
        stats.recording_occurrences.store(142, Ordering::Relaxed);
        let disk = Disk {
            db_bytes: 4096,
            wal_bytes: 1024,
            written: Some(8192),
        };
        let text = metrics_text(&stats, disk);
        assert!(text.contains("# TYPE kubectl_diag_occurrences_stored_total counter\nkubectl_diag_occurrences_stored_total 42\n"));
        assert!(text.contains("# TYPE kubectl_diag_recording_occurrences gauge\nkubectl_diag_recording_occurrences 142\n"));
        assert!(text.contains("kubectl_diag_db_bytes 4096\n"));
        assert!(text.contains("kubectl_diag_wal_bytes 1024\n"));
        assert!(text.contains("# TYPE kubectl_diag_bytes_written_total counter\nkubectl_diag_bytes_written_total 8192\n"));
    }

    #[test]
    fn health_is_the_writers_last_commit() {
        let stats = Stats::default();
        assert!(
            health(&stats, 1_000_000).0.starts_with("503"),
            "nothing committed yet"
        );
        stats.last_commit_ms.store(1_000_000, Ordering::Relaxed);
        assert_eq!(health(&stats, 1_004_000).0, "200 OK");
        let (status, body) = health(&stats, 1_000_000 + STALE_AFTER_MS + 1);
        assert!(status.starts_with("503"), "{status}");
        assert!(
            body.contains("stale: the last commit was 60 s ago"),
            "{body}"
        );
    }

    /// Connections that send nothing once held the listener forever.
    #[tokio::test]
    async fn idle_connections_do_not_block_the_health_check() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let stats = Arc::new(Stats::default());
        stats.last_commit_ms.store(
            super::super::sink::now_ms().unsigned_abs(),
            Ordering::Relaxed,
        );
        let dir = tempfile::tempdir().unwrap();
        tokio::spawn(serve(listener, stats, dir.path().join("diag.db")));
        // More silent clients than the listener serves at once.
        let mut idle = Vec::new();
        for _ in 0..MAX_CONNECTIONS + 8 {
            idle.push(tokio::net::TcpStream::connect(addr).await.unwrap());
        }
        let mut client = tokio::net::TcpStream::connect(addr).await.unwrap();
        client
            .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .unwrap();
        let mut answer = String::new();
        client.read_to_string(&mut answer).await.unwrap();
        assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");
        assert!(answer.contains("ok: last commit"), "{answer}");
        drop(idle);
    }

    #[test]
    fn bytes_written_are_left_out_where_the_kernel_does_not_tell_them() {
        let text = metrics_text(&Stats::default(), Disk::default());
        assert!(!text.contains("bytes_written"));
    }
}
