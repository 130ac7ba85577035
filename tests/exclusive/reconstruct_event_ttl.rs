//! Events expire: with the apiserver's `--event-ttl` short, the Events a
//! reconstruction read are gone a minute later. The coverage line moves,
//! what the objects themselves hold stays, and nothing is invented in the
//! Events' place (issue 29).
//!
//! NB: in `tests/exclusive`, because it restarts the shared apiserver
//! with another flag; and the guard restarts it with its usual flags.

use crate::support;

use std::process::Command;
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use support::{TestNamespace, apply, kubeconfig, wait_until};

const TTL_S: u64 = 20;

fn restart_apiserver(extra: &str) -> std::process::Output {
    let state = kubeconfig().parent().unwrap().to_path_buf();
    Command::new(support::repo_root().join("scripts/cluster"))
        .arg("restart-apiserver")
        .env("DIAG_CLUSTER_DIR", state)
        .env("DIAG_APISERVER_EXTRA_ARGS", extra)
        .output()
        .expect("running scripts/cluster")
}

/// Restarts the apiserver with its usual flags when dropped.
struct Usual;

impl Drop for Usual {
    fn drop(&mut self) {
        support::cluster_script_from_drop(
            &["restart-apiserver"],
            &[("DIAG_APISERVER_EXTRA_ARGS", "")],
        );
    }
}

fn timeline(data: &std::path::Path, args: &[&str]) -> String {
    let (code, stdout, stderr) = support::diag_no_recording(data, args);
    assert_eq!(code, Some(0), "{args:?}: {stderr}\n{stdout}");
    stdout
}

#[tokio::test]
async fn expired_events_move_the_coverage_line_and_nothing_is_invented() {
    let _alone = support::exclusive().await;
    let out = restart_apiserver(&format!("--event-ttl={TTL_S}s"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _usual = Usual;
    let ns = TestNamespace::new("recon-ttl").await;
    let n = ns.name.as_str();
    let data = tempfile::tempdir().unwrap();
    apply(
        n,
        r#"apiVersion: apps/v1
kind: Deployment
metadata: {name: shortlived}
spec:
  replicas: 1
  selector: {matchLabels: {app: shortlived}}
  template:
    metadata: {labels: {app: shortlived}}
    spec: {containers: [{name: app, image: "app:1"}]}
"#,
    );
    let deployments: kube::Api<Deployment> = ns.api();
    wait_until(
        Duration::from_secs(60),
        "the Deployment to be ready",
        || async {
            let d = deployments.get("shortlived").await.unwrap();
            d.status.and_then(|s| s.ready_replicas) == Some(1)
        },
    )
    .await;
    let args = ["timeline", "deploy/shortlived", "-n", n, "-o", "json"];
    let before: serde_json::Value = serde_json::from_str(&timeline(data.path(), &args)).unwrap();
    let events = |doc: &serde_json::Value| {
        doc["entries"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["entry"] == "event")
            .count()
    };
    let reasons = |doc: &serde_json::Value| {
        let mut r: Vec<String> = doc["entries"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["entry"] != "event")
            .map(|e| format!("{} {}", e["object"]["kind"], e["reason"]))
            .collect();
        r.sort();
        r
    };
    assert!(events(&before) > 0, "the rollout's Events: {before}");
    let header = before["target"]["reconstructed"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(header.contains("Events reach back to"), "{header}");

    // Past the TTL (and etcd's lease granularity): every Event of the rollout is gone.
    std::thread::sleep(Duration::from_secs(TTL_S + 15));
    let after: serde_json::Value = serde_json::from_str(&timeline(data.path(), &args)).unwrap();
    assert_eq!(events(&after), 0, "{after}");
    let header = after["target"]["reconstructed"].as_str().unwrap();
    assert!(
        header.contains("No Events are left"),
        "the coverage line moves: {header}"
    );
    // What the objects hold is told the same; nothing stands in for the Events.
    assert_eq!(reasons(&before), reasons(&after));
    let table = timeline(data.path(), &args[..4]);
    assert!(!table.contains("ScalingReplicaSet"), "{table}");
    assert!(
        table.contains("revision 1 (ReplicaSet shortlived-"),
        "{table}"
    );
}
