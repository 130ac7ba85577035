//! Live benchmark: the recorder's memory while it keeps the history of many
//! Pods. Creates `--pods N` Pods (default 10,000) bound to the KWOK nodes,
//! waits until KWOK reports them Running, then starts the release recorder and
//! measures how long it takes to record every Pod (a streaming list), its peak
//! RSS, and its RSS while watching afterwards. Not a test: it prints figures
//! for docs/performance.md. Needs `scripts/cluster up` and `cargo build --release`.
//!
//!   KUBECONFIG=target/cluster/kubeconfig cargo bench --bench history_pods -- [--pods 10000] [--watch-seconds 20] [--keep]
//!
//! `--keep` leaves the namespace and its Pods in place (to time `check` against them).

use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::core::v1::{Namespace, Pod};
use kube::api::{DeleteParams, ListParams, PostParams};
use kube::{Api, Client};

mod support;
use support::{create_namespace, flag, memory_mib, metric};

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

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let pods = flag(&args, "--pods", 10_000);
    let watch_seconds = flag(&args, "--watch-seconds", 20);
    let client = Client::try_default()
        .await
        .expect("KUBECONFIG pointing at the local cluster");
    let ns = format!("bench-pods-{}", std::process::id());
    let namespaces: Api<Namespace> = Api::all(client.clone());
    create_namespace(&client, &ns).await;
    let api: Api<Pod> = Api::namespaced(client.clone(), &ns);
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
    loop {
        // Metadata only: the benchmark must not load the apiserver more than needed.
        let running = api
            .list_metadata(&ListParams::default().fields("status.phase=Running"))
            .await
            .map(|l| l.items.len())
            .unwrap_or(0);
        if running >= created {
            break;
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
    println!("all Running after {:.1}s", t.elapsed().as_secs_f64());

    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("pods.db");
    let addr = support::free_local_addr();
    let bin = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/release/kubectl-diag");
    let mut recorder = std::process::Command::new(&bin)
        .args(["record", "--quiet", "--listen", &addr])
        .arg("--db")
        .arg(&db)
        .spawn()
        .expect("target/release/kubectl-diag: run `cargo build --release` first");
    let pid = recorder.id().to_string();
    let catch_up = Instant::now();
    while metric(&addr, "kubectl_diag_object_versions_stored_total").unwrap_or(0) < created as u64 {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    println!(
        "recorded {created} Pods in {:.1}s, peak RSS so far {:.1} MiB",
        catch_up.elapsed().as_secs_f64(),
        memory_mib(&pid, "VmHWM:")
    );
    let mut steady = 0.0f64;
    let watching = Instant::now();
    while watching.elapsed() < Duration::from_secs(watch_seconds) {
        tokio::time::sleep(Duration::from_millis(500)).await;
        steady = steady.max(memory_mib(&pid, "VmRSS:"));
    }
    let peak = memory_mib(&pid, "VmHWM:");
    std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    recorder.wait().unwrap();
    let bytes = std::fs::metadata(&db).map(|m| m.len()).unwrap_or(0);
    println!(
        "watching {created} Pods for {watch_seconds}s: RSS max {steady:.1} MiB; peak RSS {peak:.1} MiB; DB {:.1} MiB",
        bytes as f64 / 1048576.0
    );
    if args.iter().any(|a| a == "--keep") {
        println!("kept namespace {ns}");
    } else {
        let _ = namespaces.delete(&ns, &DeleteParams::default()).await;
    }
}
