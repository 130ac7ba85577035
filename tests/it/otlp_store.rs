//! The OTLP logs destination against a real OpenTelemetry Collector (built by
//! scripts/otelcol from tests/otelcol/: otlpreceiver in, fileexporter out as
//! JSON lines; docs/testing.md) and the real control plane: `record --ship
//! otlp+http://…` and `ship --to otlp+http://…`. Each test runs collectors of
//! its own (own state folder, own port); what they wrote is read from their files.

use crate::support;

use std::collections::{HashMap, HashSet};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::time::Duration;

use k8s_openapi::api::core::v1::Event;
use kube::api::{Patch, PatchParams, PostParams};
use serde_json::{Value, json};
use support::{Background, TestNamespace, diag, run_ok, wait_until};

fn free_port() -> u16 {
    support::free_local_addr()
        .rsplit_once(':')
        .unwrap()
        .1
        .parse()
        .unwrap()
}

/// A collector of this test's own on one port. Each start gets a new state
/// folder (`up` wipes its folder's files), so what every run wrote is kept.
struct Collector {
    port: u16,
    runs: Vec<tempfile::TempDir>,
    running: bool,
}

impl Collector {
    fn start() -> Collector {
        let mut c = Collector {
            port: free_port(),
            runs: Vec::new(),
            running: false,
        };
        c.up();
        c
    }

    fn script(dir: &Path, port: u16, verb: &str) -> Output {
        let out = Command::new(support::repo_root().join("scripts/otelcol"))
            .arg(verb)
            .env("DIAG_OTELCOL_DIR", dir)
            .env("DIAG_OTELCOL_PORT", port.to_string())
            .output()
            .expect("running scripts/otelcol");
        assert!(
            out.status.success(),
            "scripts/otelcol {verb} failed (the collector is built by scripts/test and .ci/run; \
             tests never skip themselves):\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    fn up(&mut self) {
        let dir = tempfile::tempdir().unwrap();
        Collector::script(dir.path(), self.port, "up");
        self.runs.push(dir);
        self.running = true;
    }

    fn down(&mut self) {
        if let Some(dir) = self.runs.last() {
            Collector::script(dir.path(), self.port, "down");
        }
        self.running = false;
    }

    fn url(&self) -> String {
        format!("otlp+http://127.0.0.1:{}", self.port)
    }

    /// Every log record every run wrote, with its resource's attributes.
    fn records(&self) -> Vec<Rec> {
        let mut out = Vec::new();
        for dir in &self.runs {
            let Ok(text) = std::fs::read_to_string(dir.path().join("logs.jsonl")) else {
                continue;
            };
            for line in text.lines().filter(|l| l.starts_with('{')) {
                // NB: a line being written may be cut; the next read has it whole.
                let Ok(req) = serde_json::from_str::<Value>(line) else {
                    continue;
                };
                for rl in req["resourceLogs"].as_array().into_iter().flatten() {
                    let resource = attrs(&rl["resource"]["attributes"]);
                    for sl in rl["scopeLogs"].as_array().into_iter().flatten() {
                        for lr in sl["logRecords"].as_array().into_iter().flatten() {
                            out.push(Rec {
                                resource: resource.clone(),
                                attrs: attrs(&lr["attributes"]),
                                body: lr["body"]["stringValue"].as_str().unwrap_or("").into(),
                                severity: lr["severityNumber"].as_i64().unwrap_or(0),
                                severity_text: lr["severityText"].as_str().unwrap_or("").into(),
                                time: lr["timeUnixNano"]
                                    .as_str()
                                    .and_then(|t| t.parse().ok())
                                    .unwrap_or(0),
                            });
                        }
                    }
                }
            }
        }
        out
    }

    /// The records of one kind (kubectl_diag.kind), by log.record.uid: how many times each came.
    fn uids(&self, kind: &str) -> HashMap<String, usize> {
        let mut m = HashMap::new();
        for r in self.records() {
            if r.attr("kubectl_diag.kind") == kind {
                *m.entry(r.attr("log.record.uid")).or_default() += 1;
            }
        }
        m
    }
}

impl Drop for Collector {
    fn drop(&mut self) {
        if self.running
            && let Some(dir) = self.runs.last()
        {
            let _ = Command::new(support::repo_root().join("scripts/otelcol"))
                .arg("down")
                .env("DIAG_OTELCOL_DIR", dir.path())
                .env("DIAG_OTELCOL_PORT", self.port.to_string())
                .output();
        }
    }
}

/// One log record as the collector wrote it.
#[derive(Debug, Clone)]
struct Rec {
    resource: HashMap<String, Value>,
    attrs: HashMap<String, Value>,
    body: String,
    severity: i64,
    severity_text: String,
    time: u64,
}

impl Rec {
    /// A record or resource attribute as text ("" when absent).
    fn attr(&self, key: &str) -> String {
        match self.attrs.get(key).or_else(|| self.resource.get(key)) {
            Some(Value::String(s)) => s.clone(),
            Some(v) => v.to_string(),
            None => String::new(),
        }
    }
}

/// OTLP/JSON attributes as a map: strings as strings, ints (JSON strings there) as numbers.
fn attrs(list: &Value) -> HashMap<String, Value> {
    let mut m = HashMap::new();
    for kv in list.as_array().into_iter().flatten() {
        let key = kv["key"].as_str().unwrap_or_default().to_string();
        let v = &kv["value"];
        let value = if let Some(s) = v.get("stringValue") {
            s.clone()
        } else if let Some(i) = v.get("intValue") {
            json!(
                i.as_str()
                    .and_then(|s| s.parse::<i64>().ok())
                    .or(i.as_i64())
            )
        } else {
            v.clone()
        };
        m.insert(key, value);
    }
    m
}

/// The documented log.record.uid formulas (docs/schema.md), computed apart from
/// kubectl-diag: Python's uuid.uuid5 in the URL namespace of each name.
fn uuid5_all(names: &[String]) -> Vec<String> {
    let mut child = Command::new("python3")
        .args([
            "-c",
            "import sys, uuid\nfor l in sys.stdin.read().splitlines(): print(uuid.uuid5(uuid.NAMESPACE_URL, l))",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 (a test prerequisite)");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(names.join("\n").as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

/// What the recording holds, as the uids its records must carry.
struct Expected {
    occurrences: HashSet<String>,
    versions: HashSet<String>,
    gaps: HashSet<String>,
}

fn expected(db: &Path) -> Expected {
    let conn = support::open_fresh(db).unwrap();
    let names = |sql: &str| -> Vec<String> {
        let mut st = conn.prepare(sql).unwrap();
        st.query_map([], |r| r.get::<_, String>(0))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    let uid_text = "CASE WHEN typeof(e.uid) = 'blob' THEN lower(substr(hex(e.uid), 1, 8) || '-' || substr(hex(e.uid), 9, 4) \
        || '-' || substr(hex(e.uid), 13, 4) || '-' || substr(hex(e.uid), 17, 4) || '-' || substr(hex(e.uid), 21)) ELSE e.uid END";
    let occ = names(&format!(
        "SELECT 'kubectl-diag:occurrence/' || c.uid || '/' || {uid_text} || '/' || o.count
         FROM occurrences o JOIN events e ON e.id = o.event_id JOIN clusters c ON c.id = e.cluster_id"
    ));
    let ver = names(
        "SELECT 'kubectl-diag:version/' || c.uid || '/' ||
                CASE WHEN o.uid = '' THEN ki.s || '/' || ns.s || '/' || nm.s ELSE o.uid END || '/' ||
                CASE WHEN coalesce(v.resource_version, '') = '' THEN 'at:' || v.at || ':' || v.id ELSE v.resource_version END
         FROM versions v JOIN objects o ON o.id = v.object_id JOIN clusters c ON c.id = o.cluster_id
         JOIN strings ki ON ki.id = o.kind JOIN strings ns ON ns.id = o.namespace JOIN strings nm ON nm.id = o.name",
    );
    let gaps = names(
        "SELECT 'kubectl-diag:gap/' || c.uid || '/' || g.resource || '/' || g.start || '/' || g.reason
         FROM gaps g JOIN clusters c ON c.id = g.cluster_id",
    );
    let set = |n: Vec<String>| -> HashSet<String> {
        if n.is_empty() {
            HashSet::new()
        } else {
            uuid5_all(&n).into_iter().collect()
        }
    };
    let e = Expected {
        occurrences: set(occ.clone()),
        versions: set(ver.clone()),
        gaps: set(gaps.clone()),
    };
    // NB: distinct rows give distinct uids (else "exactly once" would hide a loss).
    assert_eq!(e.occurrences.len(), occ.len());
    assert_eq!(e.versions.len(), ver.len());
    assert_eq!(e.gaps.len(), gaps.len());
    e
}

/// Every row of the recording is in the collector's files, and nothing else of this recording.
fn assert_all_arrived(db: &Path, collector: &Collector, cluster: &str) -> Expected {
    let want = expected(db);
    for (kind, want) in [
        ("occurrence", &want.occurrences),
        ("version", &want.versions),
        ("gap", &want.gaps),
    ] {
        let got: HashMap<String, usize> = collector
            .records()
            .into_iter()
            .filter(|r| r.attr("kubectl_diag.kind") == kind && r.attr("k8s.cluster.uid") == cluster)
            .fold(HashMap::new(), |mut m, r| {
                *m.entry(r.attr("log.record.uid")).or_default() += 1;
                m
            });
        let missing: Vec<_> = want.iter().filter(|u| !got.contains_key(*u)).collect();
        assert!(
            missing.is_empty(),
            "{kind}: {} of {} not in the collector's files: {missing:?}",
            missing.len(),
            want.len()
        );
        let extra: Vec<_> = got.keys().filter(|u| !want.contains(*u)).collect();
        assert!(
            extra.is_empty(),
            "{kind}: uids the recording has no row for: {extra:?}"
        );
        assert_eq!(
            got.len(),
            want.len(),
            "{kind}: one uid per row after dedupe"
        );
    }
    want
}

fn sqlite_count(db: &Path, sql: &str) -> i64 {
    support::open_fresh(db)
        .unwrap()
        .query_row(sql, [], |r| r.get(0))
        .unwrap()
}

fn cluster_uid(db: &Path) -> String {
    support::open_fresh(db)
        .unwrap()
        .query_row("SELECT uid FROM clusters", [], |r| r.get(0))
        .unwrap()
}

fn recorder(db: &Path, ns: &str, extra: &[&str]) -> Background {
    Background::new(
        diag(db)
            .args(["record", "--quiet", "-n", ns, "--commit-every", "1s"])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    )
}

async fn wait_recording(db: &Path) {
    wait_until(
        Duration::from_secs(30),
        "the recorder's first lists",
        || {
            let db = db.to_path_buf();
            async move {
                db.exists()
                    && support::open_fresh(&db)
                        .and_then(|c| {
                            c.query_row("SELECT count(*) FROM watch_positions", [], |r| {
                                r.get::<_, i64>(0)
                            })
                        })
                        .is_ok_and(|n| n > 0)
            }
        },
    )
    .await;
}

async fn warning(api: &kube::Api<Event>, ns: &str, name: &str, i: usize) {
    let ev: Event = serde_json::from_value(json!({
        "metadata": {"name": format!("{name}.{i:x}")},
        "involvedObject": {"kind": "Pod", "name": name, "namespace": ns, "apiVersion": "v1",
                           "uid": "11111111-2222-3333-4444-555555555555"},
        "reason": "BackOff", "type": "Warning",
        "message": format!("Back-off restarting failed container web ({i})"),
        "count": 1, "firstTimestamp": "2026-11-29T03:00:00Z", "lastTimestamp": "2026-11-29T03:00:00Z",
        "source": {"component": "kubelet", "host": "kwok-small"}
    }))
    .unwrap();
    api.create(&PostParams::default(), &ev).await.unwrap();
}

/// Warnings and a Deployment recorded with `--ship otlp+http://…`: every
/// occurrence, version and gap of the file in the collector's file exactly once
/// by log.record.uid, in the collector's vocabulary; `ship --to` sends a file
/// to another collector the same.
#[tokio::test]
async fn a_recording_arrives_in_the_collector_once_per_row_in_its_vocabulary() {
    let collector = Collector::start();
    let ns = TestNamespace::new("otlp-once").await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    let log = dir.path().join("record.log");
    let rec = Background::new(
        diag(&db)
            .args([
                "record",
                "-n",
                &ns.name,
                "--commit-every",
                "1s",
                "--ship",
                &collector.url(),
            ])
            .args(["--ship-header", "X-Diag-Test: s3cret-value"])
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap(),
    );
    wait_recording(&db).await;
    support::apply(
        &ns.name,
        r#"apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      nodeSelector: {type: kwok}
      tolerations: [{key: kwok.x-k8s.io/node, operator: Exists, effect: NoSchedule}]
      containers: [{name: web, image: "nginx:1.25"}]
"#,
    );
    let events: kube::Api<Event> = ns.api();
    for i in 0..5 {
        warning(&events, &ns.name, "web-1", i).await;
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    // The first Warning happens 4 more times, seen at once: one row "4 more between".
    events
        .patch(
            "web-1.0",
            &PatchParams::default(),
            &Patch::Merge(json!({"count": 5, "lastTimestamp": "2026-11-29T03:10:00Z"})),
        )
        .await
        .unwrap();
    let deployments: kube::Api<k8s_openapi::api::apps::v1::Deployment> = ns.api();
    support::wait_available(&deployments, "web", 1).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(rec.terminate().success());
    let stderr = std::fs::read_to_string(&log).unwrap();
    assert!(
        !stderr.contains("s3cret"),
        "a header value was printed: {stderr}"
    );
    tokio::time::sleep(Duration::from_millis(500)).await;

    let cluster = cluster_uid(&db);
    let want = assert_all_arrived(&db, &collector, &cluster);
    assert!(want.occurrences.len() >= 6, "{}", want.occurrences.len());
    eprintln!(
        "{} occurrence, {} version and {} gap rows, each once in {} records",
        want.occurrences.len(),
        want.versions.len(),
        want.gaps.len(),
        collector.records().len()
    );
    assert!(!want.versions.is_empty());
    assert_eq!(
        collector
            .uids("occurrence")
            .values()
            .filter(|n| **n > 1)
            .count(),
        0,
        "a clean recording sends each occurrence once"
    );

    // The vocabulary, on the records of this namespace's Warnings.
    let records = collector.records();
    let warnings: Vec<&Rec> = records
        .iter()
        .filter(|r| {
            r.attr("k8s.namespace.name") == ns.name && r.attr("k8s.event.reason") == "BackOff"
        })
        .collect();
    assert_eq!(warnings.len(), 6, "{warnings:#?}");
    for r in &warnings {
        assert_eq!(r.severity, 13, "{r:?}");
        assert_eq!(r.severity_text, "Warning");
        assert!(
            r.body
                .starts_with("Back-off restarting failed container web ("),
            "{r:?}"
        );
        assert_eq!(r.resource["k8s.cluster.uid"], json!(cluster));
        assert_eq!(r.resource["service.name"], json!("kubectl-diag"));
        assert!(r.resource.contains_key("k8s.cluster.name"));
        assert_eq!(r.resource["k8s.object.kind"], json!("Pod"));
        assert_eq!(r.resource["k8s.object.name"], json!("web-1"));
        assert_eq!(
            r.resource["k8s.object.uid"],
            json!("11111111-2222-3333-4444-555555555555")
        );
        assert_eq!(r.resource["k8s.object.api_version"], json!("v1"));
        assert_eq!(r.resource["k8s.node.name"], json!("kwok-small"));
        assert!(r.attr("k8s.event.name").starts_with("web-1."), "{r:?}");
        assert_eq!(r.attr("k8s.event.uid").len(), 36, "{r:?}");
        assert!(r.attrs.contains_key("k8s.event.start_time"));
        assert!(r.attrs.contains_key("k8s.event.action"));
    }
    let repeated: Vec<&&Rec> = warnings
        .iter()
        .filter(|r| r.attrs["k8s.event.count"] == json!(5))
        .collect();
    assert_eq!(repeated.len(), 1, "{warnings:#?}");
    let r = repeated[0];
    assert_eq!(r.attrs["kubectl_diag.occurrences"], json!(4), "{r:?}");
    assert!(
        r.attrs.contains_key("kubectl_diag.first") && r.attrs.contains_key("kubectl_diag.last")
    );
    assert_eq!(
        r.time, 1_795_921_800_000_000_000,
        "timeUnixNano is the row's last (03:10:00Z)"
    );
    // The Deployment's versions: the object as the resource, ours as attributes.
    let web: Vec<&Rec> = records
        .iter()
        .filter(|r| {
            r.attr("kubectl_diag.kind") == "version"
                && r.attr("k8s.object.kind") == "Deployment"
                && r.attr("k8s.object.name") == "web"
                && r.attr("k8s.namespace.name") == ns.name
        })
        .collect();
    assert!(!web.is_empty());
    for r in &web {
        assert_eq!(r.resource["k8s.object.api_version"], json!("apps/v1"));
        assert!(r.attrs.contains_key("kubectl_diag.writers"), "{r:?}");
        assert!(r.attrs.contains_key("kubectl_diag.generation"), "{r:?}");
        assert!(
            r.resource.contains_key("k8s.object.resource_version"),
            "{r:?}"
        );
    }

    // `ship --db FILE --to`: the same rows to a collector of its own; again changes no uid.
    let other = Collector::start();
    let shipped = run_ok(diag(&db).args([
        "ship",
        "--to",
        &other.url(),
        "--header",
        "X-Diag-Test: s3cret-value",
    ]));
    let text = String::from_utf8_lossy(&shipped.stdout);
    assert!(text.contains("shipped"), "{text}");
    assert!(
        !text.contains("s3cret") && !String::from_utf8_lossy(&shipped.stderr).contains("s3cret")
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_all_arrived(&db, &other, &cluster);
    run_ok(diag(&db).args(["ship", "--to", &other.url()]));
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_all_arrived(&db, &other, &cluster);
    assert!(other.uids("occurrence").values().all(|n| *n == 2));
}

/// What the gate in front of the collector does with a request.
const FORWARD: u8 = 0;
/// Answers 503 with Retry-After: 2.
const REFUSE: u8 = 1;
/// Forwards it (the collector writes it), then never answers.
const HOLD: u8 = 2;

/// A small HTTP/1.1 relay between the recorder and the collector, so a test can
/// make the collector's answers fail the ways a real one does: gone (the
/// collector stopped: connections dropped), 503 with Retry-After, or an answer
/// that never comes for a request the collector took.
struct Gate {
    port: u16,
    mode: Arc<AtomicU8>,
    held: Arc<AtomicBool>,
}

impl Gate {
    fn start(upstream: u16) -> Gate {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let (mode, held) = (
            Arc::new(AtomicU8::new(FORWARD)),
            Arc::new(AtomicBool::new(false)),
        );
        let (m, h) = (mode.clone(), held.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming().flatten() {
                let (m, h) = (m.clone(), h.clone());
                std::thread::spawn(move || relay(conn, upstream, &m, &h));
            }
        });
        Gate { port, mode, held }
    }

    fn url(&self) -> String {
        format!("otlp+http://127.0.0.1:{}", self.port)
    }

    fn set(&self, mode: u8) {
        self.mode.store(mode, Ordering::SeqCst);
    }
}

/// One HTTP message (headers and a Content-Length body) from `s`, or None at its end.
fn read_message(s: &mut TcpStream) -> Option<Vec<u8>> {
    let mut buf = Vec::new();
    let mut byte = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = s.read(&mut byte).ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&byte[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
    let len: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .map(|v| v.trim().parse().unwrap_or(0))
        .unwrap_or(0);
    while buf.len() < head_end + len {
        let n = s.read(&mut byte).ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&byte[..n]);
    }
    Some(buf)
}

fn relay(mut client: TcpStream, upstream: u16, mode: &AtomicU8, held: &AtomicBool) {
    while let Some(request) = read_message(&mut client) {
        match mode.load(Ordering::SeqCst) {
            REFUSE => {
                let _ = client.write_all(
                    b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 2\r\nContent-Length: 0\r\n\r\n",
                );
            }
            m => {
                // NB: the collector stopped: the connection is dropped, as a refused one is.
                let Ok(mut up) = TcpStream::connect(("127.0.0.1", upstream)) else {
                    return;
                };
                if up.write_all(&request).is_err() {
                    return;
                }
                let Some(answer) = read_message(&mut up) else {
                    return;
                };
                if m == HOLD {
                    held.store(true, Ordering::SeqCst);
                    while mode.load(Ordering::SeqCst) == HOLD {
                        std::thread::sleep(Duration::from_millis(50));
                    }
                    return;
                }
                if client.write_all(&answer).is_err() {
                    return;
                }
            }
        }
    }
}

/// The collector stopped for 30 s (then answering 503 with Retry-After for a
/// while) as the recorder ships, then the recorder SIGKILLed after the
/// collector took a batch and before the answer came, and started again:
/// every row at least once in the collector's files, exactly once by uid, and
/// the outbox empty after a clean stop.
#[tokio::test]
async fn the_collector_down_for_30s_and_the_recorder_killed_mid_batch_lose_nothing() {
    let mut collector = Collector::start();
    let gate = Gate::start(collector.port);
    let ns = TestNamespace::new("otlp-fault").await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    let listen = support::free_local_addr();
    let rec = recorder(&db, &ns.name, &["--ship", &gate.url(), "--listen", &listen]);
    wait_recording(&db).await;
    let events: kube::Api<Event> = ns.api();
    wait_until(
        Duration::from_secs(30),
        "the first records in the collector",
        || async { !collector.records().is_empty() },
    )
    .await;
    for i in 0..20 {
        warning(&events, &ns.name, "before", i).await;
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    collector.down();
    for i in 0..20 {
        warning(&events, &ns.name, "during", i).await;
        tokio::time::sleep(Duration::from_millis(750)).await;
    }
    gate.set(REFUSE);
    for i in 0..20 {
        warning(&events, &ns.name, "refused", i).await;
        tokio::time::sleep(Duration::from_millis(750)).await;
    }
    let metrics = Command::new("curl")
        .args(["-s", &format!("http://{listen}/metrics")])
        .output()
        .unwrap();
    let metrics = String::from_utf8_lossy(&metrics.stdout);
    let value = |name: &str| -> i64 {
        metrics
            .lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{name} not in /metrics:\n{metrics}"))
    };
    assert!(value("kubectl_diag_ship_errors_total") > 0, "{metrics}");
    assert!(value("kubectl_diag_ship_backlog") > 0, "{metrics}");
    assert!(value("kubectl_diag_ship_behind_seconds") >= 20, "{metrics}");
    // Back, but the answer to the next request never comes: the recorder is
    // killed while the collector already wrote that batch.
    collector.up();
    gate.set(HOLD);
    wait_until(
        Duration::from_secs(60),
        "a request taken by the collector and not answered",
        || async { gate.held.load(Ordering::SeqCst) },
    )
    .await;
    rec.kill_9();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let held = collector.uids("occurrence").len();
    assert!(held > 0, "the held batch reached the collector");
    gate.set(FORWARD);
    for i in 0..10 {
        warning(&events, &ns.name, "after", i).await;
    }
    let rec = recorder(&db, &ns.name, &["--ship", &gate.url()]);
    wait_until(
        Duration::from_secs(90),
        "every Warning in the collector",
        || async {
            collector
                .records()
                .iter()
                .filter(|r| {
                    r.attr("k8s.namespace.name") == ns.name
                        && r.attr("kubectl_diag.kind") == "occurrence"
                })
                .map(|r| r.attr("log.record.uid"))
                .collect::<HashSet<_>>()
                .len()
                == 70
        },
    )
    .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(rec.terminate().success());
    tokio::time::sleep(Duration::from_millis(500)).await;
    let cluster = cluster_uid(&db);
    assert_all_arrived(&db, &collector, &cluster);
    assert_eq!(
        sqlite_count(&db, "SELECT count(*) FROM outbox"),
        0,
        "the outbox is empty after a clean stop"
    );
    let twice = collector
        .uids("occurrence")
        .values()
        .filter(|n| **n > 1)
        .count();
    eprintln!(
        "{} records in the collector's files, {} occurrence uids, {held} of them there when the recorder was killed, \
         {twice} sent twice (the held batch, sent again)",
        collector.records().len(),
        collector.uids("occurrence").len()
    );
    assert!(
        twice > 0,
        "the batch the recorder never heard back about was sent again"
    );
    let gaps: Vec<Rec> = collector
        .records()
        .into_iter()
        .filter(|r| {
            r.attr("kubectl_diag.kind") == "gap"
                && r.attr("kubectl_diag.gap.reason") == "not-running"
        })
        .collect();
    assert!(
        !gaps.is_empty(),
        "the SIGKILL's blind interval is a gap record"
    );
    assert_eq!(gaps[0].severity, 13);
}
