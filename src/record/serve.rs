//! `--listen`: `/healthz` and Prometheus `/metrics` for the in-cluster recorder.
//!
//! NB: a deliberately tiny HTTP/1.1 responder (GET only, one response per
//! connection): two fixed endpoints do not justify a web framework.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use super::retention::db_bytes;
use super::sink::Stats;

/// The Prometheus text exposition of the recorder's counters.
pub fn metrics_text(stats: &Stats, db_bytes: u64) -> String {
    let mut out = String::new();
    let mut metric = |name: &str, kind: &str, help: &str, value: u64| {
        out.push_str(&format!(
            "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}\n"
        ));
    };
    metric(
        "kubectl_diag_occurrences_stored_total",
        "counter",
        "Event occurrences stored.",
        stats.occurrences.load(Ordering::Relaxed),
    );
    metric(
        "kubectl_diag_object_versions_stored_total",
        "counter",
        "Object versions stored (meaningful changes of watched objects).",
        stats.versions.load(Ordering::Relaxed),
    );
    metric(
        "kubectl_diag_changes_total",
        "counter",
        "Event and object changes received from the apiserver.",
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
        "kubectl_diag_db_bytes",
        "gauge",
        "Size of the recording (file and WAL).",
        db_bytes,
    );
    out
}

pub async fn serve(listener: TcpListener, stats: Arc<Stats>, path: PathBuf) {
    loop {
        let Ok((mut socket, _)) = listener.accept().await else {
            continue;
        };
        let (stats, path) = (stats.clone(), path.clone());
        tokio::spawn(async move {
            let mut buf = [0u8; 2048];
            let n = socket.read(&mut buf).await.unwrap_or(0);
            let request = String::from_utf8_lossy(&buf[..n]);
            let target = request.split_whitespace().nth(1).unwrap_or("");
            let (status, kind, body) = match target {
                "/healthz" | "/readyz" | "/livez" => ("200 OK", "text/plain", "ok\n".to_string()),
                "/metrics" => (
                    "200 OK",
                    "text/plain; version=0.0.4",
                    metrics_text(&stats, db_bytes(&path)),
                ),
                _ => ("404 Not Found", "text/plain", "not found\n".to_string()),
            };
            let head = format!(
                "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = socket.write_all(head.as_bytes()).await;
            let _ = socket.write_all(body.as_bytes()).await;
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
        let text = metrics_text(&stats, 4096);
        assert!(text.contains("# TYPE kubectl_diag_occurrences_stored_total counter\nkubectl_diag_occurrences_stored_total 42\n"));
        assert!(text.contains("kubectl_diag_db_bytes 4096\n"));
    }
}
