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
//! `--exporter PATH` runs resmoio/kubernetes-event-exporter (built from its
//! source with `go build`; see docs/performance.md) side by side with the
//! recorder, on the same feed: a file sink, `kubeQPS: 100`, `kubeBurst: 500`,
//! `maxEventAgeSeconds: 86400`, `omitLookup: true`, watching the feed's
//! namespace; both processes' bytes written, RSS and CPU are reported.
//! `--fresh-every S` measures what a reader sees: every S seconds an Event of
//! its own reason is created, and the release `kubectl-diag sql` is run until
//! it shows it; the time from the create's answer to that is reported.
//! `--keep-db PATH` copies the recording and its WAL there once the recorder
//! stopped (with `--kill`, the WAL's frames show what each commit wrote).
//! `--events-only`, `--commit-every D`, `--ship URL` and `--chunk-size N` are passed on to
//! the recorder; `--page-size N` creates the recording with N-byte pages.
//!
//! Reports the rate achieved, the recorder's RSS (steady maximum and peak),
//! the receipt-to-commit lag sampled from /metrics, stored versus created
//! occurrences (nothing may be dropped, nothing stored twice), the bytes the
//! recorder wrote to storage per stored occurrence (`/proc/PID/io` over the
//! fed phase) and the peak size of the recording on disk (file + WAL, sampled
//! every 250 ms, or `--sample-ms N`, which also paces the /metrics scrapes) against its size after a clean stop. The recording goes to a
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

/// Now, as the apiserver writes times.
fn now() -> String {
    chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

// NB: times are now's, not fixed: the exporter (`--exporter`) drops an Event
// whose last time is older than its maxEventAgeSeconds, however it came.
fn event(ns: &str, i: u64) -> Event {
    let now = now();
    serde_json::from_value(serde_json::json!({
        "metadata": {"name": format!("load.{i:x}"), "namespace": ns},
        "involvedObject": {"kind": "Pod", "name": format!("app-{}", i % 500), "namespace": ns, "apiVersion": "v1"},
        "reason": if i.is_multiple_of(3) { "BackOff" } else { "Pulled" },
        "type": if i.is_multiple_of(3) { "Warning" } else { "Normal" },
        "message": format!("Back-off restarting failed container app in pod app-{}", i % 500),
        "count": 1, "firstTimestamp": now, "lastTimestamp": now,
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
                    let patch = serde_json::json!({"count": 2, "lastTimestamp": now()});
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
    let page_size = flag(&args, "--page-size", 0);
    if page_size > 0 {
        // A SQLite file with no schema is a new recording; its page size stays.
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch(&format!(
            "PRAGMA page_size = {page_size}; PRAGMA auto_vacuum = INCREMENTAL; PRAGMA journal_mode = WAL;"
        ))
        .unwrap();
    }
    let passed = |name: &str| -> Vec<String> {
        args.iter()
            .position(|a| a == name)
            .map(|i| vec![name.to_string(), args[i + 1].clone()])
            .unwrap_or_default()
    };
    let exporter = args
        .iter()
        .position(|a| a == "--exporter")
        .map(|i| Exporter::start(&args[i + 1], &ns, dir.path()));
    let addr = support::free_local_addr();
    let bin = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/release/kubectl-diag");
    let log = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/record_live.log");
    let mut recorder = std::process::Command::new(&bin)
        .args(["record", "--quiet", "-v", "-n", &ns, "--listen", &addr])
        .args(passed("--chunk-size"))
        .args(passed("--commit-every"))
        // The recorder's own CPU with a destination to ship to (issue 32).
        .args(passed("--ship"))
        .args(args.iter().filter(|a| *a == "--events-only"))
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

    if let Some(e) = &exporter {
        // Both watch before the feed starts: the exporter's list has no marker to wait for.
        e.wait_started().await;
    }
    let total = rate * seconds;
    let stored_before = metric(&addr, "kubectl_diag_occurrences_stored_total").unwrap_or(0);
    let written_before = bytes_written(&pid.to_string());
    let cpu_before = support::cpu_seconds(&pid.to_string());
    let exporter_before = exporter.as_ref().map(|e| {
        (
            bytes_written(&e.pid()),
            support::cpu_seconds(&e.id().to_string()),
        )
    });
    let feeder = tokio::spawn(feed(api.clone(), ns.clone(), rate, total, created.clone()));
    let fresh_every = flag(&args, "--fresh-every", 0);
    // NB: each sample scrapes the recorder's /metrics, which costs it CPU the
    // exporter does not pay: at 1 Event/s, 4 scrapes a second were most of it.
    let sample = Duration::from_millis(flag(&args, "--sample-ms", 250));
    let prober = (fresh_every > 0).then(|| {
        tokio::spawn(freshness(
            api,
            ns.clone(),
            db.clone(),
            fresh_every,
            bin.clone(),
        ))
    });
    let start = Instant::now();
    let (mut steady_rss, mut lags, mut peak_disk) = (0.0f64, Vec::new(), 0u64);
    let mut exporter_rss = 0.0f64;
    while !feeder.is_finished() {
        tokio::time::sleep(sample).await;
        peak_disk = peak_disk.max(disk_bytes(&db));
        if start.elapsed() > Duration::from_secs(5) {
            steady_rss = steady_rss.max(memory_mib(&pid.to_string(), "VmRSS:"));
            if let Some(e) = &exporter {
                exporter_rss = exporter_rss.max(memory_mib(&e.pid(), "VmRSS:"));
            }
        }
        if let Some(lag) = metric(&addr, "kubectl_diag_lag_milliseconds") {
            lags.push(lag);
        }
    }
    let sent = feeder.await.unwrap();
    let elapsed = start.elapsed().as_secs_f64();
    if let Some(p) = prober {
        p.abort();
        let _ = p.await;
    }
    let fresh = FRESH_TIMES.lock().unwrap().clone();
    let probes = FRESH_SEEN.load(Ordering::Relaxed);
    // Let the recorder drain, then stop it (SIGTERM flushes).
    // NB: up to its whole commit window (a minute by default, at most 5 min)
    // and more: the bytes of the commit that ends the feed's last window are
    // the feed's, and counted only once it has landed.
    let want = sent + preload + probes;
    let drain = Instant::now();
    while metric(&addr, "kubectl_diag_occurrences_stored_total").unwrap_or(0) < want
        && drain.elapsed() < Duration::from_secs(330)
    {
        tokio::time::sleep(sample).await;
    }
    let peak = memory_mib(&pid.to_string(), "VmHWM:");
    peak_disk = peak_disk.max(disk_bytes(&db));
    let written = bytes_written(&pid.to_string()) - written_before;
    let cpu = support::cpu_seconds(&pid.to_string()) - cpu_before;
    let exporter_figures = exporter.map(|mut e| {
        // The same drain as the recorder's: its file holds a line per change it saw.
        let (written_before, cpu_before) = exporter_before.unwrap();
        let figures = (
            bytes_written(&e.pid()) - written_before,
            support::cpu_seconds(&e.id().to_string()) - cpu_before,
            memory_mib(&e.pid(), "VmHWM:"),
            e.lines(),
        );
        // And to its stop, as the recorder's below (issue 44.11).
        std::process::Command::new("kill")
            .args(["-TERM", &e.pid()])
            .status()
            .unwrap();
        let to_stop =
            support::at_exit(&e.pid(), Duration::from_secs(30)).map(|(w, _)| w - written_before);
        let _ = e.child.wait();
        (figures, to_stop)
    });
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
    let to_stop = support::at_exit(&pid.to_string(), Duration::from_secs(60))
        .map(|(w, _)| w - written_before);
    recorder.wait().unwrap();
    if kill {
        let left = std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0);
        println!(
            "killed: {:.1} MiB of WAL left beside a {:.1} MiB recording",
            left as f64 / (1 << 20) as f64,
            std::fs::metadata(&db).map(|m| m.len()).unwrap_or(0) as f64 / (1 << 20) as f64
        );
    }
    if let Some(i) = args.iter().position(|a| a == "--keep-db") {
        // The recording as the recorder left it, WAL included, before anything opens it.
        let to = std::path::Path::new(&args[i + 1]);
        std::fs::copy(&db, to).unwrap();
        let mut to_wal = to.as_os_str().to_owned();
        to_wal.push("-wal");
        let _ = std::fs::copy(&wal, to_wal);
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
        "receipt-to-commit lag (sampled every {} ms): p50 {} ms, p99 {} ms, max {} ms",
        sample.as_millis(),
        p(0.5),
        p(0.99),
        p(1.0)
    );
    println!(
        "recorder CPU while fed: {cpu:.2} s ({:.1} % of one core)",
        100.0 * cpu / elapsed
    );
    if let Some(w) = to_stop {
        println!(
            "written from the feed's start to the stop: {:.2} MiB = {:.0} bytes per occurrence",
            mib(w),
            w as f64 / fed_stored.max(1) as f64
        );
    }
    if let Some(((written, cpu, peak, lines), exporter_to_stop)) = exporter_figures {
        if let (Some(ours), Some(theirs)) = (to_stop, exporter_to_stop) {
            println!(
                "from the feed's start to the stop: ours {:.2} MiB, exporter {:.2} MiB = {:.2}x the exporter's",
                mib(ours),
                mib(theirs),
                ours as f64 / theirs.max(1) as f64
            );
        }
        println!(
            "exporter: written {:.2} MiB = {:.0} bytes per change fed, {lines} lines in its file; RSS steady max {exporter_rss:.1} MiB, peak {peak:.1} MiB; CPU {cpu:.2} s ({:.1} % of one core)",
            mib(written),
            written as f64 / sent.max(1) as f64,
            100.0 * cpu / elapsed
        );
    }
    if !fresh.is_empty() {
        let mut fresh = fresh;
        fresh.sort_unstable();
        println!(
            "reader freshness ({} probes, create answered -> `sql` shows it): p50 {} ms, max {} ms",
            fresh.len(),
            percentile(&fresh, 0.5),
            percentile(&fresh, 1.0)
        );
    }
    if keep {
        println!("kept namespace {ns} (--reuse {ns} --preload {preload})");
    } else {
        let _ = namespaces.delete(&ns, &DeleteParams::background()).await;
    }
}

/// Probe Events created by [`freshness`] (each one more occurrence stored).
static FRESH_SEEN: AtomicU64 = AtomicU64::new(0);
/// What [`freshness`] measured so far (it is stopped when the feed ends).
static FRESH_TIMES: std::sync::Mutex<Vec<u64>> = std::sync::Mutex::new(Vec::new());

/// Every `every` seconds, creates an Event of a reason of its own and runs
/// `kubectl-diag sql` (the release build) until it shows it: the times, in ms,
/// from the create's answer to the reader seeing it, go to [`FRESH_TIMES`].
async fn freshness(
    api: Api<Event>,
    ns: String,
    db: std::path::PathBuf,
    every: u64,
    bin: std::path::PathBuf,
) {
    for n in 0.. {
        tokio::time::sleep(Duration::from_secs(every)).await;
        let reason = format!("Fresh{n}");
        let mut probe = event(&ns, (1 << 44) + n);
        probe.reason = Some(reason.clone());
        if api.create(&PostParams::default(), &probe).await.is_err() {
            continue;
        }
        FRESH_SEEN.fetch_add(1, Ordering::Relaxed);
        let created = Instant::now();
        let query = format!(
            "SELECT count(*) AS n FROM events e JOIN strings r ON r.id = e.reason WHERE r.s = '{reason}'"
        );
        while created.elapsed() < Duration::from_secs(30) {
            let (bin, db, query) = (bin.clone(), db.clone(), query.clone());
            let out = tokio::task::spawn_blocking(move || {
                std::process::Command::new(&bin)
                    .arg("--db")
                    .arg(&db)
                    .args(["sql", &query, "-o", "csv"])
                    .output()
                    .unwrap()
            })
            .await
            .unwrap();
            if String::from_utf8_lossy(&out.stdout).lines().nth(1) == Some("1") {
                FRESH_TIMES
                    .lock()
                    .unwrap()
                    .push(created.elapsed().as_millis() as u64);
                break;
            }
        }
    }
}

/// resmoio/kubernetes-event-exporter, run beside the recorder.
struct Exporter {
    child: std::process::Child,
    out: std::path::PathBuf,
    log: std::path::PathBuf,
}

impl Exporter {
    fn start(bin: &str, ns: &str, dir: &std::path::Path) -> Exporter {
        let out = dir.join("exporter.json");
        let log = dir.join("exporter.log");
        let config = dir.join("exporter.yaml");
        // Its best settings (issue 33): no lookups, a generous age, QPS that never throttles.
        std::fs::write(
            &config,
            format!(
                "logLevel: info\nlogFormat: json\nmaxEventAgeSeconds: 86400\nkubeQPS: 100\nkubeBurst: 500\nomitLookup: true\nnamespace: {ns}\nroute:\n  routes:\n    - match:\n        - receiver: dump\nreceivers:\n  - name: dump\n    file:\n      path: {}\n",
                out.display()
            ),
        )
        .unwrap();
        let child = std::process::Command::new(bin)
            .arg("-conf")
            .arg(&config)
            .args(["-metrics-address", "127.0.0.1:0"])
            .stdout(std::fs::File::create(&log).unwrap())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("--exporter PATH: the exporter's binary");
        Exporter { child, out, log }
    }

    fn id(&self) -> u32 {
        self.child.id()
    }

    fn pid(&self) -> String {
        self.child.id().to_string()
    }

    /// Waits until its watch has started (its log says so), at most 30 s.
    async fn wait_started(&self) {
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(30) {
            let log = std::fs::read_to_string(&self.log).unwrap_or_default();
            if log.contains("leader election disabled") {
                tokio::time::sleep(Duration::from_secs(1)).await;
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("the exporter did not start: see {}", self.log.display());
    }

    /// Lines in its output file: one per change it wrote.
    fn lines(&self) -> usize {
        std::fs::read_to_string(&self.out)
            .map(|s| s.lines().count())
            .unwrap_or(0)
    }
}

impl Drop for Exporter {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
