//! Live benchmark: the real recorder binary against the real local apiserver,
//! fed Events at a steady rate. Not a test: it prints figures for
//! docs/performance.md. Needs the local cluster (`scripts/cluster up`) and a
//! release build (`cargo build --release`).
//!
//!   KUBECONFIG=target/cluster/kubeconfig cargo bench --bench record_live -- [--rate 1000] [--seconds 60] [--preload N]
//!
//! `--preload N` creates N Events before the recorder starts, to measure
//! catching up (the initial list) rather than steady watching; caught up
//! means all N stored, counted by the recorder's /metrics. `--keep` leaves
//! the namespace and prints its name; `--reuse NAMESPACE --preload N` then
//! measures again on the N Events already there (preloading a million takes
//! a quarter of an hour; the apiserver keeps Events for an hour).
//! `--kill` stops the recorder with SIGKILL instead of SIGTERM, as a crash
//! would, and reports the WAL it leaves beside the recording.
//! The recorder's `-v` log goes to `target/record_live.log`; `--chunk-size N`
//! is passed on to it.
//!
//! Reports the rate achieved, the recorder's RSS (steady maximum and peak),
//! the receipt-to-commit lag sampled from /metrics, stored versus created
//! occurrences (nothing may be dropped, nothing stored twice), the bytes the
//! recorder wrote to storage per stored occurrence (`/proc/PID/io` over the
//! fed phase) and the peak size of the recording on disk (file + WAL, sampled
//! every 250 ms) against its size after a clean stop. The recording goes to a
//! folder under `target/` (tmpfs would count no bytes).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::core::v1::{Event, Namespace};
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube::{Api, Client};

mod support;
use support::{bytes_written, create_namespace, disk_bytes, flag, memory_mib, metric, percentile};

fn event(ns: &str, i: u64) -> Event {
    serde_json::from_value(serde_json::json!({
        "metadata": {"name": format!("load.{i:x}"), "namespace": ns},
        "involvedObject": {"kind": "Pod", "name": format!("app-{}", i % 500), "namespace": ns, "apiVersion": "v1"},
        "reason": if i.is_multiple_of(3) { "BackOff" } else { "Pulled" },
        "type": if i.is_multiple_of(3) { "Warning" } else { "Normal" },
        "message": format!("Back-off restarting failed container app in pod app-{}", i % 500),
        "count": 1, "firstTimestamp": "2026-11-29T03:00:00Z", "lastTimestamp": "2026-11-29T03:00:00Z",
        "source": {"component": "kubelet", "host": "kwok-small"}
    }))
    .unwrap()
}

/// Sends `total` changes at `rate`/s: 3 in 4 create an Event, 1 in 4 bumps the count of an earlier one.
async fn feed(api: Api<Event>, ns: String, rate: u64, total: u64, created: Arc<AtomicU64>) -> u64 {
    let start = Instant::now();
    let changes = futures::stream::iter(0..total)
        .map(|i| {
            let (api, ns, created) = (api.clone(), ns.clone(), created.clone());
            async move {
                let due = start + Duration::from_secs_f64(i as f64 / rate as f64);
                tokio::time::sleep_until(due.into()).await;
                if i % 4 == 3 && i > 8 {
                    let target = i - 7 - (i - 7) % 4; // an earlier create
                    let patch =
                        serde_json::json!({"count": 2, "lastTimestamp": "2026-11-29T03:01:00Z"});
                    let done = api
                        .patch(
                            &format!("load.{target:x}"),
                            &PatchParams::default(),
                            &Patch::Merge(patch),
                        )
                        .await;
                    if done.is_ok() {
                        created.fetch_add(1, Ordering::Relaxed);
                    }
                } else if api
                    .create(&PostParams::default(), &event(&ns, i))
                    .await
                    .is_ok()
                {
                    created.fetch_add(1, Ordering::Relaxed);
                }
            }
        })
        .buffer_unordered(64);
    changes.collect::<Vec<_>>().await;
    created.load(Ordering::Relaxed)
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let rate = flag(&args, "--rate", 1000);
    let seconds = flag(&args, "--seconds", 60);
    let preload = flag(&args, "--preload", 0);
    let keep = args.iter().any(|a| a == "--keep");
    let kill = args.iter().any(|a| a == "--kill");
    let reuse = args
        .iter()
        .position(|a| a == "--reuse")
        .and_then(|i| args.get(i + 1))
        .cloned();
    let client = Client::try_default()
        .await
        .expect("KUBECONFIG pointing at the local cluster");
    let ns = reuse
        .clone()
        .unwrap_or_else(|| format!("bench-live-{}", std::process::id()));
    let namespaces: Api<Namespace> = Api::all(client.clone());
    if reuse.is_none() {
        create_namespace(&client, &ns).await;
    }
    let api: Api<Event> = Api::namespaced(client.clone(), &ns);
    let created = Arc::new(AtomicU64::new(0));
    if preload > 0 && reuse.is_none() {
        let t = Instant::now();
        // Pre-created Events are all creates (ids offset so they never collide with the live feed).
        futures::stream::iter(0..preload)
            .map(|i| {
                let (api, ns) = (api.clone(), ns.clone());
                async move {
                    api.create(&PostParams::default(), &event(&ns, (1 << 40) + i))
                        .await
                        .is_ok()
                }
            })
            .buffer_unordered(64)
            .filter(|ok| futures::future::ready(*ok))
            .count()
            .await;
        println!(
            "preloaded {preload} Events in {:.1}s",
            t.elapsed().as_secs_f64()
        );
    }

    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let db = dir.path().join("live.db");
    let addr = support::free_local_addr();
    let bin = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/release/kubectl-diag");
    let log = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/record_live.log");
    let mut recorder = std::process::Command::new(&bin)
        .args(["record", "--quiet", "-v", "-n", &ns, "--listen", &addr])
        .args(
            args.iter()
                .position(|a| a == "--chunk-size")
                .map(|i| ["--chunk-size", &args[i + 1]])
                .iter()
                .flatten(),
        )
        .arg("--db")
        .arg(&db)
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .expect("target/release/kubectl-diag: run `cargo build --release` first");
    let pid = recorder.id();
    let catch_up = Instant::now();
    // Caught up = every preloaded occurrence stored (distinct, unlike changes received).
    let give_up = Duration::from_secs(1800);
    while metric(&addr, "kubectl_diag_occurrences_stored_total").unwrap_or(0) < preload
        && catch_up.elapsed() < give_up
    {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    if preload > 0 {
        let stored = metric(&addr, "kubectl_diag_occurrences_stored_total").unwrap_or(0);
        println!(
            "{} {stored} of {preload} preloaded occurrences in {:.1}s, recorder peak RSS {:.1} MiB",
            if stored >= preload {
                "caught up: stored"
            } else {
                "GAVE UP: stored"
            },
            catch_up.elapsed().as_secs_f64(),
            memory_mib(&pid.to_string(), "VmHWM:")
        );
    }

    let total = rate * seconds;
    let stored_before = metric(&addr, "kubectl_diag_occurrences_stored_total").unwrap_or(0);
    let written_before = bytes_written(&pid.to_string());
    let feeder = tokio::spawn(feed(api, ns.clone(), rate, total, created.clone()));
    let start = Instant::now();
    let (mut steady_rss, mut lags, mut peak_disk) = (0.0f64, Vec::new(), 0u64);
    while !feeder.is_finished() {
        tokio::time::sleep(Duration::from_millis(250)).await;
        peak_disk = peak_disk.max(disk_bytes(&db));
        if start.elapsed() > Duration::from_secs(5) {
            steady_rss = steady_rss.max(memory_mib(&pid.to_string(), "VmRSS:"));
        }
        if let Some(lag) = metric(&addr, "kubectl_diag_lag_milliseconds") {
            lags.push(lag);
        }
    }
    let sent = feeder.await.unwrap();
    let elapsed = start.elapsed().as_secs_f64();
    // Let the recorder drain, then stop it (SIGTERM flushes).
    let want = sent + preload;
    let drain = Instant::now();
    while metric(&addr, "kubectl_diag_occurrences_stored_total").unwrap_or(0) < want
        && drain.elapsed() < Duration::from_secs(30)
    {
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let peak = memory_mib(&pid.to_string(), "VmHWM:");
    peak_disk = peak_disk.max(disk_bytes(&db));
    let written = bytes_written(&pid.to_string()) - written_before;
    let fed_stored =
        metric(&addr, "kubectl_diag_occurrences_stored_total").unwrap_or(0) - stored_before;
    let wal = {
        let mut wal = db.as_os_str().to_owned();
        wal.push("-wal");
        std::path::PathBuf::from(wal)
    };
    std::process::Command::new("kill")
        .args([if kill { "-KILL" } else { "-TERM" }, &pid.to_string()])
        .status()
        .unwrap();
    recorder.wait().unwrap();
    if kill {
        let left = std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0);
        println!(
            "killed: {:.1} MiB of WAL left beside a {:.1} MiB recording",
            left as f64 / (1 << 20) as f64,
            std::fs::metadata(&db).map(|m| m.len()).unwrap_or(0) as f64 / (1 << 20) as f64
        );
    }
    let conn = rusqlite::Connection::open(&db).unwrap();
    let stored: i64 = conn
        .query_row("SELECT COALESCE(SUM(n), 0) FROM occurrences", [], |r| {
            r.get(0)
        })
        .unwrap();
    let duplicates: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM (SELECT uid FROM events GROUP BY uid, cluster_id HAVING COUNT(*) > 1)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let after = disk_bytes(&db);
    lags.sort_unstable();
    let p = |q: f64| percentile(&lags, q);
    let mib = |b: u64| b as f64 / (1 << 20) as f64;
    println!(
        "fed {sent} changes in {elapsed:.1}s = {:.0}/s (asked {rate}/s)",
        sent as f64 / elapsed
    );
    println!(
        "stored {stored} occurrences, expected {want}: {}",
        if stored as u64 == want {
            "nothing dropped"
        } else {
            "MISMATCH"
        }
    );
    println!("Events stored twice: {duplicates}");
    println!(
        "written while fed: {:.1} MiB for {fed_stored} occurrences = {:.0} bytes per occurrence",
        mib(written),
        written as f64 / fed_stored.max(1) as f64
    );
    println!(
        "disk: peak {:.1} MiB (file + WAL), {:.1} MiB after a clean stop",
        mib(peak_disk),
        mib(after)
    );
    println!(
        "recorder RSS: steady max {:.1} MiB, peak {:.1} MiB",
        steady_rss, peak
    );
    println!(
        "receipt-to-commit lag (sampled every 250 ms): p50 {} ms, p99 {} ms, max {} ms",
        p(0.5),
        p(0.99),
        p(1.0)
    );
    if keep {
        println!("kept namespace {ns} (--reuse {ns} --preload {preload})");
    } else {
        let _ = namespaces.delete(&ns, &DeleteParams::background()).await;
    }
}
