//! Benchmark of the recorder's hot path: decode watch lines -> normalise ->
//! batch -> commit, on a synthetic feed with a realistic mix of reasons and
//! messages. Not a test: it prints figures for docs/performance.md.
//!
//!   cargo bench --bench record_pipeline -- [--events N] [--prefill N] [--db PATH] [--runs N] [--skip N] [--pipelined]
//!
//! `--skip N` goes on with a feed whose first N changes a DB kept with `--db`
//! already holds (from `--events N --db PATH`): a copy of a 10 M DB then
//! serves many runs without filling one each time.
//!
//! `--page-size N` creates each fresh DB with N-byte pages (the recorder
//! creates 4 KiB ones; an existing file keeps its own).
//!
//! `--pipelined` runs the two stages as `record` does, on this 2-core machine:
//! this thread decodes and sends each change through the recorder's bounded
//! channel to its writer thread (`record::sink`), which batches and commits.
//! The whole feed is generated first; it reports occurrences/s from the first
//! send to the writer's last commit. The one-core figure is the default mode.
//!
//! Reports occurrences/s (decode included), bytes per stored occurrence
//! (file size after a checkpoint, indexes included), peak RSS, and the
//! per-batch commit latency (p50/p99). `--runs N` repeats the whole run on a
//! fresh DB each time and ends with the median: this VM is too noisy for one.
//!
//! After each one-core run on a fresh DB (no `--prefill`, `--skip`), the same
//! process inserts the rows that run stored (strings, objects, Events,
//! occurrences, read back from its file) into a second fresh recording with
//! bare rusqlite: one prepared INSERT per table, a commit every 10,000 rows,
//! no decode, no lookups. It prints that rate next to the pipeline's and the
//! ratio (issue 16: the pipeline must keep ≥ 0.75 of it).

use std::time::Instant;

use kube::api::WatchEvent;
use kubectl_diag::k8s::event::WireEvent;
use kubectl_diag::model::{EventChange, EventObservation};
use kubectl_diag::store::writer::Writer;
use kubectl_diag::store::{self, Mode};

mod support;
use support::{flag, memory_mib, percentile};

const BATCH: usize = 10_000;

#[derive(Default)]
struct Feed {
    i: u64,
    live: Vec<(u64, u32)>, // (event number, count) of events that repeat
}

const REASONS: &[(&str, &str, &str, &str)] = &[
    (
        "Scheduled",
        "Normal",
        "default-scheduler",
        "Successfully assigned {ns}/{pod} to node-{node}",
    ),
    (
        "Pulling",
        "Normal",
        "kubelet",
        "Pulling image \"registry.example.com/team/app:{ver}\"",
    ),
    (
        "Pulled",
        "Normal",
        "kubelet",
        "Successfully pulled image \"registry.example.com/team/app:{ver}\" in 1.2s (1.2s including waiting). Image size: 52428800 bytes.",
    ),
    ("Created", "Normal", "kubelet", "Created container: app"),
    ("Started", "Normal", "kubelet", "Started container app"),
    ("Killing", "Normal", "kubelet", "Stopping container app"),
    (
        "BackOff",
        "Warning",
        "kubelet",
        "Back-off restarting failed container app in pod {pod}_{ns}({uid})",
    ),
    (
        "Unhealthy",
        "Warning",
        "kubelet",
        "Readiness probe failed: HTTP probe failed with statuscode: 503",
    ),
    (
        "FailedScheduling",
        "Warning",
        "default-scheduler",
        "0/120 nodes are available: 40 Insufficient cpu, 80 node(s) had untolerated taint {dedicated: batch}. preemption: 0/120 nodes are available: 120 No preemption victims found for incoming pod.",
    ),
    (
        "SuccessfulCreate",
        "Normal",
        "replicaset-controller",
        "Created pod: {pod}",
    ),
    (
        "ScalingReplicaSet",
        "Normal",
        "deployment-controller",
        "Scaled up replica set {rs} from 3 to 4",
    ),
];

fn uuid(n: u64, salt: u64) -> String {
    let x = n.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ salt;
    let y = x.rotate_left(17).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    format!(
        "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
        x >> 32,
        (x >> 16) & 0xffff,
        x & 0xfff,
        y & 0xfff,
        y >> 16
    )
}

impl Feed {
    /// The next Event as the apiserver's watch sends it: one line of JSON,
    /// `{"type":"ADDED","object":{...}}`, as bytes off the wire.
    fn next(&mut self) -> Vec<u8> {
        let (n, count) = self.advance();
        self.render(n, count)
    }

    /// Which Event changes next: (its number, its count).
    fn advance(&mut self) -> (u64, u32) {
        self.i += 1;
        // One in four changes is a repeat of a live event (count + 1).
        if self.i.is_multiple_of(4) && !self.live.is_empty() {
            let idx = (self.i as usize / 4) % self.live.len();
            self.live[idx].1 += 1;
            let (n, c) = self.live[idx];
            if c > 20 {
                self.live.swap_remove(idx);
            }
            (n, c)
        } else {
            let n = self.i;
            if n.is_multiple_of(7) {
                if self.live.len() > 5_000 {
                    self.live.swap_remove(0);
                }
                self.live.push((n, 1));
            }
            (n, 1)
        }
    }

    fn render(&self, n: u64, count: u32) -> Vec<u8> {
        let (reason, type_, component, template) = REASONS[(n % REASONS.len() as u64) as usize];
        // 20,000 Pods in 40 namespaces, each the subject of many Events.
        let p = (n.wrapping_mul(2_654_435_761)) % 20_000;
        let ns = format!("team-{}", p % 40);
        let pod = format!("app-{}-7c9d5f-{:05x}", p % 300, p);
        let message = template
            .replace("{ns}", &ns)
            .replace("{pod}", &pod)
            .replace("{node}", &(p % 120).to_string())
            .replace("{ver}", &format!("1.{}", n % 9))
            .replace("{rs}", &format!("app-{}-7c9d5f", n % 300))
            .replace("{uid}", &uuid(p, 3));
        let t0 = 1_790_000_000 + n / 100;
        let first = chrono::DateTime::from_timestamp(t0 as i64, 0)
            .unwrap()
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        let last = chrono::DateTime::from_timestamp((t0 + u64::from(count)) as i64, 0)
            .unwrap()
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        let object = serde_json::json!({
            "kind": "Event", "apiVersion": "v1",
            "metadata": {
                "name": format!("{pod}.{:x}", 0x187c_0000_0000_0000_u64 + n * 1_000_003), "namespace": ns, "uid": uuid(n, 1),
                "resourceVersion": (self.i + 1000).to_string(), "creationTimestamp": first,
                "managedFields": [{"manager": component, "operation": "Update", "apiVersion": "v1", "time": first}]
            },
            "involvedObject": {"kind": "Pod", "namespace": ns, "name": pod, "uid": uuid(p, 3),
                               "apiVersion": "v1", "resourceVersion": "123", "fieldPath": "spec.containers{app}"},
            "reason": reason, "message": message,
            "source": {"component": component, "host": format!("node-{}", n % 120)},
            "firstTimestamp": first, "lastTimestamp": last, "count": count, "type": type_,
            "eventTime": null, "reportingComponent": component, "reportingInstance": format!("node-{}", n % 120)
        });
        let kind = if count == 1 { "ADDED" } else { "MODIFIED" };
        serde_json::to_vec(&serde_json::json!({"type": kind, "object": object})).unwrap()
    }
}

/// One watch line decoded as kube's watch stream decodes it: checked as UTF-8
/// into an owned String, then the WatchEvent decoded from that; normalised.
fn decode_line(json: &[u8]) -> EventObservation {
    let line = String::from_utf8(json.to_vec()).unwrap();
    match serde_json::from_str::<WatchEvent<WireEvent>>(&line).unwrap() {
        WatchEvent::Added(e) | WatchEvent::Modified(e) => e.into_observation().unwrap(),
        other => panic!("the feed sends no {other:?}"),
    }
}

/// A recording at `path` with the benchmark's cluster, and the cluster's id.
fn recording(path: &std::path::Path) -> (store::Recording, i64) {
    let conn = store::Recording::open(path, Mode::Write).unwrap();
    let cluster = conn
        .register_cluster("bench-cluster", "bench", "", 0)
        .unwrap();
    (conn, cluster)
}

/// Streams `n` changes through decode -> normalise -> apply -> commit.
/// The synthetic feed is generated a batch ahead and its cost is not counted.
/// Returns (occurrences, seconds measured, seconds spent generating the feed).
fn run(writer: &mut Writer, feed: &mut Feed, n: u64, latencies: &mut Vec<f64>) -> (u64, f64, f64) {
    let mut elapsed = 0.0;
    let (mut decode, mut apply, mut commit, mut feed_secs) = (0.0, 0.0, 0.0, 0.0);
    let mut occurrences = 0;
    let (mut done, mut sampled) = (0, 0_u64);
    while done < n {
        let size = BATCH.min((n - done) as usize);
        let t = Instant::now();
        let batch: Vec<Vec<u8>> = (0..size).map(|_| feed.next()).collect();
        feed_secs += t.elapsed().as_secs_f64();
        let batch_start = Instant::now();
        let mut tx = writer.begin().unwrap();
        for (i, json) in batch.iter().enumerate() {
            // NB: a clock read costs ~33 ns here, and three a change were 1 %
            // of the time measured: the phases are timed on a sample. Not
            // every 8th change: the feed repeats an Event every 4th, and the
            // sample held only repeats. The top bits of i·φ pick one change
            // in 8 with no period of their own.
            let timed = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 61 == 0;
            let t = timed.then(Instant::now);
            let obs = decode_line(json);
            let t2 = timed.then(Instant::now);
            occurrences += tx
                .apply(&EventChange::Upsert(Box::new(obs)))
                .unwrap()
                .occurrences;
            if let (Some(t), Some(t2)) = (t, t2) {
                decode += (t2 - t).as_secs_f64();
                apply += t2.elapsed().as_secs_f64();
                sampled += 1;
            }
        }
        let t = Instant::now();
        tx.commit().unwrap();
        commit += t.elapsed().as_secs_f64();
        let took = batch_start.elapsed().as_secs_f64();
        elapsed += took;
        latencies.push(took * 1000.0);
        done += size as u64;
    }
    let scale = n as f64 / sampled.max(1) as f64;
    println!(
        "phases: decode+normalise {:.2}s, store {:.2}s (both from a sample of 1 change in 8), commit {commit:.2}s",
        decode * scale,
        apply * scale
    );
    // NB: this VM's speed drifts by a third from minute to minute; the feed is
    // the same work every run, so its time tells a slow minute from a slow change.
    println!("feed generation (not counted, a yardstick of the machine's speed): {feed_secs:.2}s");
    (occurrences, elapsed, feed_secs)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let runs = flag(&args, "--runs", 1).max(1);
    let pipelined = args.iter().any(|a| a == "--pipelined");
    assert!(
        runs == 1 || !args.iter().any(|a| a == "--db"),
        "--db keeps one file: use it with one run"
    );
    let mut ratios: Vec<f64> = Vec::new();
    let mut results: Vec<(f64, f64)> = (0..runs)
        .map(|i| {
            if runs > 1 {
                println!("--- run {} of {runs}", i + 1);
            }
            if pipelined {
                (pipelined_once(&args), 0.0)
            } else {
                let (rate, feed, ratio) = once(&args);
                ratios.extend(ratio);
                (rate, feed)
            }
        })
        .collect();
    if runs > 1 {
        results.sort_by(|a, b| a.0.total_cmp(&b.0));
        let all: Vec<String> = results
            .iter()
            .map(|(rate, feed)| format!("{rate:.0} (yardstick {feed:.2}s)"))
            .collect();
        println!("--- {runs} runs, occurrences/s: {}", all.join(", "));
        println!("median: {:.0} occurrences/s", percentile(&results, 0.5).0);
        if !ratios.is_empty() {
            ratios.sort_by(f64::total_cmp);
            let all: Vec<String> = ratios.iter().map(|r| format!("{r:.2}")).collect();
            println!(
                "pipeline / bare rusqlite, per run: {}; median {:.2}",
                all.join(", "),
                percentile(&ratios, 0.5)
            );
        }
    }
}

/// The tables a pipeline run fills, in an order their references allow.
const BARE_TABLES: &[&str] = &["strings", "objects", "events", "occurrences"];

/// Inserts the rows of `BARE_TABLES` in `from` into a fresh recording with
/// bare rusqlite: the same rows, the same schema and pragmas (`store::open`),
/// one prepared INSERT per table, a commit every `BATCH` rows. The rows are
/// read into memory first and that is not timed. NB: they go in table by
/// table in key order, so every B-tree grows at its right edge: the cheapest
/// order for SQLite, which makes the bare rate an upper bound and the ratio
/// a conservative one. Returns seconds inserting.
fn bare_insert(from: &std::path::Path, dir: &std::path::Path) -> f64 {
    use rusqlite::types::Value;
    let src =
        rusqlite::Connection::open_with_flags(from, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let tables: Vec<(&str, usize, Vec<Vec<Value>>)> = BARE_TABLES
        .iter()
        .map(|t| {
            let mut stmt = src.prepare(&format!("SELECT * FROM {t}")).unwrap();
            let cols = stmt.column_count();
            let rows = stmt
                .query_map([], |r| (0..cols).map(|i| r.get::<_, Value>(i)).collect())
                .unwrap()
                .collect::<Result<Vec<Vec<Value>>, _>>()
                .unwrap();
            (*t, cols, rows)
        })
        .collect();
    let path = dir.join("bare.db");
    // NB: the recorder's own schema and pragmas, and the cluster row the copied rows refer to.
    let (rec, _) = recording(&path);
    let conn = rec.connection();
    let mut secs = 0.0;
    for (table, cols, rows) in &tables {
        let marks = vec!["?"; *cols].join(", ");
        let t = Instant::now();
        let mut stmt = conn
            .prepare(&format!("INSERT INTO {table} VALUES ({marks})"))
            .unwrap();
        for chunk in rows.chunks(BATCH) {
            conn.execute_batch("BEGIN IMMEDIATE").unwrap();
            for row in chunk {
                stmt.execute(rusqlite::params_from_iter(row.iter()))
                    .unwrap();
            }
            conn.execute_batch("COMMIT").unwrap();
        }
        secs += t.elapsed().as_secs_f64();
    }
    secs
}

/// One whole run on its own DB; returns (occurrences/s, feed seconds, and the
/// ratio of that rate to a bare rusqlite insert of the same rows, when measured).
fn once(args: &[String]) -> (f64, f64, Option<f64>) {
    let events = flag(args, "--events", 1_000_000);
    let prefill = flag(args, "--prefill", 0);
    let dir = tempfile::tempdir().unwrap();
    let path = args
        .iter()
        .position(|a| a == "--db")
        .and_then(|i| args.get(i + 1))
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| dir.path().join("bench.db"));
    let page_size = flag(args, "--page-size", 0);
    if page_size > 0 && !path.exists() {
        // A SQLite file with no schema is a new recording; its page size stays.
        rusqlite::Connection::open(&path)
            .unwrap()
            .execute_batch(&format!(
                "PRAGMA page_size = {page_size}; PRAGMA auto_vacuum = INCREMENTAL; PRAGMA journal_mode = WAL;"
            ))
            .unwrap();
    }

    let (conn, cluster) = recording(&path);
    let mut writer = Writer::new(conn, cluster);
    let mut feed = Feed::default();
    for _ in 0..flag(args, "--skip", 0) {
        feed.advance();
    }
    let mut latencies = Vec::new();

    if prefill > 0 {
        let (occ, secs, _) = run(&mut writer, &mut feed, prefill, &mut latencies);
        println!(
            "prefill: {prefill} changes, {occ} occurrences in {secs:.1}s ({:.0}/s)",
            prefill as f64 / secs
        );
        latencies.clear();
    }
    let (occ, secs, feed_secs) = run(&mut writer, &mut feed, events, &mut latencies);
    writer
        .connection()
        .execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
        .unwrap();
    let total_occ: i64 = writer
        .connection()
        .query_row("SELECT COALESCE(SUM(n), 0) FROM occurrences", [], |r| {
            r.get(0)
        })
        .unwrap();
    let bytes = std::fs::metadata(&path).unwrap().len();
    latencies.sort_by(f64::total_cmp);
    println!("measured: {events} changes -> {occ} occurrences in {secs:.2}s");
    println!(
        "throughput: {:.0} changes/s, {:.0} occurrences/s",
        events as f64 / secs,
        occ as f64 / secs
    );
    println!(
        "size: {:.1} MiB for {total_occ} occurrences = {:.1} bytes/occurrence (indexes included)",
        bytes as f64 / 1048576.0,
        bytes as f64 / total_occ as f64
    );
    println!(
        "commit of a {BATCH}-change batch: p50 {:.1} ms, p99 {:.1} ms",
        percentile(&latencies, 0.5),
        percentile(&latencies, 0.99)
    );
    println!("peak RSS: {:.1} MiB", memory_mib("self", "VmHWM:"));
    let rate = occ as f64 / secs;
    let mut ratio = None;
    if prefill == 0 && flag(args, "--skip", 0) == 0 {
        drop(writer);
        let bare_dir = tempfile::tempdir().unwrap();
        let bare = bare_insert(&path, bare_dir.path());
        let bare_rate = total_occ as f64 / bare;
        println!(
            "bare rusqlite insert of the same rows (strings, objects, Events, occurrences; same schema): \
             {bare:.2}s = {bare_rate:.0} occurrences/s; pipeline / bare = {:.2}",
            rate / bare_rate
        );
        ratio = Some(rate / bare_rate);
    }
    (rate, feed_secs, ratio)
}

/// One `--pipelined` run on a fresh DB; returns occurrences/s.
fn pipelined_once(args: &[String]) -> f64 {
    use std::sync::Arc;
    use std::sync::atomic::Ordering;

    use kubectl_diag::model::Change;
    use kubectl_diag::record::sink::Msg;

    let events = flag(args, "--events", 1_000_000);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bench.db");
    let (conn, cluster) = recording(&path);
    let start = conn.start_session(cluster, "bench", "watch", 0).unwrap();
    let mut feed = Feed::default();
    let t = Instant::now();
    let lines: Vec<Vec<u8>> = (0..events).map(|_| feed.next()).collect();
    println!(
        "feed generation (not counted): {:.2}s",
        t.elapsed().as_secs_f64()
    );

    let begin = Instant::now();
    let (tx, writer, stats) = support::spawn_writer(conn, &path, cluster, start.id);
    let resource: Arc<str> = "events".into();
    for json in &lines {
        let obs = decode_line(json);
        let rv = Some(obs.resource_version.clone());
        tx.blocking_send(Msg::Change {
            change: Change::Event(EventChange::Upsert(Box::new(obs))),
            resource: resource.clone(),
            rv,
            received: Instant::now(),
        })
        .unwrap();
    }
    let decoded = begin.elapsed().as_secs_f64();
    drop(tx);
    writer.join().unwrap().unwrap();
    let secs = begin.elapsed().as_secs_f64();
    let occ = stats.occurrences.load(Ordering::Relaxed);
    assert_eq!(
        stats.changes.load(Ordering::Relaxed),
        events,
        "every change sent is stored"
    );
    println!(
        "pipelined: {events} changes -> {occ} occurrences in {secs:.2}s = {:.0} occurrences/s; \
         decoding ended at {decoded:.2}s; {} commits",
        occ as f64 / secs,
        stats.commits.load(Ordering::Relaxed)
    );
    println!(
        "peak RSS (the feed included): {:.1} MiB",
        memory_mib("self", "VmHWM:")
    );
    occ as f64 / secs
}
