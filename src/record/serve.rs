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

use super::flush::process_bytes_written;
use super::retention::{db_bytes, wal_bytes};
use super::sink::Stats;
use crate::metrics::Findings;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;

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

/// The recorder's counters, its Event rates and (with `--check-every`) the
/// findings, as one scrape sees them.
#[derive(Debug)]
struct Scrape {
    stats: Arc<Stats>,
    disk: Disk,
    findings: Option<Arc<Findings>>,
}

impl Collector for Scrape {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let stats = &self.stats;
        let load = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
        // NB: counters are named without `_total`: OpenMetrics appends it, so
        // the samples keep the names they had before prometheus-client.
        let counters: [(&str, &str, u64); 9] = [
            (
                "kubectl_diag_occurrences_stored",
                "Event occurrences stored by this process (0 at its start).",
                load(&stats.occurrences),
            ),
            (
                "kubectl_diag_object_versions_stored",
                "Object versions stored by this process (meaningful changes of watched objects).",
                load(&stats.versions),
            ),
            (
                "kubectl_diag_changes",
                "Event and object changes received from the apiserver by this process.",
                load(&stats.changes),
            ),
            (
                "kubectl_diag_watch_restarts",
                "Watches that ended with an error and were restarted.",
                load(&stats.watch_restarts),
            ),
            (
                "kubectl_diag_watch_gone",
                "410 Gone answers (each forces a relist).",
                load(&stats.gone_410),
            ),
            (
                "kubectl_diag_gaps",
                "Blind intervals recorded.",
                load(&stats.gaps),
            ),
            (
                "kubectl_diag_ship_rows",
                "Rows the --ship destinations confirmed.",
                load(&stats.ship.rows),
            ),
            (
                "kubectl_diag_ship_errors",
                "Sends to a --ship destination that failed (each retried).",
                load(&stats.ship.errors),
            ),
            (
                "kubectl_diag_commits",
                "Transactions committed by this process.",
                load(&stats.commits),
            ),
        ];
        for (name, help, v) in counters {
            ConstCounter::new(v).encode(encoder.encode_descriptor(
                name,
                help,
                None,
                MetricType::Counter,
            )?)?;
        }
        if let Some(written) = self.disk.written {
            ConstCounter::new(written).encode(encoder.encode_descriptor(
                "kubectl_diag_bytes_written",
                "Bytes this process wrote to storage (write_bytes less cancelled_write_bytes of /proc/self/io).",
                None,
                MetricType::Counter,
            )?)?;
        }
        let gauges: [(&str, &str, u64); 7] = [
            (
                "kubectl_diag_recording_occurrences",
                "Event occurrences of this cluster in the recording, every session's, as of the last commit.",
                load(&stats.recording_occurrences),
            ),
            (
                "kubectl_diag_ship_backlog",
                "Outbox keys the --ship destinations have not confirmed yet (the most behind of them).",
                load(&stats.ship.backlog),
            ),
            (
                "kubectl_diag_ship_behind_seconds",
                "How long the oldest change not yet confirmed by a --ship destination has waited (0: caught up).",
                stats.ship.behind_ms() / 1000,
            ),
            (
                "kubectl_diag_watches_blind",
                "Watches whose requests fail now: blind, their interval stored as a gap when they see again or the recorder stops.",
                stats.blind.count() as u64,
            ),
            (
                "kubectl_diag_lag_milliseconds",
                "Receipt-to-commit time of the oldest change in the last batch.",
                load(&stats.lag_ms),
            ),
            (
                "kubectl_diag_db_bytes",
                "Size of the recording (file and WAL).",
                self.disk.db_bytes,
            ),
            (
                "kubectl_diag_wal_bytes",
                "Size of the recording's WAL alone.",
                self.disk.wal_bytes,
            ),
        ];
        for (name, help, v) in gauges {
            ConstGauge::new(v).encode(encoder.encode_descriptor(
                name,
                help,
                None,
                MetricType::Gauge,
            )?)?;
        }
        stats.events.encode_into(&mut encoder)?;
        if let Some(findings) = &self.findings {
            findings.encode_into(&mut encoder)?;
        }
        Ok(())
    }
}

/// The OpenMetrics exposition of the recorder: its counters, Event rates
/// and, with `--check-every`, the findings.
///
/// NB: `*_total` counters count what this process did and start at 0 with
/// it, as Prometheus counters do; `kubectl_diag_recording_*` gauges describe
/// the whole recording, earlier sessions included.
pub fn metrics_text(stats: &Arc<Stats>, disk: Disk, findings: Option<&Arc<Findings>>) -> String {
    let scrape = Scrape {
        stats: stats.clone(),
        disk,
        findings: findings.cloned(),
    };
    // NB: writing into a String fails only if an encoder does; none of ours does.
    crate::metrics::exposition(vec![Box::new(scrape)]).unwrap_or_else(|_| "# EOF\n".to_string())
}

/// Connections that have not finished sending their request, at most: past
/// it, the oldest of them is dropped, so that idle clients cannot crowd out a probe.
const MAX_PENDING: usize = 64;

/// How long a client may take to send its request, and to take the answer.
/// A probe sends its request at once; only idle clients come near this.
const IO_TIMEOUT: Duration = Duration::from_secs(2);

/// The most of a request read: the request line and headers of a probe or a
/// scrape fit many times over.
const MAX_REQUEST: usize = 8192;

/// `/healthz` fails when the writer has neither committed nor taken anything
/// for this long. A heartbeat reaches it every 5 s, so a live writer is never
/// near it, even while a transaction stays open for a minute (issue 33).
pub const STALE_AFTER_MS: u64 = 60_000;

/// Longest pause after `accept` fails (out of file descriptors, say).
const MAX_ACCEPT_BACKOFF: Duration = Duration::from_secs(1);

/// The answer to `/healthz`: whether the writer is alive (it committed or
/// took a message recently; a commit may be a `--commit-every` away), and
/// which watches are blind now (they do not fail it: a restart would not make
/// a conversion webhook answer, and would open gaps of its own).
/// `now_ms` and the last commit are epoch milliseconds.
pub fn health(stats: &Stats, now_ms: u64) -> (&'static str, String) {
    let last = stats.last_commit_ms.load(Ordering::Relaxed);
    let age = now_ms.saturating_sub(last);
    let alive = last.max(stats.last_taken_ms.load(Ordering::Relaxed));
    let (status, mut body) = if last == 0 {
        (
            "503 Service Unavailable",
            "starting: nothing committed yet\n".to_string(),
        )
    } else if now_ms.saturating_sub(alive) > STALE_AFTER_MS {
        (
            "503 Service Unavailable",
            format!(
                "stale: the last commit was {} s ago and the writer has taken nothing since {} s (it is stuck or has stopped; see the recorder's log)\n",
                age / 1000,
                now_ms.saturating_sub(alive) / 1000
            ),
        )
    } else {
        ("200 OK", format!("ok: last commit {} ms ago\n", age))
    };
    for (watch, since) in stats.blind.list() {
        body.push_str(&format!(
            "blind: {watch} since {} (requests fail; see the recorder's log)\n",
            crate::units::rfc3339(since)
        ));
    }
    (status, body)
}

/// The path a request asks for, without its query; None until the request
/// line is complete.
fn target(request: &[u8]) -> Option<&str> {
    let line_end = request.windows(2).position(|w| w == b"\r\n")?;
    let line = std::str::from_utf8(&request[..line_end]).ok()?;
    let target = line.split(' ').nth(1).unwrap_or("");
    Some(target.split(['?', '#']).next().unwrap_or(""))
}

/// Reads until the request's headers are complete (or the limit): a request
/// may come in several TCP segments.
async fn read_request(socket: &mut tokio::net::TcpStream) -> Option<Vec<u8>> {
    let mut request = Vec::with_capacity(512);
    let mut buf = [0u8; 2048];
    loop {
        let n = socket.read(&mut buf).await.ok()?;
        if n == 0 {
            return (!request.is_empty()).then_some(request);
        }
        request.extend_from_slice(&buf[..n]);
        if request.windows(4).any(|w| w == b"\r\n\r\n") || request.len() >= MAX_REQUEST {
            return Some(request);
        }
    }
}

/// Connections still sending their request, oldest first.
#[derive(Default)]
struct Pending {
    next: u64,
    open: std::collections::VecDeque<(u64, tokio::task::AbortHandle)>,
}

/// Serves `/healthz` and `/metrics` until the process ends.
///
/// NB: clients that open connections and send nothing must not take the
/// listener down (issue 27.7: ~190 idle connections once failed every probe):
/// `accept` never waits for a slot; each connection has [`IO_TIMEOUT`] to
/// send its request; and when [`MAX_PENDING`] are still sending, the oldest
/// is dropped. A failing `accept` (file descriptors exhausted) backs off.
pub async fn serve(
    listener: TcpListener,
    stats: Arc<Stats>,
    path: PathBuf,
    findings: Option<Arc<Findings>>,
) {
    let pending = Arc::new(std::sync::Mutex::new(Pending::default()));
    let mut backoff = Duration::from_millis(10);
    loop {
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
        let (stats, path, findings) = (stats.clone(), path.clone(), findings.clone());
        let mut list = pending.lock().unwrap_or_else(|e| e.into_inner());
        let id = list.next;
        list.next += 1;
        let done = pending.clone();
        let task = tokio::spawn(async move {
            let request = tokio::time::timeout(IO_TIMEOUT, read_request(&mut socket)).await;
            done.lock()
                .unwrap_or_else(|e| e.into_inner())
                .open
                .retain(|(other, _)| *other != id);
            let Ok(Some(request)) = request else {
                return;
            };
            let (status, kind, body) = match target(&request).unwrap_or("") {
                "/healthz" | "/readyz" | "/livez" => {
                    let (status, body) = health(&stats, super::sink::now_ms().unsigned_abs());
                    (status, "text/plain", body)
                }
                "/metrics" => (
                    "200 OK",
                    crate::metrics::CONTENT_TYPE,
                    metrics_text(&stats, Disk::read(&path), findings.as_ref()),
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
        list.open.push_back((id, task.abort_handle()));
        while list.open.len() > MAX_PENDING {
            if let Some((_, oldest)) = list.open.pop_front() {
                oldest.abort();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_are_prometheus_text() {
        let stats = Arc::new(Stats::default());
        stats.occurrences.store(42, Ordering::Relaxed);
        stats.recording_occurrences.store(142, Ordering::Relaxed);
        let disk = Disk {
            db_bytes: 4096,
            wal_bytes: 1024,
            written: Some(8192),
        };
        let text = metrics_text(&stats, disk, None);
        // The samples keep the names they had before OpenMetrics.
        assert!(
            text.contains("# TYPE kubectl_diag_occurrences_stored counter\n"),
            "{text}"
        );
        assert!(
            text.contains("\nkubectl_diag_occurrences_stored_total 42\n"),
            "{text}"
        );
        assert!(
            text.contains("# TYPE kubectl_diag_recording_occurrences gauge\n"),
            "{text}"
        );
        assert!(
            text.contains("\nkubectl_diag_recording_occurrences 142\n"),
            "{text}"
        );
        assert!(text.contains("\nkubectl_diag_db_bytes 4096\n"));
        assert!(text.contains("\nkubectl_diag_wal_bytes 1024\n"));
        assert!(text.contains("\nkubectl_diag_bytes_written_total 8192\n"));
        assert!(text.ends_with("# EOF\n"), "{text}");
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

    /// Issue 33: a transaction stays open for up to --commit-every (a minute by
    /// default); a writer that takes its heartbeats meanwhile is alive.
    #[test]
    fn a_writer_that_takes_heartbeats_inside_a_long_window_is_healthy() {
        let stats = Stats::default();
        stats.last_commit_ms.store(1_000_000, Ordering::Relaxed);
        stats.last_taken_ms.store(1_085_000, Ordering::Relaxed);
        let (status, body) = health(&stats, 1_090_000);
        assert_eq!(status, "200 OK", "{body}");
        assert!(body.contains("ok: last commit 90000 ms ago"), "{body}");
        let (status, body) = health(&stats, 1_085_000 + STALE_AFTER_MS + 1);
        assert!(status.starts_with("503"), "{status}");
        assert!(body.contains("has taken nothing since 60 s"), "{body}");
    }

    /// Connections that send nothing once held the listener forever.
    #[tokio::test]
    async fn idle_connections_do_not_block_the_health_check() {
        let (addr, _dir) = serving().await;
        // Issue 27.7: ~190 silent clients once failed every probe.
        let mut idle = Vec::new();
        for _ in 0..200 {
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

    /// A listener serving a recorder that has just committed.
    async fn serving() -> (std::net::SocketAddr, tempfile::TempDir) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let stats = Arc::new(Stats::default());
        stats.last_commit_ms.store(
            super::super::sink::now_ms().unsigned_abs(),
            Ordering::Relaxed,
        );
        let dir = tempfile::tempdir().unwrap();
        tokio::spawn(serve(listener, stats, dir.path().join("diag.db"), None));
        (addr, dir)
    }

    async fn ask(addr: std::net::SocketAddr, parts: &[&[u8]]) -> String {
        let mut client = tokio::net::TcpStream::connect(addr).await.unwrap();
        for part in parts {
            client.write_all(part).await.unwrap();
            client.flush().await.unwrap();
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let mut answer = String::new();
        client.read_to_string(&mut answer).await.unwrap();
        answer
    }

    /// Issue 27.19: `/healthz?x=1` and a request split over two writes were 404s.
    #[tokio::test]
    async fn a_query_string_or_a_request_in_two_writes_still_reaches_healthz() {
        let (addr, _dir) = serving().await;
        let answer = ask(addr, &[b"GET /healthz?x=1 HTTP/1.1\r\nHost: x\r\n\r\n"]).await;
        assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");
        let answer = ask(addr, &[b"GET /heal", b"thz HTTP/1.1\r\nHost: x\r\n\r\n"]).await;
        assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");
        let answer = ask(addr, &[b"GET /nothing HTTP/1.1\r\n\r\n"]).await;
        assert!(answer.starts_with("HTTP/1.1 404"), "{answer}");
    }

    #[test]
    fn health_names_the_watches_that_are_blind_without_failing() {
        let stats = Arc::new(Stats::default());
        stats.last_commit_ms.store(1_000_000, Ordering::Relaxed);
        stats.blind.failing(&Arc::from("widgets.example.com"), 1, 0);
        let (status, body) = health(&stats, 1_001_000);
        assert_eq!(status, "200 OK");
        assert!(
            body.contains("blind: widgets.example.com since 1970-01-01T00:00:00"),
            "{body}"
        );
        assert!(
            metrics_text(&stats, Disk::default(), None)
                .contains("\nkubectl_diag_watches_blind 1\n")
        );
    }

    #[test]
    fn bytes_written_are_left_out_where_the_kernel_does_not_tell_them() {
        let text = metrics_text(&Arc::new(Stats::default()), Disk::default(), None);
        assert!(!text.contains("bytes_written"));
    }
}
