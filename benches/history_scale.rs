//! Scale benchmarks over a large synthetic recording, written straight into
//! the schema (with the same interned strings and indexes the recorder uses).
//! Not a test: it prints figures for docs/performance.md.
//!
//!   cargo build --release
//!   cargo bench --bench history_scale -- timeline [--deployments 9800] [--pods-per 100] [--occurrences-per-pod 10] [--queries 200]
//!   cargo bench --bench history_scale -- check [--pods 150000] [--nodes 5000]
//!   cargo bench --bench history_scale -- relations [--namespaces 10] [--deployments-per 100] [--pods-per 10] [--services-per 200] [--configmaps-per 500]
//!
//! `timeline`: about 1 million objects (Deployments, each with a ReplicaSet and
//! 100 Pods) and 10 million Event occurrences; then the time to load and
//! assemble one Deployment's timeline (its ReplicaSet, 100 Pods and their
//! Nodes), warm, p50 and p99 over random Deployments.
//!
//! `check`: 150,000 Pods and 5,000 Nodes with history and update counters;
//! then `kubectl-diag check --db` (the release binary) end to end: wall time
//! and peak RSS.

use std::time::Instant;

use rusqlite::{Connection, params};

mod support;
use support::{flag, percentile};

const T0: i64 = 1_795_900_000_000;

struct Interner<'c> {
    conn: &'c Connection,
    cache: std::collections::HashMap<String, i64>,
}

impl Interner<'_> {
    fn id(&mut self, s: &str) -> i64 {
        if let Some(id) = self.cache.get(s) {
            return *id;
        }
        // NB: like the recorder's writer, a cache miss looks the text up before adding it.
        let h = kubectl_diag::units::fnv1a(s);
        let found: Option<i64> = self
            .conn
            .prepare_cached("SELECT id FROM strings WHERE h = ?1 AND s = ?2")
            .unwrap()
            .query_row(params![h, s], |r| r.get(0))
            .ok();
        let id = match found {
            Some(id) => id,
            None => {
                self.conn
                    .prepare_cached("INSERT INTO strings (h, s) VALUES (?1, ?2)")
                    .unwrap()
                    .execute(params![h, s])
                    .unwrap();
                self.conn.last_insert_rowid()
            }
        };
        if self.cache.len() < 200_000 {
            self.cache.insert(s.to_string(), id);
        }
        id
    }
}

fn fresh(path: &std::path::Path) -> (Connection, i64) {
    fresh_of(path, "bench-uid")
}

/// A new recording of one cluster, whose uid is `uid`.
fn fresh_of(path: &std::path::Path, uid: &str) -> (Connection, i64) {
    let rec = kubectl_diag::store::Recording::open(path, kubectl_diag::store::Mode::Write).unwrap();
    let cluster = rec.register_cluster(uid, "bench", "", T0).unwrap();
    let conn = rec.into_connection();
    conn.execute_batch("PRAGMA synchronous = OFF").unwrap();
    (conn, cluster)
}

#[allow(clippy::too_many_arguments)]
fn object(
    conn: &Connection,
    s: &mut Interner<'_>,
    cluster: i64,
    av: &str,
    kind: &str,
    ns: &str,
    name: &str,
    uid: &str,
    at: i64,
) -> i64 {
    let (k, n, nm, a) = (s.id(kind), s.id(ns), s.id(name), s.id(av));
    conn.prepare_cached(
        "INSERT INTO objects (cluster_id, kind, namespace, name, uid, api_version, created, first_seen) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7)",
    )
    .unwrap()
    .execute(params![cluster, k, n, nm, uid, a, at])
    .unwrap();
    conn.last_insert_rowid()
}

fn version(
    conn: &Connection,
    s: &mut Interner<'_>,
    object: i64,
    at: i64,
    state: &str,
    writers: &str,
    generation: i64,
) {
    let (st, w) = (s.id(state), s.id(writers));
    conn.prepare_cached(
        "INSERT INTO versions (object_id, at, state, writers, seen, generation, observed_generation) VALUES (?1, ?2, ?3, ?4, 2, ?5, ?5)",
    )
    .unwrap()
    .execute(params![object, at, st, w, generation])
    .unwrap();
}

#[allow(clippy::too_many_arguments)]
fn relation(
    conn: &Connection,
    s: &mut Interner<'_>,
    child: i64,
    rel: &str,
    kind: &str,
    ns: &str,
    name: &str,
    uid: &str,
    at: i64,
) {
    let (k, n, nm) = (s.id(kind), s.id(ns), s.id(name));
    conn.prepare_cached(
        "INSERT OR IGNORE INTO relations (child_id, rel, parent_kind, parent_namespace, parent_name, parent_uid, since) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )
    .unwrap()
    .execute(params![child, rel, k, n, nm, uid, at])
    .unwrap();
}

fn pod_state(rs: &str, rs_uid: &str, node: &str, ready: bool, restarts: i64) -> String {
    format!(
        r#"{{"phase":"Running","cond":[{{"t":"Ready","s":"{}"}}],"ctr":[{{"n":"app","st":"{}","rc":{restarts}}}],"node":"{node}","own":[{{"av":"apps/v1","k":"ReplicaSet","n":"{rs}","u":"{rs_uid}","c":true}}],"img":["app:1"]}}"#,
        if ready { "True" } else { "False" },
        if ready { "running" } else { "waiting" },
    )
}

fn timeline(args: &[String]) {
    let deployments = flag(args, "--deployments", 9_800) as i64;
    let per = flag(args, "--pods-per", 100) as i64;
    let occ_per = flag(args, "--occurrences-per-pod", 10) as i64;
    let queries = flag(args, "--queries", 200) as usize;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("scale.db");
    let (conn, cluster) = fresh(&path);
    let t = Instant::now();
    conn.execute_batch("BEGIN").unwrap();
    let mut s = Interner {
        conn: &conn,
        cache: Default::default(),
    };
    let nodes: Vec<String> = (0..100).map(|i| format!("node-{i}")).collect();
    for n in &nodes {
        let id = object(
            &conn,
            &mut s,
            cluster,
            "v1",
            "Node",
            "",
            n,
            &format!("uid-{n}"),
            T0 - 86_400_000,
        );
        version(
            &conn,
            &mut s,
            id,
            T0,
            r#"{"cond":[{"t":"Ready","s":"True"}]}"#,
            "kubelet/status",
            0,
        );
    }
    let reasons = [
        "Scheduled",
        "Pulling",
        "Pulled",
        "Created",
        "Started",
        "BackOff",
        "Unhealthy",
    ];
    let (mut objects, mut occurrences) = (nodes.len() as i64, 0i64);
    for d in 0..deployments {
        let ns = format!("ns-{}", d % 200);
        let name = format!("app-{d}");
        let at = T0 + d * 10;
        let did = object(
            &conn,
            &mut s,
            cluster,
            "apps/v1",
            "Deployment",
            &ns,
            &name,
            &format!("d-{d}"),
            at,
        );
        version(
            &conn,
            &mut s,
            did,
            at,
            r#"{"rep":{"spec.replicas":100},"img":["app:1"]}"#,
            "kubectl",
            1,
        );
        version(
            &conn,
            &mut s,
            did,
            at + 60_000,
            r#"{"rep":{"spec.replicas":100,"readyReplicas":100},"img":["app:1"]}"#,
            "kube-controller-manager/status",
            1,
        );
        let rs = format!("{name}-7c9d");
        let rs_uid = format!("r-{d}");
        let rid = object(
            &conn,
            &mut s,
            cluster,
            "apps/v1",
            "ReplicaSet",
            &ns,
            &rs,
            &rs_uid,
            at,
        );
        version(
            &conn,
            &mut s,
            rid,
            at,
            &format!(
                r#"{{"rep":{{"spec.replicas":100}},"own":[{{"av":"apps/v1","k":"Deployment","n":"{name}","u":"d-{d}","c":true}}]}}"#
            ),
            "kube-controller-manager",
            1,
        );
        relation(
            &conn,
            &mut s,
            rid,
            "owner",
            "Deployment",
            &ns,
            &name,
            &format!("d-{d}"),
            at,
        );
        objects += 2;
        for p in 0..per {
            let pod = format!("{rs}-{p:05}");
            let node = &nodes[((d * per + p) % 100) as usize];
            let pid = object(
                &conn,
                &mut s,
                cluster,
                "v1",
                "Pod",
                &ns,
                &pod,
                &format!("p-{d}-{p}"),
                at,
            );
            version(
                &conn,
                &mut s,
                pid,
                at + 1_000,
                &pod_state(&rs, &rs_uid, node, false, 0),
                "kube-scheduler/binding",
                0,
            );
            version(
                &conn,
                &mut s,
                pid,
                at + 5_000,
                &pod_state(&rs, &rs_uid, node, true, 0),
                "kubelet/status",
                0,
            );
            relation(
                &conn,
                &mut s,
                pid,
                "owner",
                "ReplicaSet",
                &ns,
                &rs,
                &rs_uid,
                at,
            );
            relation(&conn, &mut s, pid, "node", "Node", "", node, "", at);
            objects += 1;
            // One Event per Pod with `occ_per` occurrences.
            let reason = s.id(reasons[(p % 7) as usize]);
            let (empty, kind_w) = (
                s.id(""),
                s.id(if p % 7 >= 5 { "Warning" } else { "Normal" }),
            );
            let (kubelet, host) = (s.id("kubelet"), s.id(node));
            conn.prepare_cached(
                "INSERT INTO events (cluster_id, uid, namespace, name, object_id, field_path, reason, type, action, controller, instance, host, last, count) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?6, ?9, ?6, ?10, ?11, ?12)",
            )
            .unwrap()
            .execute(params![cluster, format!("e-{d}-{p}"), s.id(&ns), d * per + p, pid, empty, reason, kind_w, kubelet, host, at + occ_per * 30_000, occ_per])
            .unwrap();
            let eid = conn.last_insert_rowid();
            let msg = s.id(&format!("{} for pod {pod}", reasons[(p % 7) as usize]));
            for c in 1..=occ_per {
                conn.prepare_cached("INSERT INTO occurrences (event_id, count, n, first, last, message) VALUES (?1, ?2, 1, ?3, ?3, ?4)")
                    .unwrap()
                    .execute(params![eid, c, at + c * 30_000, msg])
                    .unwrap();
                occurrences += 1;
            }
        }
        if d % 1000 == 999 {
            conn.execute_batch("COMMIT; BEGIN").unwrap();
        }
    }
    conn.execute_batch("COMMIT; PRAGMA wal_checkpoint(TRUNCATE); ANALYZE")
        .unwrap();
    let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    println!(
        "built {objects} objects and {occurrences} occurrences in {:.0}s: {:.0} MiB",
        t.elapsed().as_secs_f64(),
        bytes as f64 / 1_048_576.0
    );
    drop(s);
    drop(conn);

    let recording =
        kubectl_diag::store::Recording::open(&path, kubectl_diag::store::Mode::ReadOnly).unwrap();
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut pick = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % deployments as u64) as i64
    };
    let chosen: Vec<i64> = (0..queries).map(|_| pick()).collect();
    let run = |d: i64| -> (std::time::Duration, usize) {
        let start = Instant::now();
        let ns = format!("ns-{}", d % 200);
        let target = recording
            .named(cluster, "Deployment", &ns, &format!("app-{d}"))
            .unwrap()
            .remove(0);
        let walk = kubectl_diag::store::timeline::Walk {
            depth: 2,
            related: true,
        };
        let subjects = recording.subjects(cluster, target, walk).unwrap();
        let events = recording.events(cluster, &subjects, 0, i64::MAX).unwrap();
        let gaps = recording.gaps(cluster, 0, i64::MAX).unwrap();
        let t = kubectl_diag::timeline::assemble(
            &subjects,
            &events,
            &gaps,
            &[],
            0,
            T0 + 10 * 86_400_000,
        );
        (start.elapsed(), t.entries.len())
    };
    for d in &chosen {
        run(*d); // warm the page cache
    }
    let mut times: Vec<f64> = Vec::new();
    let mut entries = Vec::new();
    for d in &chosen {
        let (took, n) = run(*d);
        times.push(took.as_secs_f64() * 1000.0);
        entries.push(n);
    }
    entries.sort_unstable();
    let entries = format!("{}–{}", entries[0], entries[entries.len() - 1]);
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!(
        "timeline of a Deployment (1 ReplicaSet, {per} Pods, their Nodes; {entries} entries), warm, {queries} queries: p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        percentile(&times, 0.5),
        percentile(&times, 0.99),
        times.last().copied().unwrap_or(0.0)
    );
}

fn check(args: &[String]) {
    let pods = flag(args, "--pods", 150_000) as i64;
    let node_count = flag(args, "--nodes", 5_000) as i64;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("check.db");
    build_pods(&path, "bench-uid", pods, node_count);
    check_runs(&path, pods, node_count);
}

/// The recording `check` and `metrics` measure: `pods` Pods on `node_count`
/// Nodes (with Services, budgets, ConfigMaps and Deployments), of cluster `uid`.
fn build_pods(path: &std::path::Path, uid: &str, pods: i64, node_count: i64) {
    let (conn, cluster) = fresh_of(path, uid);
    let t = Instant::now();
    conn.execute_batch("BEGIN").unwrap();
    let mut s = Interner {
        conn: &conn,
        cache: Default::default(),
    };
    let now = chrono::Utc::now().timestamp_millis();
    for n in 0..node_count {
        let name = format!("node-{n}");
        let id = object(
            &conn,
            &mut s,
            cluster,
            "v1",
            "Node",
            "",
            &name,
            &format!("n-{n}"),
            now - 86_400_000,
        );
        let ready = if n % 1000 == 7 { "Unknown" } else { "True" };
        // NB: the Nodes were last seen now: that makes "now" the latest recorded moment.
        version(
            &conn,
            &mut s,
            id,
            now - 1_000,
            &format!(r#"{{"cond":[{{"t":"Ready","s":"{ready}"}}]}}"#),
            "kubelet/status",
            0,
        );
    }
    for p in 0..pods {
        let ns = format!("ns-{}", p % 500);
        let name = format!("pod-{p}");
        let node = format!("node-{}", p % node_count);
        let id = object(
            &conn,
            &mut s,
            cluster,
            "v1",
            "Pod",
            &ns,
            &name,
            &format!("p-{p}"),
            now - 7_200_000,
        );
        let state = match p % 1000 {
            1 => r#"{"phase":"Pending","cond":[{"t":"PodScheduled","s":"False","r":"Unschedulable","m":"0/5000 nodes are available: 1000 Insufficient cpu, 4000 node(s) didn't match Pod's node affinity/selector. preemption: 0/5000 nodes are available: 5000 Preemption is not helpful for scheduling."}]}"#.to_string(),
            2 => format!(r#"{{"phase":"Running","node":"{node}","del":{},"fin":["example.com/cleanup"]}}"#, now - 3_600_000),
            _ => format!(r#"{{"phase":"Running","node":"{node}","cond":[{{"t":"Ready","s":"True"}}],"ctr":[{{"n":"app","st":"running"}}],"lbl":{{"app":"app-{}","pod-template-hash":"h{}"}}}}"#, p / 500 % 4, p / 500 % 4),
        };
        version(
            &conn,
            &mut s,
            id,
            now - 3_600_000,
            &state,
            "kubelet/status",
            0,
        );
        if p % 5000 == 3 {
            // A hot object: 300 updates a minute by two managers over the last 10 minutes.
            for minute in 0..10 {
                for m in ["fighter-a", "fighter-b"] {
                    conn.prepare_cached("INSERT INTO update_counts (object_id, minute, manager, updates, versions, generation) VALUES (?1, ?2, ?3, 150, 0, 0)")
                        .unwrap()
                        .execute(params![id, now / 60_000 - minute, s.id(m)])
                        .unwrap();
                }
            }
        }
    }
    // The relationship graph (issue 47): per namespace, 4 Services selecting
    // the Pods (one namespace in 50 has one selecting nothing), a budget,
    // 10 ConfigMaps and a Deployment naming two of them (one namespace in
    // 100 names one that does not exist).
    let namespaces = 500.min(pods);
    for n in 0..namespaces {
        let ns = format!("ns-{n}");
        for k in 0..4 {
            let app = if k == 3 && n % 50 == 0 {
                "gone".to_string()
            } else {
                format!("app-{k}")
            };
            let id = object(
                &conn,
                &mut s,
                cluster,
                "v1",
                "Service",
                &ns,
                &format!("svc-{k}"),
                &format!("s-{n}-{k}"),
                now - 7_200_000,
            );
            version(
                &conn,
                &mut s,
                id,
                now - 3_600_000,
                &format!(r#"{{"psel":[{{"k":"app","op":"In","v":["{app}"]}}]}}"#),
                "kubectl",
                0,
            );
        }
        let id = object(
            &conn,
            &mut s,
            cluster,
            "policy/v1",
            "PodDisruptionBudget",
            &ns,
            "pdb",
            &format!("b-{n}"),
            now - 7_200_000,
        );
        version(
            &conn,
            &mut s,
            id,
            now - 3_600_000,
            r#"{"psel":[{"k":"app","op":"In","v":["app-0"]}],"rep":{"disruptionsAllowed":1,"currentHealthy":75,"desiredHealthy":74,"expectedPods":75}}"#,
            "kube-controller-manager/status",
            0,
        );
        for c in 0..10 {
            let id = object(
                &conn,
                &mut s,
                cluster,
                "v1",
                "ConfigMap",
                &ns,
                &format!("cm-{c}"),
                &format!("c-{n}-{c}"),
                now - 7_200_000,
            );
            version(
                &conn,
                &mut s,
                id,
                now - 3_600_000,
                r#"{"spec":"00ff00ff00ff00ff"}"#,
                "kubectl",
                0,
            );
        }
        let missing = if n % 100 == 0 { "cm-missing" } else { "cm-1" };
        let id = object(
            &conn,
            &mut s,
            cluster,
            "apps/v1",
            "Deployment",
            &ns,
            "app",
            &format!("d-{n}"),
            now - 7_200_000,
        );
        version(
            &conn,
            &mut s,
            id,
            now - 3_600_000,
            &format!(
                r#"{{"gen":1,"ogen":1,"rep":{{"spec.replicas":1,"replicas":1,"readyReplicas":1,"updatedReplicas":1,"availableReplicas":1}},"refs":["ConfigMap/cm-0","ConfigMap/{missing}"]}}"#
            ),
            "kubectl",
            1,
        );
    }
    // NB: what the recorder watched: a reference is called missing only then.
    for t in ["pods", "configmaps", "services", "deployments.apps"] {
        conn.execute(
            "INSERT INTO watch_positions (cluster_id, resource, resource_version, updated) VALUES (?1, ?2, '1', ?3)",
            params![cluster, t, now],
        )
        .unwrap();
    }
    conn.execute_batch("COMMIT; PRAGMA wal_checkpoint(TRUNCATE); ANALYZE")
        .unwrap();
    println!(
        "built {pods} Pods, {node_count} Nodes, {} Services, {namespaces} budgets, {} ConfigMaps and {namespaces} Deployments in {:.0}s",
        namespaces * 4,
        namespaces * 10,
        t.elapsed().as_secs_f64()
    );
    drop(s);
    drop(conn);
}

fn check_runs(path: &std::path::Path, pods: i64, node_count: i64) {
    let bin = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/release/kubectl-diag");
    for _ in 0..2 {
        let start = Instant::now();
        let mut child = std::process::Command::new(&bin)
            .args(["check", "-o", "json", "--db"])
            .arg(path)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("target/release/kubectl-diag: run `cargo build --release` first");
        let pid = child.id().to_string();
        let mut peak = 0.0f64;
        let stdout = child.stdout.take().unwrap();
        let reader = std::thread::spawn(move || std::io::read_to_string(stdout).unwrap());
        while child.try_wait().unwrap().is_none() {
            peak = peak.max(support::memory_mib(&pid, "VmHWM:"));
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let took = start.elapsed();
        let out = reader.join().unwrap();
        let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
        let mut codes: std::collections::BTreeMap<String, usize> = Default::default();
        for f in doc["findings"].as_array().unwrap() {
            *codes
                .entry(f["code"].as_str().unwrap().to_string())
                .or_default() += 1;
        }
        println!(
            "check --db over {pods} Pods and {node_count} Nodes: {:.2}s, peak RSS {peak:.0} MiB (sampled every 5 ms), findings {codes:?}",
            took.as_secs_f64()
        );
    }
}

/// `relations`: the timeline's walk along relationships (issue 47): 10,000
/// Pods (100 Deployments of 10 Pods in each of 10 namespaces), 2,000
/// Services selecting them, 5,000 ConfigMaps edited once, each Deployment's
/// template naming 5; then a Deployment's timeline with its uses and
/// selectors, warm, p50 and p99 over random Deployments.
fn relations(args: &[String]) {
    let namespaces = flag(args, "--namespaces", 10) as i64;
    let deployments = flag(args, "--deployments-per", 100) as i64;
    let per = flag(args, "--pods-per", 10) as i64;
    let services = flag(args, "--services-per", 200) as i64;
    let configmaps = flag(args, "--configmaps-per", 500) as i64;
    let queries = flag(args, "--queries", 200) as usize;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("relations.db");
    let (conn, cluster) = fresh(&path);
    let t = Instant::now();
    conn.execute_batch("BEGIN").unwrap();
    let mut s = Interner {
        conn: &conn,
        cache: Default::default(),
    };
    for n in 0..namespaces {
        let ns = format!("ns-{n}");
        for c in 0..configmaps {
            let id = object(
                &conn,
                &mut s,
                cluster,
                "v1",
                "ConfigMap",
                &ns,
                &format!("cm-{c}"),
                &format!("c-{n}-{c}"),
                T0,
            );
            version(
                &conn,
                &mut s,
                id,
                T0,
                r#"{"spec":"00000000000000aa"}"#,
                "kubectl-client-side-apply",
                0,
            );
            // NB: the recorder stores each version's diff; a ConfigMap's says
            // which key. Interned first: last_insert_rowid() is then the version's.
            let diff = s.id(r#"[{"p":"data.LOG_LEVEL"}]"#);
            let (state, writer) = (s.id(r#"{"spec":"00000000000000bb"}"#), s.id("kubectl-edit"));
            let _ = (state, writer);
            version(
                &conn,
                &mut s,
                id,
                T0 + 120_000 + c * 10,
                r#"{"spec":"00000000000000bb"}"#,
                "kubectl-edit",
                0,
            );
            conn.prepare_cached("UPDATE versions SET diff = ?1 WHERE id = last_insert_rowid()")
                .unwrap()
                .execute(params![diff])
                .unwrap();
        }
        for k in 0..services {
            let id = object(
                &conn,
                &mut s,
                cluster,
                "v1",
                "Service",
                &ns,
                &format!("svc-{k}"),
                &format!("s-{n}-{k}"),
                T0,
            );
            version(
                &conn,
                &mut s,
                id,
                T0,
                &format!(
                    r#"{{"psel":[{{"k":"app","op":"In","v":["app-{}"]}}]}}"#,
                    k % deployments
                ),
                "kubectl",
                0,
            );
        }
        for d in 0..deployments {
            let name = format!("app-{d}");
            let at = T0 + d * 10;
            let refs: Vec<String> = (0..5)
                .map(|j| format!(r#""ConfigMap/cm-{}""#, (d * 5 + j) % configmaps))
                .collect();
            let did = object(
                &conn,
                &mut s,
                cluster,
                "apps/v1",
                "Deployment",
                &ns,
                &name,
                &format!("d-{n}-{d}"),
                at,
            );
            version(
                &conn,
                &mut s,
                did,
                at,
                &format!(
                    r#"{{"gen":1,"rep":{{"spec.replicas":{per}}},"img":["app:1"],"refs":[{}]}}"#,
                    refs.join(",")
                ),
                "kubectl",
                1,
            );
            version(
                &conn,
                &mut s,
                did,
                at + 180_000,
                &format!(
                    r#"{{"gen":2,"rep":{{"spec.replicas":{per},"readyReplicas":{per}}},"img":["app:2"],"refs":[{}]}}"#,
                    refs.join(",")
                ),
                "kubectl-set",
                2,
            );
            let rs = format!("{name}-7c9d");
            let rs_uid = format!("r-{n}-{d}");
            let rid = object(
                &conn,
                &mut s,
                cluster,
                "apps/v1",
                "ReplicaSet",
                &ns,
                &rs,
                &rs_uid,
                at,
            );
            version(
                &conn,
                &mut s,
                rid,
                at,
                &format!(
                    r#"{{"rep":{{"spec.replicas":{per}}},"own":[{{"av":"apps/v1","k":"Deployment","n":"{name}","u":"d-{n}-{d}","c":true}}]}}"#
                ),
                "kube-controller-manager",
                1,
            );
            relation(
                &conn,
                &mut s,
                rid,
                "owner",
                "Deployment",
                &ns,
                &name,
                &format!("d-{n}-{d}"),
                at,
            );
            for p in 0..per {
                let pod = format!("{rs}-{p}");
                let pid = object(
                    &conn,
                    &mut s,
                    cluster,
                    "v1",
                    "Pod",
                    &ns,
                    &pod,
                    &format!("p-{n}-{d}-{p}"),
                    at,
                );
                let state = format!(
                    r#"{{"phase":"Running","cond":[{{"t":"Ready","s":"True"}}],"node":"node-{}","own":[{{"av":"apps/v1","k":"ReplicaSet","n":"{rs}","u":"{rs_uid}","c":true}}],"lbl":{{"app":"{name}","pod-template-hash":"7c9d"}}}}"#,
                    p % 100
                );
                version(&conn, &mut s, pid, at + 1_000, &state, "kubelet/status", 0);
                relation(
                    &conn,
                    &mut s,
                    pid,
                    "owner",
                    "ReplicaSet",
                    &ns,
                    &rs,
                    &rs_uid,
                    at,
                );
            }
        }
        conn.execute_batch("COMMIT; BEGIN").unwrap();
    }
    conn.execute_batch("COMMIT; PRAGMA wal_checkpoint(TRUNCATE); ANALYZE")
        .unwrap();
    let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    println!(
        "built {} Pods, {} Services and {} ConfigMaps in {:.0}s: {:.0} MiB",
        namespaces * deployments * per,
        namespaces * services,
        namespaces * configmaps,
        t.elapsed().as_secs_f64(),
        bytes as f64 / 1_048_576.0
    );
    drop(s);
    drop(conn);
    let recording =
        kubectl_diag::store::Recording::open(&path, kubectl_diag::store::Mode::ReadOnly).unwrap();
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut pick = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let chosen: Vec<(i64, i64)> = (0..queries)
        .map(|_| {
            let r = pick();
            (
                (r % namespaces as u64) as i64,
                ((r >> 20) % deployments as u64) as i64,
            )
        })
        .collect();
    let run = |(n, d): (i64, i64)| -> (std::time::Duration, usize, usize) {
        let start = Instant::now();
        let target = recording
            .named(
                cluster,
                "Deployment",
                &format!("ns-{n}"),
                &format!("app-{d}"),
            )
            .unwrap()
            .remove(0);
        let walk = kubectl_diag::store::timeline::Walk {
            depth: 2,
            related: true,
        };
        let subjects = recording.subjects(cluster, target, walk).unwrap();
        let related = subjects
            .iter()
            .filter(|s| {
                matches!(
                    s.relation,
                    Some(
                        kubectl_diag::timeline::Relation::Uses
                            | kubectl_diag::timeline::Relation::Selects
                    )
                )
            })
            .count();
        let events = recording.events(cluster, &subjects, 0, i64::MAX).unwrap();
        let gaps = recording.gaps(cluster, 0, i64::MAX).unwrap();
        let t =
            kubectl_diag::timeline::assemble(&subjects, &events, &gaps, &[], 0, T0 + 86_400_000);
        let summary = kubectl_diag::timeline::summary::summarize(&subjects, &t, 1, Vec::new());
        assert!(
            !summary.related.is_empty(),
            "the ConfigMaps' edits are related"
        );
        (start.elapsed(), t.entries.len(), related)
    };
    for q in &chosen {
        run(*q); // warm the page cache
    }
    let mut times: Vec<f64> = Vec::new();
    let (mut entries, mut related) = (Vec::new(), Vec::new());
    for q in &chosen {
        let (took, n, r) = run(*q);
        times.push(took.as_secs_f64() * 1000.0);
        entries.push(n);
        related.push(r);
    }
    entries.sort_unstable();
    related.sort_unstable();
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!(
        "timeline of a Deployment (1 ReplicaSet, {per} Pods, their uses and selectors: {}–{} related objects; {}–{} entries), 2-hop walk, warm, {queries} queries: p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        related[0],
        related[related.len() - 1],
        entries[0],
        entries[entries.len() - 1],
        percentile(&times, 0.5),
        percentile(&times, 0.99),
        times.last().copied().unwrap_or(0.0)
    );
}

/// `metrics` (issue 45): what `record --check-every 1m` adds to a recorder
/// whose recording holds 150,000 Pods. The recording is made for the live
/// cluster's uid ($KUBECONFIG, the local control plane), so that the recorder
/// checks it; `--events-only` keeps its relists from marking the synthetic
/// Pods deleted. Two recorders run `--minutes` each, one after the other, on
/// copies of it: without and with `--check-every 1m`; then /metrics is scraped
/// 20 times with the findings on it.
fn metrics(args: &[String]) {
    let pods = flag(args, "--pods", 150_000) as i64;
    let node_count = flag(args, "--nodes", 5_000) as i64;
    let minutes = flag(args, "--minutes", 3);
    let out = std::process::Command::new("scripts/cluster")
        .args([
            "kubectl",
            "get",
            "namespace",
            "kube-system",
            "-o",
            "jsonpath={.metadata.uid}",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("scripts/cluster kubectl: start the local control plane (scripts/cluster up)");
    let uid = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(
        !uid.is_empty(),
        "no cluster uid: is the local control plane up (scripts/cluster up)?"
    );
    let dir = tempfile::tempdir().unwrap();
    let built = dir.path().join("built.db");
    build_pods(&built, &uid, pods, node_count);
    let bin = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/release/kubectl-diag");
    let kubeconfig =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/cluster/kubeconfig");
    for every in [None, Some("1m")] {
        let db = dir
            .path()
            .join(format!("run-{}.db", every.unwrap_or("none")));
        std::fs::copy(&built, &db).unwrap();
        let addr = support::free_local_addr();
        let mut cmd = std::process::Command::new(&bin);
        cmd.args(["record", "--quiet", "--events-only", "--db"])
            .arg(&db)
            .args(["--listen", &addr])
            .env("KUBECONFIG", &kubeconfig)
            .stderr(std::process::Stdio::null());
        if let Some(every) = every {
            cmd.args(["--check-every", every]);
        }
        let mut child = cmd
            .spawn()
            .expect("target/release/kubectl-diag: run `cargo build --release` first");
        let pid = child.id().to_string();
        let start = Instant::now();
        let (mut rss_sum, mut samples, mut peak) = (0.0, 0u32, 0.0f64);
        while start.elapsed() < std::time::Duration::from_secs(minutes * 60) {
            let rss = support::memory_mib(&pid, "VmRSS:");
            rss_sum += rss;
            samples += 1;
            peak = peak.max(support::memory_mib(&pid, "VmHWM:"));
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        let cpu = support::cpu_seconds(&pid);
        let mut scrapes = Vec::new();
        let mut series = 0;
        for _ in 0..20 {
            let t = Instant::now();
            let page = scrape(&addr);
            scrapes.push(t.elapsed().as_secs_f64() * 1000.0);
            series = page
                .lines()
                .filter(|l| l.starts_with("kubectl_diag_finding{"))
                .count();
        }
        scrapes.sort_by(f64::total_cmp);
        let checks = support::metric(&addr, "kubectl_diag_checks_total").unwrap_or(0);
        let took = scrape(&addr)
            .lines()
            .find(|l| l.starts_with("kubectl_diag_check_duration_seconds "))
            .and_then(|l| l.split_whitespace().nth(1).map(str::to_string))
            .unwrap_or_else(|| "-".into());
        let _ = child.kill();
        let _ = child.wait();
        println!(
            "record --events-only{} over {pods} Pods, {minutes} min: CPU {cpu:.2} s ({:.2} % of a core), RSS mean {:.1} MiB, peak {peak:.1} MiB; checks {checks}, last took {took} s; /metrics with {series} finding series: p50 {:.1} ms, max {:.1} ms",
            every.map_or(String::new(), |e| format!(" --check-every {e}")),
            cpu * 100.0 / (minutes as f64 * 60.0),
            rss_sum / f64::from(samples.max(1)),
            scrapes[scrapes.len() / 2],
            scrapes[scrapes.len() - 1],
        );
    }
}

/// One GET /metrics, the whole page.
fn scrape(addr: &str) -> String {
    use std::io::{Read, Write};
    let Ok(mut s) = std::net::TcpStream::connect(addr) else {
        return String::new();
    };
    let _ = write!(s, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
    let mut body = String::new();
    let _ = s.read_to_string(&mut body);
    body
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "metrics") {
        metrics(&args);
    } else if args.iter().any(|a| a == "check") {
        check(&args);
    } else if args.iter().any(|a| a == "relations") {
        relations(&args);
    } else {
        timeline(&args);
    }
}
