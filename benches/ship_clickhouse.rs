//! Shipping to ClickHouse (issue 31), against a ClickHouse started by hand:
//!
//!   scripts/clickhouse up     # prints the URL
//!   DIAG_CLICKHOUSE_URL=clickhouse://diag:diag-test-password@127.0.0.1:18123/diag \
//!     cargo bench --bench ship_clickhouse -- catch-up [--occurrences 1000000]
//!   DIAG_CLICKHOUSE_URL=… cargo bench --bench ship_clickhouse -- live [--rate 1000] [--seconds 30] [--commit-every-ms 5000] [--no-ship] [--to otlp+http://127.0.0.1:4318]
//!
//! catch-up: a recording of N occurrences made through the recorder's writer, then a
//! destination added (every row into the outbox) and the outbox shipped as the recorder
//! ships it (take, send, confirm): rows per second, and where the time goes.
//! live: the writer fed at --rate with the outbox on and a shipper running, as in `record
//! --ship`; every 200 ms ClickHouse's row count is read, and the lag is how long ago the
//! recorder had received that many occurrences (p50/p99/max over the samples), plus the
//! process's CPU time (compare with --no-ship).
//!   DIAG_CLICKHOUSE_URL=… cargo bench --bench ship_clickhouse -- fleet [--clusters 20] [--occurrences 500000] [--runs 20]
//!
//! fleet: N clusters of M occurrences each shipped into one database (diag_fleet, kept and
//! reused when it already holds them), then `timeline pod/app-7 -n team-7 --store … --cluster
//! c-K` run in-process --runs times over the clusters: p50/p90/max wall time of the whole
//! command (pull of the slice, the timeline, its output).
//!   DIAG_CLICKHOUSE_URL=… cargo bench --bench ship_clickhouse -- compare --database DB [--cluster NAME] [--until T] TYPE/NAME[@NAMESPACE] …
//!
//! compare: for each object, `timeline --store` as it pulls now (what the timeline reads)
//! against the pull before (the whole namespace: `ship::pull::pull` with `store_slice`,
//! then `timeline --db` on it), as a table and as JSON, `--until` fixed: SAME or the diff.
//! catch-up and live use a database of their own (diag_bench_<pid>).

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use kubectl_diag::record::sink::Msg;
use kubectl_diag::ship::clickhouse::ClickHouse;
use kubectl_diag::ship::url::ClickHouseUrl;
use kubectl_diag::ship::{Destination, outbox};
use kubectl_diag::store::{self, Mode};

mod support;
use support::{flag, memory_mib, percentile};

fn msg(i: u64) -> Msg {
    Msg::Change {
        change: kubectl_diag::model::Change::Event(support::event_change(i)),
        resource: "events".into(),
        rv: Some(i.to_string()),
        received: Instant::now(),
    }
}

/// user + system CPU seconds of this process.
fn cpu_seconds() -> f64 {
    stat_cpu(&std::fs::read_to_string("/proc/self/stat").unwrap_or_default())
}

/// utime + stime of a `/proc/…/stat` line, in seconds.
fn stat_cpu(stat: &str) -> f64 {
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or("", |(_, r)| r)
        .split_whitespace()
        .collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) / 100.0
}

fn url(database: &str) -> ClickHouseUrl {
    let text = std::env::var("DIAG_CLICKHOUSE_URL")
        .expect("set DIAG_CLICKHOUSE_URL (scripts/clickhouse up prints it)");
    let mut url = ClickHouseUrl::parse(&text, None).unwrap();
    url.database = database.to_string();
    url
}

/// `fleet`: builds the fleet database if needed, then times timelines against it.
async fn fleet(args: &[String]) {
    let clusters = flag(args, "--clusters", 20);
    let per = flag(args, "--occurrences", 500_000);
    let runs = flag(args, "--runs", 20);
    let url = url("diag_fleet");
    let ch = ClickHouse::new(&url);
    ch.create_schema(None, None).await.unwrap();
    let held = ch.clusters().await.unwrap();
    if (held.len() as u64) < clusters {
        let destination = Destination::ClickHouse(ClickHouse::new(&url));
        for c in held.len() as u64..clusters {
            let t = Instant::now();
            let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
            let path = dir.path().join("fleet.db");
            let rec = store::Recording::open(&path, Mode::Write).unwrap();
            let uid = format!("00000000-0000-4000-a000-{c:012x}");
            let cluster = rec
                .register_cluster(&uid, &format!("c-{c}"), "", 0)
                .unwrap();
            let start = rec.start_session(cluster, "bench", "watch", 0).unwrap();
            let (tx, thread, _) = support::spawn_writer(rec, &path, cluster, start.id);
            for i in 0..per {
                tx.send(msg(i)).await.unwrap();
            }
            drop(tx);
            thread.join().unwrap().unwrap();
            let conn = store::open(&path, Mode::ReadOnly).unwrap();
            let _ = outbox::open_one_off(&conn).unwrap();
            let mut cursor = 0;
            while let Some(b) = destination.take(&conn, cursor, outbox::BATCH_KEYS).unwrap() {
                destination.send(&uid, &b).await.unwrap();
                cursor = b.last;
            }
            println!(
                "cluster c-{c}: {per} occurrences made and shipped in {:.1}s",
                t.elapsed().as_secs_f64()
            );
        }
    }
    let total = count(&ch, "occurrences").await;
    println!(
        "diag_fleet holds {total} occurrences of {} clusters",
        ch.clusters().await.unwrap().len()
    );
    let text = std::env::var("DIAG_CLICKHOUSE_URL").unwrap();
    let store_url = format!("{}/diag_fleet", text.rsplit_once('/').unwrap().0);
    let mut times = Vec::new();
    let mut lines = 0;
    for r in 0..runs {
        let c = r % clusters;
        let argv = [
            "kubectl-diag",
            "timeline",
            "pod/app-7",
            "-n",
            "team-7",
            "--store",
            &store_url,
            "--cluster",
            &format!("c-{c}"),
            "--until",
            "2026-11-20T00:00:00Z",
        ];
        let cli = kubectl_diag::cli::Cli::try_parse_args_from(argv).unwrap();
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let t = Instant::now();
        let code =
            tokio::task::block_in_place(|| kubectl_diag::run(cli, &mut out, &mut err)).unwrap();
        times.push(t.elapsed().as_millis() as u64);
        assert_eq!(code, 0, "{}", String::from_utf8_lossy(&err));
        lines = out.iter().filter(|&&b| b == b'\n').count();
    }
    times.sort_unstable();
    println!(
        "timeline --store over {runs} runs ({lines} lines each): p50 {} ms, p90 {} ms, max {} ms",
        percentile(&times, 0.5),
        percentile(&times, 0.9),
        percentile(&times, 1.0)
    );
}

/// `compare`: the timeline of each object through the old and the new pull.
fn compare(args: &[String]) {
    let at = args.iter().position(|a| a == "compare").unwrap();
    let rest = &args[at + 1..];
    let value = |name: &str| {
        rest.iter()
            .position(|a| a == name)
            .and_then(|i| rest.get(i + 1))
            .cloned()
    };
    let database = value("--database").expect("compare --database DB");
    let cluster = value("--cluster");
    let until = value("--until").unwrap_or_else(|| "2026-11-20T00:00:00Z".into());
    let text = std::env::var("DIAG_CLICKHOUSE_URL").unwrap();
    let store_url = format!("{}/{database}", text.rsplit_once('/').unwrap().0);
    let objects: Vec<&String> = rest
        .iter()
        .enumerate()
        .filter(|(i, a)| {
            let value_of_flag =
                *i > 0 && matches!(rest[i - 1].as_str(), "--database" | "--cluster" | "--until");
            !a.starts_with("--") && !value_of_flag
        })
        .map(|(_, a)| a)
        .collect();
    let run = |argv: &[String]| {
        let cli = kubectl_diag::cli::Cli::try_parse_args_from(argv).unwrap();
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = match kubectl_diag::run(cli, &mut out, &mut err) {
            Ok(c) => c.to_string(),
            Err(e) => format!("error: {e:#}"),
        };
        (
            code,
            String::from_utf8_lossy(&out).into_owned(),
            String::from_utf8_lossy(&err).into_owned(),
        )
    };
    let mut differ = 0;
    for spec in objects {
        let (object, namespace) = spec.split_once('@').unwrap_or((spec, "default"));
        for output in ["table", "json"] {
            let mut argv: Vec<String> = [
                "kubectl-diag",
                "timeline",
                object,
                "-n",
                namespace,
                "--until",
                &until,
                "-o",
                output,
            ]
            .iter()
            .map(|s| s.to_string())
            .collect();
            if let Some(c) = &cluster {
                argv.extend(["--cluster".to_string(), c.clone()]);
            }
            let mut new_argv = argv.clone();
            new_argv.extend(["--store".to_string(), store_url.clone()]);
            let new = run(&new_argv);
            // The pull before: the whole namespace slice, then the timeline on the file.
            let cli = kubectl_diag::cli::Cli::try_parse_args_from(&argv).unwrap();
            let resolved = cli.resolve().unwrap();
            let kubectl_diag::cli::Invocation::Timeline(t) = &resolved.invocation else {
                unreachable!()
            };
            let slice = kubectl_diag::commands::timeline::store_slice(t);
            let url = ClickHouseUrl::parse(&store_url, None).unwrap();
            let which = kubectl_diag::ship::pull::Which::One(cluster.clone());
            let pulled = kubectl_diag::ship::pull::pull(&url, &which, slice.as_deref()).unwrap();
            let mut old_argv = argv.clone();
            old_argv.extend(["--db".to_string(), pulled.path.display().to_string()]);
            let old = run(&old_argv);
            // NB: the pulled file's path is in a "not in the recording" message.
            let tidy = |s: &str| s.replace(&pulled.path.display().to_string(), "PULLED");
            let (old, new) = (
                (old.0.clone(), tidy(&old.1), tidy(&old.2)),
                (new.0.clone(), tidy(&new.1), tidy(&new.2)),
            );
            let lines = new.1.lines().count();
            if old == new {
                println!("SAME {spec} -o {output}: exit {}, {lines} lines", new.0);
            } else {
                differ += 1;
                println!(
                    "DIFF {spec} -o {output}:\n--- old: exit {}\n{}{}\n--- new: exit {}\n{}{}",
                    old.0, old.1, old.2, new.0, new.1, new.2
                );
            }
        }
    }
    println!("{differ} differ");
}

async fn count(ch: &ClickHouse, table: &str) -> i64 {
    let sql = match table {
        "occurrences" => "SELECT count() FROM occurrences",
        _ => "SELECT count() FROM events",
    };
    ch.select_json(sql, None)
        .await
        .ok()
        .and_then(|t| {
            t.lines()
                .nth(1)
                .and_then(|l| l.trim_matches(['[', ']']).parse().ok())
        })
        .unwrap_or(0)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 1)]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "fleet") {
        return fleet(&args).await;
    }
    if args.iter().any(|a| a == "compare") {
        return tokio::task::block_in_place(|| compare(&args));
    }
    let mode = if args.iter().any(|a| a == "live") {
        "live"
    } else {
        "catch-up"
    };
    let url = url(&format!("diag_bench_{}", std::process::id()));
    let ch = ClickHouse::new(&url);
    ch.create_schema(None, None).await.unwrap();
    // `live --to otlp+http://…`: the same run shipping to an OpenTelemetry Collector
    // (scripts/otelcol up); the lag is then read from the rows it confirmed.
    let to = args
        .iter()
        .position(|a| a == "--to")
        .and_then(|i| args.get(i + 1))
        .cloned();
    let otlp = to.is_some();
    let destination = Arc::new(match &to {
        Some(t) => Destination::parse(t, None, &[]).unwrap(),
        None => Destination::ClickHouse(ClickHouse::new(&url)),
    });
    let shown = destination.shown();
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let path = dir.path().join("ship.db");
    let rec = store::Recording::open(&path, Mode::Write).unwrap();
    let cluster = rec
        .register_cluster("bench-cluster", "bench", "", 0)
        .unwrap();
    let start = rec.start_session(cluster, "bench", "watch", 0).unwrap();

    if mode == "catch-up" {
        let n = flag(&args, "--occurrences", 1_000_000);
        let (tx, thread, _) = support::spawn_writer(rec, &path, cluster, start.id);
        let t = Instant::now();
        for i in 0..n {
            tx.send(msg(i)).await.unwrap();
        }
        drop(tx);
        thread.join().unwrap().unwrap();
        println!(
            "made a recording of {n} occurrences in {:.1}s",
            t.elapsed().as_secs_f64()
        );
        let conn = store::open(&path, Mode::Write).unwrap();
        let t = Instant::now();
        let (reg, _) = outbox::register(&conn, std::slice::from_ref(&shown), 0).unwrap();
        let newest = outbox::newest(&conn).unwrap();
        println!(
            "destination added: {newest} outbox keys in {:.1}s",
            t.elapsed().as_secs_f64()
        );
        outbox::prepare(&conn).unwrap();
        let (mut cursor, mut rows) = (reg[0].cursor, 0u64);
        let (mut reading, mut sending) = (Duration::ZERO, Duration::ZERO);
        let (cpu0, begin) = (cpu_seconds(), Instant::now());
        loop {
            let t = Instant::now();
            let Some(batch) = destination.take(&conn, cursor, outbox::BATCH_KEYS).unwrap() else {
                break;
            };
            reading += t.elapsed();
            let t = Instant::now();
            destination.send("bench", &batch).await.unwrap();
            sending += t.elapsed();
            outbox::confirm(&conn, reg[0].id, batch.last, batch.rows() as u64, 0).unwrap();
            rows += batch.rows() as u64;
            cursor = batch.last;
        }
        let secs = begin.elapsed().as_secs_f64();
        let in_ch = count(&ch, "occurrences").await;
        println!(
            "shipped {rows} rows ({in_ch} occurrences in ClickHouse) in {secs:.1}s = {:.0} rows/s; reading the outbox {:.1}s, sending {:.1}s; shipper CPU {:.1}s; RSS peak {:.0} MiB",
            rows as f64 / secs,
            reading.as_secs_f64(),
            sending.as_secs_f64(),
            cpu_seconds() - cpu0,
            memory_mib("self", "VmHWM:")
        );
        return;
    }

    let rate = flag(&args, "--rate", 1_000);
    let seconds = flag(&args, "--seconds", 30);
    let commit_every = Duration::from_millis(flag(&args, "--commit-every-ms", 5_000));
    let ship = !args.iter().any(|a| a == "--no-ship");
    let registered = if ship {
        Some(
            outbox::register(rec.connection(), std::slice::from_ref(&shown), 0)
                .unwrap()
                .0
                .remove(0),
        )
    } else {
        None
    };
    let (tx, thread, stats) =
        support::spawn_writer_every(rec, &path, cluster, start.id, commit_every);
    stats
        .ship
        .destinations
        .store(u64::from(ship), Ordering::Relaxed);
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let shipper = registered.clone().map(|r| {
        let shipper = kubectl_diag::record::shipping::Shipper {
            destination: destination.clone(),
            registered: r,
            path: path.clone(),
            tag: "bench".into(),
            stats: stats.clone(),
        };
        let tx = tx.clone();
        tokio::spawn(async move { shipper.run(tx, stop_rx).await })
    });
    // NB: the feeder (the stand-in for the watches) and the sampler run on a thread and a
    // runtime of their own, so that their 1 ms ticks and ClickHouse counts are not charged
    // to the recorder: the recorder's CPU is the process's less that thread's.
    let cpu0 = cpu_seconds();
    let begin = Instant::now();
    let feeder = {
        let (tx, stats, url) = (tx.clone(), stats.clone(), url.clone());
        std::thread::Builder::new()
            .name("bench-feeder".into())
            .spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .unwrap();
                let ch = ClickHouse::new(&url);
                let fed = rt.block_on(feed(&tx, &stats, &ch, rate, seconds, ship, otlp, begin));
                (fed, thread_cpu_seconds())
            })
            .unwrap()
    };
    let (fed, feeder_cpu) = tokio::task::spawn_blocking(move || feeder.join().unwrap())
        .await
        .unwrap();
    let Fed {
        sent_at,
        samples,
        sent,
    } = fed;
    let fed_for = begin.elapsed().as_secs_f64();
    let writer_cpu = threads_cpu_seconds("diag-writer");
    let cpu = cpu_seconds() - cpu0;
    let _ = stop_tx.send(true);
    if let Some(s) = shipper {
        s.await.unwrap();
    }
    drop(tx);
    thread.join().unwrap().unwrap();
    println!(
        "fed {sent} occurrences at {rate}/s for {seconds}s, commit every {} ms, shipping {}",
        commit_every.as_millis(),
        if ship { "on" } else { "off" }
    );
    if ship {
        let mut lags: Vec<u64> = samples
            .iter()
            .filter(|(_, c)| *c > 0)
            .map(|&(t, c)| {
                let i = sent_at.partition_point(|&(_, s)| (s as i64) < c);
                t.saturating_sub(sent_at.get(i).map_or(t, |p| p.0))
            })
            .collect();
        lags.sort_unstable();
        let p = |q: f64| percentile(&lags, q);
        println!(
            "lag to ClickHouse over {} samples: p50 {} ms, p99 {} ms, max {} ms; {} occurrences there at the end",
            lags.len(),
            p(0.5),
            p(0.99),
            p(1.0),
            samples.last().map_or(0, |s| s.1)
        );
    }
    let recorder = cpu - feeder_cpu;
    println!(
        "process CPU {cpu:.2}s over {fed_for:.1}s ({:.1}% of a core); RSS peak {:.0} MiB",
        cpu / fed_for * 100.0,
        memory_mib("self", "VmHWM:")
    );
    println!(
        "  recorder {recorder:.2}s ({:.1}% of a core): writer thread {writer_cpu:.2}s, shipper and runtime {:.2}s; the bench's feeder and sampler {feeder_cpu:.2}s",
        recorder / fed_for * 100.0,
        recorder - writer_cpu
    );
}

/// What the feeder saw: (ms since begin, occurrences sent by then), the
/// destination's samples (ms, rows there), and how many it sent.
struct Fed {
    sent_at: Vec<(u64, u64)>,
    samples: Vec<(u64, i64)>,
    sent: u64,
}

/// Feeds the writer `rate` occurrences a second for `seconds`, then waits until the
/// last of them is in: committed (`ship` false) or confirmed by the destination.
#[allow(clippy::too_many_arguments)]
async fn feed(
    tx: &tokio::sync::mpsc::Sender<Msg>,
    stats: &kubectl_diag::record::sink::Stats,
    ch: &ClickHouse,
    rate: u64,
    seconds: u64,
    ship: bool,
    otlp: bool,
    begin: Instant,
) -> Fed {
    let total = rate * seconds;
    let mut sent_at: Vec<(u64, u64)> = Vec::new();
    let mut samples: Vec<(u64, i64)> = Vec::new();
    let mut sent = 0u64;
    let mut tick = tokio::time::interval(Duration::from_millis(1));
    let mut next_sample = Duration::from_millis(200);
    let deadline = Duration::from_secs(seconds + 30);
    // The writer's commits when the last occurrence was fed: the next one holds it.
    let mut fed_by: Option<u64> = None;
    loop {
        tick.tick().await;
        let now = begin.elapsed();
        let due = ((now.as_secs_f64() * rate as f64) as u64).min(total);
        while sent < due {
            tx.send(msg(sent)).await.unwrap();
            sent += 1;
        }
        sent_at.push((now.as_millis() as u64, sent));
        if sent >= total && fed_by.is_none() {
            fed_by = Some(stats.commits.load(Ordering::Relaxed));
            // NB: idle from here on: no 1 ms ticks to charge to anyone.
            tick = tokio::time::interval(Duration::from_millis(50));
        }
        if ship && now >= next_sample {
            next_sample = now + Duration::from_millis(200);
            let c = if otlp {
                stats.ship.rows.load(Ordering::Relaxed) as i64
            } else {
                count(ch, "occurrences").await
            };
            samples.push((begin.elapsed().as_millis() as u64, c));
            if sent >= total && c >= total as i64 {
                break;
            }
        }
        if !ship && fed_by.is_some_and(|c| stats.commits.load(Ordering::Relaxed) > c) {
            break;
        }
        if now > deadline {
            break;
        }
    }
    Fed {
        sent_at,
        samples,
        sent,
    }
}

/// user + system CPU seconds of the calling thread.
fn thread_cpu_seconds() -> f64 {
    stat_cpu(&std::fs::read_to_string("/proc/thread-self/stat").unwrap_or_default())
}

/// user + system CPU seconds of this process's live threads named `name`.
fn threads_cpu_seconds(name: &str) -> f64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0.0;
    };
    tasks
        .flatten()
        .filter(|t| std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.trim() == name))
        .map(|t| stat_cpu(&std::fs::read_to_string(t.path().join("stat")).unwrap_or_default()))
        .sum()
}
