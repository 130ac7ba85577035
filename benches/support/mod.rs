//! Helpers shared by the benchmarks: flags, memory readings, percentiles.

#![allow(dead_code)]

/// `--name N` from the command line, else `default`.
pub fn flag(args: &[String], name: &str, default: u64) -> u64 {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A memory field (`VmRSS:`, `VmHWM:`) of `/proc/<pid>/status` in MiB; `pid` "self" for this process.
pub fn memory_mib(pid: &str, field: &str) -> f64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

/// CPU time (user and system) process `pid` ("self" for this one) has used, in seconds.
pub fn cpu_seconds(pid: &str) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // NB: the command name may hold spaces: fields are counted after its ')'.
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let ticks: Vec<f64> = after
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|v| v.parse().ok())
        .collect();
    // NB: USER_HZ is 100 on Linux whatever the kernel's HZ.
    ticks.iter().sum::<f64>() / 100.0
}

/// Bytes process `pid` ("self" for this one) wrote to storage so far:
/// `write_bytes` less `cancelled_write_bytes` of `/proc/<pid>/io`.
pub fn bytes_written(pid: &str) -> u64 {
    let io = std::fs::read_to_string(format!("/proc/{pid}/io")).unwrap_or_default();
    let field = |name: &str| -> u64 {
        io.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0)
    };
    field("write_bytes:").saturating_sub(field("cancelled_write_bytes:"))
}

/// Waits (at most `limit`) until the process `pid`, already told to stop,
/// has exited but is not yet reaped, and returns what it wrote in all and its
/// CPU seconds: a zombie keeps its `/proc/PID/io`, so what it wrote while
/// stopping (a last commit, the WAL's checkpoint) is counted too.
pub fn at_exit(pid: &str, limit: std::time::Duration) -> Option<(u64, f64)> {
    let start = std::time::Instant::now();
    while start.elapsed() < limit {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // NB: the state follows the command's closing parenthesis.
        let state = stat.rsplit_once(") ").map(|(_, r)| r.chars().next());
        if state == Some(Some('Z')) {
            return Some((bytes_written(pid), cpu_seconds(pid)));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    None
}

/// The recording's size on disk: the file and its WAL.
pub fn disk_bytes(db: &std::path::Path) -> u64 {
    kubectl_diag::record::retention::db_bytes(db)
}

/// The `q` quantile (0.0–1.0) of already sorted values.
pub fn percentile<T: Copy + Default>(sorted: &[T], q: f64) -> T {
    sorted
        .get(((sorted.len().max(1) - 1) as f64 * q).round() as usize)
        .copied()
        .unwrap_or_default()
}

/// One value of the recorder's Prometheus `/metrics` on `addr`.
pub fn metric(addr: &str, name: &str) -> Option<u64> {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).ok()?;
    write!(s, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n").ok()?;
    let mut body = String::new();
    s.read_to_string(&mut body).ok()?;
    body.lines()
        .find(|l| l.starts_with(name) && !l.starts_with('#'))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
}

/// Creates the namespace `name` on the cluster the benchmark measures.
pub async fn create_namespace(client: &kube::Client, name: &str) {
    use k8s_openapi::api::core::v1::Namespace;
    let namespaces: kube::Api<Namespace> = kube::Api::all(client.clone());
    namespaces
        .create(
            &kube::api::PostParams::default(),
            &serde_json::from_value(serde_json::json!({"metadata": {"name": name}})).unwrap(),
        )
        .await
        .unwrap();
}

/// An address on localhost that nothing listens on, for the recorder's `--listen`.
pub fn free_local_addr() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().to_string()
}

/// The recorder's writer thread (`record::sink`) on `conn`, fed through a
/// channel of the recorder's own capacity: the sender, the thread, and the
/// counters it keeps.
pub fn spawn_writer(
    conn: kubectl_diag::store::Recording,
    path: &std::path::Path,
    cluster: i64,
    session_id: i64,
) -> (
    tokio::sync::mpsc::Sender<kubectl_diag::record::sink::Msg>,
    std::thread::JoinHandle<Result<(), kubectl_diag::store::StoreError>>,
    std::sync::Arc<kubectl_diag::record::sink::Stats>,
) {
    spawn_writer_every(
        conn,
        path,
        cluster,
        session_id,
        kubectl_diag::record::flush::DEFAULT_COMMIT_EVERY,
    )
}

/// [`spawn_writer`] with another `--commit-every`.
pub fn spawn_writer_every(
    conn: kubectl_diag::store::Recording,
    path: &std::path::Path,
    cluster: i64,
    session_id: i64,
    commit_every: std::time::Duration,
) -> (
    tokio::sync::mpsc::Sender<kubectl_diag::record::sink::Msg>,
    std::thread::JoinHandle<Result<(), kubectl_diag::store::StoreError>>,
    std::sync::Arc<kubectl_diag::record::sink::Stats>,
) {
    use kubectl_diag::record::retention::Retention;
    use kubectl_diag::record::sink::{self, Stats};
    use kubectl_diag::store::writer::Writer;

    let stats = std::sync::Arc::new(Stats::default());
    let (tx, rx) = tokio::sync::mpsc::channel(kubectl_diag::record::CHANNEL_CAPACITY);
    let thread = {
        let (path, stats) = (path.to_path_buf(), stats.clone());
        // NB: named as `record` names it, so benches can read its CPU apart.
        std::thread::Builder::new()
            .name("diag-writer".into())
            .spawn(move || {
                let writer = Writer::new(conn, cluster);
                sink::run(
                    writer,
                    path,
                    session_id,
                    rx,
                    stats,
                    Retention::default(),
                    commit_every,
                )
            })
            .expect("spawning the writer thread")
    };
    (tx, thread, stats)
}

/// The i-th Event of a steady stream: 5,000 Pods in 40 namespaces, a third of them Warnings
/// (record_sink and ship_clickhouse feed the writer with these).
pub fn event_change(i: u64) -> kubectl_diag::model::EventChange {
    use kubectl_diag::model::{EventChange, EventObservation, ObjectRef};
    let pod = i % 5_000;
    EventChange::Upsert(Box::new(EventObservation {
        uid: format!("{:08x}-0000-4000-8000-{:012x}", i >> 20, i),
        namespace: format!("team-{}", pod % 40),
        name: format!("app-{pod}.{:x}", 0x187c_0000_0000_0000_u64 + i),
        involved: ObjectRef {
            api_version: "v1".into(),
            kind: "Pod".into(),
            namespace: format!("team-{}", pod % 40),
            name: format!("app-{pod}"),
            uid: format!("00000000-0000-4000-8000-{pod:012x}"),
            field_path: String::new(),
        },
        reason: if i.is_multiple_of(3) {
            "BackOff"
        } else {
            "Pulled"
        }
        .into(),
        type_: if i.is_multiple_of(3) {
            "Warning"
        } else {
            "Normal"
        }
        .into(),
        message: format!("Back-off restarting failed container app in pod app-{pod}"),
        reporting_controller: "kubelet".into(),
        first: 1_795_000_000_000 + i as i64,
        last: 1_795_000_000_000 + i as i64,
        count: 1,
        ..Default::default()
    }))
}
