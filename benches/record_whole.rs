//! Live benchmark: the recorder on a whole cluster (issue 16). Creates
//! `--pods N` Pods bound to the KWOK nodes (as `history_pods` does), `--crds T`
//! CustomResourceDefinitions (each its own group and kind, namespaced, any
//! fields kept) and `--objects N` objects spread evenly over those CRDs and ten
//! built-in types, all in namespace `bench-whole`, 64 creates in flight. Then:
//!
//! 1. the apiserver's own LISTs of every type the recorder watches by default
//!    (Events included): plain paged LISTs, `limit=500`, the bodies read and
//!    only their items counted, once one type after another (summed) and once
//!    all types at the same time (parallel, as the recorder starts its watches);
//!    then the streaming lists the recorder asks for, all at once, read and
//!    dropped; kube-apiserver's CPU seconds for each;
//! 2. the release recorder (`target/release/kubectl-diag record`, whole
//!    cluster, default types) from its start until every watched type has a
//!    committed position (its initial list stored), RSS sampled every 100 ms;
//! 3. `--watch-seconds` of watching: RSS every 0.5 s, its largest over the
//!    whole watch, and its largest from 5 s on ("steady", once the writer has
//!    given the list's memory back);
//! 4. after a clean stop: peak RSS (VmHWM), the recording's size, and what
//!    the `spec_docs` baselines take of it;
//! 5. the LISTs again, to see how the apiserver's own time drifted.
//!
//! Not a test: it prints figures for docs/performance.md. Needs the local
//! cluster and `cargo build --release`.
//!
//!   KUBECONFIG=target/cluster/kubeconfig cargo bench --bench record_whole -- \
//!     [--pods 10000] [--crds 30] [--objects 20000] [--watch-seconds 30] [--keep] [--reuse]
//!
//! `--keep` leaves the namespace and CRDs in place; `--reuse` measures what a
//! kept run left instead of creating it again. The recorder's `-v` log (each
//! watch's listing and watching, timestamped) goes to `target/record_whole.log`.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::core::v1::{Namespace, Pod};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{ApiResource, DeleteParams, DynamicObject, ListParams, PostParams};
use kube::{Api, Client};
use kubectl_diag::model::ResourceType;

mod support;
use support::{cpu_seconds, create_namespace, flag, memory_mib, metric};

const NS: &str = "bench-whole";
/// Label on the CRDs, so that cleanup finds exactly these.
const LABEL: &str = "kubectl-diag-bench=record-whole";

fn crd_group(i: u64) -> String {
    format!("g{i}.bench-whole.example.com")
}

fn crd(i: u64) -> CustomResourceDefinition {
    serde_json::from_value(serde_json::json!({
        "metadata": {"name": format!("things{i}.{}", crd_group(i)),
                     "labels": {"kubectl-diag-bench": "record-whole"}},
        "spec": {
            "group": crd_group(i),
            "scope": "Namespaced",
            "names": {"plural": format!("things{i}"), "singular": format!("thing{i}"),
                      "kind": format!("Thing{i}"), "listKind": format!("Thing{i}List")},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object",
                    "x-kubernetes-preserve-unknown-fields": true}}}]
        }
    }))
    .unwrap()
}

fn ar(group: &str, version: &str, kind: &str, plural: &str) -> ApiResource {
    ApiResource {
        group: group.into(),
        version: version.into(),
        api_version: if group.is_empty() {
            version.into()
        } else {
            format!("{group}/{version}")
        },
        kind: kind.into(),
        plural: plural.into(),
    }
}

/// The built-in types the objects are spread over besides the CRDs: ones no
/// controller acts on (headless Services allocate no IP, no selector makes
/// no endpoints), so the cluster's load is the benchmark's own.
fn builtin_types() -> Vec<ApiResource> {
    vec![
        ar("", "v1", "ConfigMap", "configmaps"),
        ar("", "v1", "Service", "services"),
        ar("", "v1", "ServiceAccount", "serviceaccounts"),
        ar("", "v1", "PodTemplate", "podtemplates"),
        ar("rbac.authorization.k8s.io", "v1", "Role", "roles"),
        ar(
            "rbac.authorization.k8s.io",
            "v1",
            "RoleBinding",
            "rolebindings",
        ),
        ar(
            "networking.k8s.io",
            "v1",
            "NetworkPolicy",
            "networkpolicies",
        ),
        ar("networking.k8s.io", "v1", "Ingress", "ingresses"),
        ar("coordination.k8s.io", "v1", "Lease", "leases"),
        ar("discovery.k8s.io", "v1", "EndpointSlice", "endpointslices"),
    ]
}

/// Object `i` of type `t`: each with a spec (or data) of a few hundred bytes,
/// so that the recorder's spec baselines have something to hold.
fn object(t: &ApiResource, i: u64) -> DynamicObject {
    let name = format!("o-{i}");
    let app = format!("app-{}", i % 100);
    let body = match t.kind.as_str() {
        "ConfigMap" => serde_json::json!({"data": {
            "config.yaml": format!("server:\n  port: {}\n  name: {app}\n  replicas: 3\nlogging:\n  level: info\n", 8000 + i % 1000),
            "feature-flags": "alpha=false,beta=true,gamma=false,delta=true",
            "owner": format!("team-{}", i % 17),
            "checksum": format!("{:064x}", i.wrapping_mul(0x9E37_79B9_7F4A_7C15)),
        }}),
        "Service" => serde_json::json!({"spec": {"clusterIP": "None",
            "ports": [{"name": "http", "port": 80, "targetPort": 8080}, {"name": "metrics", "port": 9090}]}}),
        "ServiceAccount" => serde_json::json!({"automountServiceAccountToken": false}),
        "PodTemplate" => serde_json::json!({"template": {"metadata": {"labels": {"app": app}},
            "spec": {"containers": [{"name": "app", "image": format!("registry.example.com/{app}:1.2.3"),
                "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}}}]}}}),
        "Role" => serde_json::json!({"rules": [
            {"apiGroups": [""], "resources": ["configmaps", "pods"], "verbs": ["get", "list", "watch"]},
            {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get"]}]}),
        "RoleBinding" => serde_json::json!({
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
            "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": NS}]}),
        "NetworkPolicy" => {
            serde_json::json!({"spec": {"podSelector": {"matchLabels": {"app": app}},
            "ingress": [{"ports": [{"port": 8080, "protocol": "TCP"}]}], "policyTypes": ["Ingress"]}})
        }
        "Ingress" => serde_json::json!({"spec": {"rules": [{"host": format!("{app}.example.com"),
            "http": {"paths": [{"path": "/", "pathType": "Prefix",
                "backend": {"service": {"name": name, "port": {"number": 80}}}}]}}]}}),
        "Lease" => serde_json::json!({"spec": {"holderIdentity": format!("holder-{}", i % 7),
            "leaseDurationSeconds": 15}}),
        "EndpointSlice" => serde_json::json!({"addressType": "IPv4",
            "endpoints": [{"addresses": [format!("10.{}.{}.{}", i % 200, (i / 200) % 250, 1 + i % 250)]}],
            "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}]}),
        // A custom resource: a spec shaped like an operator's.
        _ => serde_json::json!({"spec": {
            "replicas": 1 + i % 5, "image": format!("registry.example.com/{app}:1.{}", i % 9),
            "ports": [{"name": "http", "port": 8080}, {"name": "grpc", "port": 9090}],
            "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
            "config": {"logLevel": "info", "retries": 3, "endpoints": [format!("https://{app}.internal:443")]}
        }}),
    };
    let mut value = serde_json::json!({
        "apiVersion": t.api_version, "kind": t.kind,
        "metadata": {"name": name, "namespace": NS, "labels": {"app": app}}
    });
    for (k, v) in body.as_object().unwrap() {
        value[k] = v.clone();
    }
    serde_json::from_value(value).unwrap()
}

fn pod(i: u64) -> Pod {
    let nodes = ["kwok-small", "kwok-medium", "kwok-large-tainted"];
    serde_json::from_value(serde_json::json!({
        // NB: no ownerReferences: the garbage collector deletes Pods whose owner does not exist.
        "metadata": {"name": format!("app-{i}"), "labels": {"app": format!("app-{}", i % 100)}},
        "spec": {
            "nodeName": nodes[(i % 3) as usize],
            "tolerations": [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}],
            "containers": [{"name": "app", "image": format!("registry.example.com/app-{}:1.2.3", i % 100),
                "resources": {"requests": {"cpu": "1m", "memory": "1Mi"}}}]
        }
    }))
    .unwrap()
}

/// Creates what the benchmark measures: CRDs (waiting until each is
/// established), then Pods and objects, 64 requests in flight.
async fn create(client: &Client, pods: u64, crds: u64, objects: u64) {
    create_namespace(client, NS).await;
    let crd_api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let t = Instant::now();
    for i in 0..crds {
        crd_api
            .create(&PostParams::default(), &crd(i))
            .await
            .expect("creating a CRD");
    }
    loop {
        let established = crd_api
            .list(&ListParams::default().labels(LABEL))
            .await
            .unwrap()
            .items
            .iter()
            .filter(|c| {
                c.status
                    .as_ref()
                    .and_then(|s| s.conditions.as_ref())
                    .is_some_and(|cs| {
                        cs.iter()
                            .any(|c| c.type_ == "Established" && c.status == "True")
                    })
            })
            .count() as u64;
        if established >= crds {
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    println!(
        "created {crds} CRDs, all established, in {:.1}s",
        t.elapsed().as_secs_f64()
    );

    let mut types: Vec<ApiResource> = (0..crds)
        .map(|i| {
            ar(
                &crd_group(i),
                "v1",
                &format!("Thing{i}"),
                &format!("things{i}"),
            )
        })
        .collect();
    types.extend(builtin_types());
    let t = Instant::now();
    let first_error = std::sync::Mutex::new(None::<String>);
    let created = futures::stream::iter(0..objects)
        .map(|i| {
            let ty = &types[(i % types.len() as u64) as usize];
            let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), NS, ty);
            let obj = object(ty, i);
            let first_error = &first_error;
            async move {
                // NB: a freshly established CRD may answer 404 for a moment: retry.
                for attempt in 0..5 {
                    match api.create(&PostParams::default(), &obj).await {
                        Ok(_) => return true,
                        Err(e) if attempt == 4 => {
                            first_error.lock().unwrap().get_or_insert(format!(
                                "{} {}: {e}",
                                ty.kind,
                                obj.metadata.name.as_deref().unwrap_or("")
                            ));
                        }
                        Err(_) => tokio::time::sleep(Duration::from_millis(500)).await,
                    }
                }
                false
            }
        })
        .buffer_unordered(64)
        .filter(|ok| futures::future::ready(*ok))
        .count()
        .await;
    println!(
        "created {created} of {objects} objects over {} types in {:.1}s{}",
        types.len(),
        t.elapsed().as_secs_f64(),
        first_error
            .lock()
            .unwrap()
            .as_ref()
            .map(|e| format!(" (first error: {e})"))
            .unwrap_or_default()
    );

    let api: Api<Pod> = Api::namespaced(client.clone(), NS);
    let t = Instant::now();
    let created = futures::stream::iter(0..pods)
        .map(|i| {
            let api = api.clone();
            async move { api.create(&PostParams::default(), &pod(i)).await.is_ok() }
        })
        .buffer_unordered(64)
        .filter(|ok| futures::future::ready(*ok))
        .count()
        .await;
    println!(
        "created {created} Pods in {:.1}s",
        t.elapsed().as_secs_f64()
    );
    wait_running(&api, created).await;
    println!("all Running after {:.1}s", t.elapsed().as_secs_f64());
}

async fn wait_running(api: &Api<Pod>, n: usize) {
    loop {
        // Metadata only: the benchmark must not load the apiserver more than needed.
        let running = api
            .list_metadata(&ListParams::default().fields("status.phase=Running"))
            .await
            .map(|l| l.items.len())
            .unwrap_or(0);
        if running >= n {
            return;
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
}

/// Only what paging needs from a LIST body; the items are counted, not decoded.
#[derive(serde::Deserialize)]
struct ListBody {
    metadata: ListMeta,
    items: Vec<serde::de::IgnoredAny>,
}

#[derive(serde::Deserialize)]
struct ListMeta {
    #[serde(rename = "continue")]
    continue_: Option<String>,
}

fn list_path(t: &ResourceType) -> String {
    if t.group.is_empty() {
        format!("/api/{}/{}", t.version, t.plural)
    } else {
        format!("/apis/{}/{}/{}", t.group, t.version, t.plural)
    }
}

/// One type's plain paged LIST, cluster-wide, 500 a page, as
/// `kubectl get --raw '<path>?limit=500'` and its continues: (objects, bytes).
async fn list_all(client: &Client, path: &str) -> (u64, u64) {
    let (mut objects, mut bytes) = (0u64, 0u64);
    let mut token: Option<String> = None;
    loop {
        let mut uri = format!("{path}?limit=500");
        if let Some(t) = &token {
            // NB: continue tokens are base64: '+', '/' and '=' must be escaped in a query.
            let escaped: String = t
                .chars()
                .map(|c| match c {
                    '+' => "%2B".to_string(),
                    '/' => "%2F".to_string(),
                    '=' => "%3D".to_string(),
                    c => c.to_string(),
                })
                .collect();
            uri.push_str(&format!("&continue={escaped}"));
        }
        let req = http::Request::get(uri).body(Vec::new()).unwrap();
        let text = match client.request_text(req).await {
            Ok(text) => text,
            Err(e) => {
                println!("  LIST {path}: {e}");
                return (objects, bytes);
            }
        };
        bytes += text.len() as u64;
        let body: ListBody = serde_json::from_str(&text).expect("a List");
        objects += body.items.len() as u64;
        match body.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(t) => token = Some(t),
            None => return (objects, bytes),
        }
    }
}

/// One type's streaming list, as the recorder asks for it (kube's
/// `WatchParams::streaming_lists`): a watch that first sends every existing
/// object, then a bookmark marking their end. Lines are read and counted, not
/// decoded. Returns the objects sent before that bookmark.
async fn stream_all(client: &Client, path: &str) -> u64 {
    use futures::AsyncBufReadExt;
    let uri = format!(
        "{path}?watch=true&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&timeoutSeconds=290"
    );
    let req = http::Request::get(uri).body(Vec::new()).unwrap();
    let body = match client.request_stream(req).await {
        Ok(body) => body,
        Err(e) => {
            println!("  streaming list {path}: {e}");
            return 0;
        }
    };
    let lines = body.lines();
    futures::pin_mut!(lines);
    let mut n = 0;
    while let Some(Ok(line)) = lines.next().await {
        if line.contains("\"BOOKMARK\"") && line.contains("initial-events-end") {
            return n;
        }
        n += 1;
    }
    println!("  streaming list {path}: ended without its bookmark after {n} objects");
    n
}

/// The LIST baseline over `paths`: summed (one after another) and parallel
/// (all at once). Returns (summed seconds, parallel seconds, objects).
async fn list_baseline(client: &Client, paths: &[String], label: &str) -> (f64, f64, u64) {
    let apiserver = pid_of("kube-apiserver").unwrap_or_default();
    let cpu0 = cpu_seconds(&apiserver);
    let t = Instant::now();
    let mut per_type: Vec<(f64, u64, u64, &str)> = Vec::new();
    for p in paths {
        let t1 = Instant::now();
        let (n, b) = list_all(client, p).await;
        per_type.push((t1.elapsed().as_secs_f64(), n, b, p.as_str()));
    }
    let summed = t.elapsed().as_secs_f64();
    let objects: u64 = per_type.iter().map(|x| x.1).sum();
    let bytes: u64 = per_type.iter().map(|x| x.2).sum();
    let cpu_summed = cpu_seconds(&apiserver) - cpu0;
    let cpu0 = cpu_seconds(&apiserver);
    let t = Instant::now();
    let parallel_objects: u64 =
        futures::future::join_all(paths.iter().map(|p| list_all(client, p)))
            .await
            .iter()
            .map(|x| x.0)
            .sum();
    let parallel = t.elapsed().as_secs_f64();
    let cpu_parallel = cpu_seconds(&apiserver) - cpu0;
    // The requests the recorder makes, read and dropped: what the apiserver
    // alone needs to send every object as streaming lists.
    let cpu0 = cpu_seconds(&apiserver);
    let t = Instant::now();
    let streamed: u64 = futures::future::join_all(paths.iter().map(|p| stream_all(client, p)))
        .await
        .iter()
        .sum();
    let streaming = t.elapsed().as_secs_f64();
    let cpu_streaming = cpu_seconds(&apiserver) - cpu0;
    per_type.sort_by(|a, b| b.0.total_cmp(&a.0));
    let slowest: Vec<String> = per_type
        .iter()
        .take(5)
        .map(|(s, n, _, p)| format!("{p} {n} in {s:.2}s"))
        .collect();
    println!(
        "LIST {label}: {} types, {objects} objects, {:.1} MiB of JSON: summed {summed:.2}s (kube-apiserver CPU {cpu_summed:.2}s), \
         parallel {parallel:.2}s ({parallel_objects} objects, CPU {cpu_parallel:.2}s), \
         streaming lists in parallel {streaming:.2}s ({streamed} objects, CPU {cpu_streaming:.2}s); slowest: {}",
        paths.len(),
        bytes as f64 / 1048576.0,
        slowest.join(", ")
    );
    (summed, parallel, objects)
}

/// Resources whose position the recorder has committed, read from its recording.
fn positions(db: &std::path::Path) -> BTreeSet<String> {
    let Ok(conn) =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
    else {
        return BTreeSet::new();
    };
    let Ok(mut stmt) = conn.prepare("SELECT resource FROM watch_positions") else {
        return BTreeSet::new();
    };
    let have: BTreeSet<String> = stmt
        .query_map([], |r| r.get::<_, String>(0))
        .map(|rows| rows.filter_map(Result::ok).collect())
        .unwrap_or_default();
    have
}

/// The pid of the process named `comm` (the local kube-apiserver), if one runs.
fn pid_of(comm: &str) -> Option<String> {
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let name = e.file_name().to_string_lossy().to_string();
        let c = std::fs::read_to_string(format!("/proc/{name}/comm")).ok()?;
        (c.trim() == comm).then_some(name)
    })
}

/// Resident memory by kind of mapping, from `/proc/PID/smaps`: `[heap]` is
/// glibc's (SQLite allocates with the C library's malloc), anonymous mappings
/// are mostly mimalloc's (the Rust side), files are the binary and libraries.
fn rss_by_mapping(pid: &str) -> String {
    let smaps = std::fs::read_to_string(format!("/proc/{pid}/smaps")).unwrap_or_default();
    let mut sums: std::collections::BTreeMap<&str, f64> = Default::default();
    let mut kind = "anonymous";
    for line in smaps.lines() {
        let mut fields = line.split_whitespace();
        let first = fields.next().unwrap_or("");
        if first.contains('-') && first.chars().all(|c| c.is_ascii_hexdigit() || c == '-') {
            kind = match fields.nth(4) {
                None => "anonymous",
                Some("[heap]") => "[heap]",
                Some("[stack]") => "[stack]",
                Some(p) if p.starts_with('/') => "files",
                Some(_) => "other",
            };
        } else if first == "Rss:" {
            let kb: f64 = fields.next().and_then(|v| v.parse().ok()).unwrap_or(0.0);
            *sums.entry(kind).or_default() += kb / 1024.0;
        }
    }
    sums.iter()
        .map(|(k, v)| format!("{k} {v:.1}"))
        .collect::<Vec<_>>()
        .join(", ")
}

async fn cleanup(client: &Client) {
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let t = Instant::now();
    let _ = namespaces.delete(NS, &DeleteParams::default()).await;
    // NB: the namespace first, and gone, before the CRDs. Deleting both at once
    // left custom resources in etcd that a CRD of the same name showed again
    // in the next run (seen here: 9 objects per CRD from the run before).
    // Waiting also leaves the cluster as it was for the next run or test.
    while t.elapsed() < Duration::from_secs(600) {
        if namespaces.get_opt(NS).await.ok().flatten().is_none() {
            break;
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
    println!(
        "namespace {NS} gone after {:.1}s",
        t.elapsed().as_secs_f64()
    );
    let _ = crds
        .delete_collection(
            &DeleteParams::default(),
            &ListParams::default().labels(LABEL),
        )
        .await;
    while t.elapsed() < Duration::from_secs(900) {
        let crds_left = crds
            .list_metadata(&ListParams::default().labels(LABEL))
            .await
            .map(|l| l.items.len())
            .unwrap_or(0);
        if crds_left == 0 {
            println!("and the CRDs after {:.1}s", t.elapsed().as_secs_f64());
            return;
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
    println!("cleanup still under way after 900 s: check namespace {NS} and CRDs labelled {LABEL}");
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let pods = flag(&args, "--pods", 10_000);
    let crds = flag(&args, "--crds", 30);
    let objects = flag(&args, "--objects", 20_000);
    let watch_seconds = flag(&args, "--watch-seconds", 30);
    let client = Client::try_default()
        .await
        .expect("KUBECONFIG pointing at the local cluster");
    if args.iter().any(|a| a == "--reuse") {
        println!("reusing namespace {NS} and the CRDs labelled {LABEL}");
    } else {
        create(&client, pods, crds, objects).await;
    }

    // The types the recorder will watch, chosen by its own code from the same discovery.
    let discovered = kubectl_diag::k8s::discovery::discover(&client)
        .await
        .expect("discovery");
    let types = kubectl_diag::record::types::select(&discovered, &[], &[]).unwrap();
    let names: Vec<String> = types.iter().map(ResourceType::full_name).collect();
    let custom = types
        .iter()
        .filter(|t| t.group.contains(".bench-whole."))
        .count();
    let others: Vec<&String> = names
        .iter()
        .filter(|n| !n.contains(".bench-whole."))
        .collect();
    println!(
        "the recorder's default types: {} ({custom} of them this benchmark's CRDs); the others: {}",
        types.len(),
        others
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    );
    let mut paths: Vec<String> = types.iter().map(list_path).collect();
    paths.push("/api/v1/events".into());
    let (summed_before, parallel_before, listed) = list_baseline(&client, &paths, "before").await;

    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("whole.db");
    let addr = support::free_local_addr();
    let bin = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/release/kubectl-diag");
    let log = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/record_whole.log");
    println!(
        "recorder started at {} (its -v log: {})",
        chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        log.display()
    );
    let apiserver = pid_of("kube-apiserver").unwrap_or_default();
    let apiserver_cpu = cpu_seconds(&apiserver);
    let start = Instant::now();
    let mut recorder = std::process::Command::new(&bin)
        .args(["record", "--quiet", "-v", "--listen", &addr])
        .arg("--db")
        .arg(&db)
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .expect("target/release/kubectl-diag: run `cargo build --release` first");
    let pid = recorder.id().to_string();
    let mut expected: BTreeSet<String> = names.iter().cloned().collect();
    expected.insert("events".into());
    // RSS every 100 ms while listing: where the peak falls, if it is high.
    let mut samples: Vec<(f64, f64, usize)> = Vec::new();
    // NB: `changes_total` counts changes as the writer applies them, before
    // their commit, which its window (docs: "Disk I/O") may hold up to 750 ms.
    let mut applied_all: Option<f64> = None;
    let recorded = loop {
        if applied_all.is_none()
            && metric(&addr, "kubectl_diag_changes_total").unwrap_or(0) >= listed
        {
            applied_all = Some(start.elapsed().as_secs_f64());
        }
        let rss = memory_mib(&pid, "VmRSS:");
        let have = positions(&db);
        samples.push((start.elapsed().as_secs_f64(), rss, have.len()));
        if expected.is_subset(&have) {
            break Some(start.elapsed().as_secs_f64());
        }
        if start.elapsed() > Duration::from_secs(600) {
            let missing: Vec<&String> = expected.difference(&have).collect();
            println!("after 600 s no position yet for: {missing:?}");
            break None;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let (cpu, apiserver_cpu) = (cpu_seconds(&pid), cpu_seconds(&apiserver) - apiserver_cpu);
    println!(
        "the writer had applied as many changes as the LIST held ({listed}) at {}",
        applied_all.map_or("(not before the last position)".to_string(), |t| format!(
            "{t:.2}s"
        ))
    );
    let versions = metric(&addr, "kubectl_diag_object_versions_stored_total").unwrap_or(0);
    let peak_listing = memory_mib(&pid, "VmHWM:");
    let trace: Vec<String> = samples
        .iter()
        .step_by(5)
        .map(|(t, m, n)| format!("{t:.1}s {m:.0}/{n}"))
        .collect();
    println!(
        "RSS (MiB) / types with a committed position, every 0.5 s while listing: {}",
        trace.join(", ")
    );
    if let Some(secs) = recorded {
        println!(
            "recorded: every one of {} types has a committed position {secs:.2}s after the recorder started; \
             {versions} object versions stored; peak RSS so far {peak_listing:.1} MiB; \
             CPU until then: recorder {cpu:.2}s, kube-apiserver {apiserver_cpu:.2}s",
            expected.len()
        );
        println!(
            "record / LIST: {:.2}x the parallel LIST ({parallel_before:.2}s), {:.2}x the summed LIST ({summed_before:.2}s) of {listed} objects",
            secs / parallel_before,
            secs / summed_before
        );
    }

    // NB: two figures for "steady": the largest RSS over the whole watch,
    // which includes the list's tail (the writer gives a burst's memory back
    // at its first quiet batch), and the largest from 5 s on, once settled.
    let (mut steady, mut settled) = (0.0f64, 0.0f64);
    let mut watch_trace = Vec::new();
    let watching = Instant::now();
    while watching.elapsed() < Duration::from_secs(watch_seconds) {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let rss = memory_mib(&pid, "VmRSS:");
        steady = steady.max(rss);
        if watching.elapsed() >= Duration::from_secs(5) {
            settled = settled.max(rss);
        }
        watch_trace.push(format!("{:.1}s {rss:.0}", watching.elapsed().as_secs_f64()));
    }
    println!(
        "RSS (MiB) while watching, every 0.5 s: {}",
        watch_trace.join(", ")
    );
    let last = memory_mib(&pid, "VmRSS:");
    let peak = memory_mib(&pid, "VmHWM:");
    println!(
        "RSS by mapping at the end of watching (MiB): {}",
        rss_by_mapping(&pid)
    );
    std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    recorder.wait().unwrap();
    println!(
        "watching for {watch_seconds}s: RSS max {steady:.1} MiB, max from 5 s on {settled:.1} MiB, at the end {last:.1} MiB; peak RSS {peak:.1} MiB"
    );

    let bytes = support::disk_bytes(&db);
    let conn =
        rusqlite::Connection::open_with_flags(&db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let (docs, doc_bytes): (i64, i64) = conn
        .query_row(
            "SELECT count(*), COALESCE(sum(length(doc)), 0) FROM spec_docs",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let objects_stored: i64 = conn
        .query_row("SELECT count(*) FROM objects", [], |r| r.get(0))
        .unwrap();
    println!(
        "recording: {:.1} MiB (file and WAL after a clean stop) for {objects_stored} objects; \
         spec_docs: {docs} rows, sum(length(doc)) {:.1} MiB = {:.0} % of the file",
        bytes as f64 / 1048576.0,
        doc_bytes as f64 / 1048576.0,
        100.0 * doc_bytes as f64 / bytes.max(1) as f64
    );
    // Pages per table and index, the indexes and page slack included.
    if let Ok(mut stmt) =
        conn.prepare("SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC LIMIT 10")
    {
        let rows: Vec<String> = stmt
            .query_map([], |r| {
                Ok(format!(
                    "{} {:.2}",
                    r.get::<_, String>(0)?,
                    r.get::<_, i64>(1)? as f64 / 1048576.0
                ))
            })
            .unwrap()
            .filter_map(Result::ok)
            .collect();
        println!(
            "largest tables and indexes (MiB of pages): {}",
            rows.join(", ")
        );
    }
    drop(conn);

    list_baseline(&client, &paths, "after").await;
    if args.iter().any(|a| a == "--keep") {
        println!("kept namespace {NS} and the CRDs labelled {LABEL}");
    } else {
        cleanup(&client).await;
    }
}
