//! The controller-manager stops, a Deployment's image is changed, and
//! nothing moves: no Event says why, because the component that would write
//! it is the one that is gone. `check` (live) and `timeline` with no
//! recording name it on their first screen from its stale leader Lease
//! (C001; issue 29's "the controller-manager stopped, an image changed").
//!
//! NB: in `tests/exclusive`, because it stops the shared
//! controller-manager: no other test may see the outage, and the guard starts it again (and waits
//! until it leads) even when an assertion fails.

use crate::support;

use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::coordination::v1::Lease;
use support::{TestNamespace, apply, cluster_script, kubectl, wait_until};

/// Starts the controller-manager again when dropped.
struct Restart;

impl Drop for Restart {
    fn drop(&mut self) {
        support::cluster_script_from_drop(
            &[
                "kubectl",
                "delete",
                "lease",
                "-n",
                "kube-system",
                "kube-controller-manager",
                "--ignore-not-found",
            ],
            &[],
        );
        support::cluster_script_from_drop(&["start-controller-manager"], &[]);
    }
}

fn first_screen(text: &str) -> String {
    text.lines().take(25).collect::<Vec<_>>().join("\n")
}

#[tokio::test]
async fn a_stopped_controller_manager_is_named_by_its_stale_lease_in_check_and_timeline() {
    let _alone = support::exclusive().await;
    let ns = TestNamespace::new("kcm-down").await;
    let n = ns.name.as_str();
    let data = tempfile::tempdir().unwrap();
    apply(
        n,
        r#"apiVersion: apps/v1
kind: Deployment
metadata: {name: checkout}
spec:
  replicas: 2
  selector: {matchLabels: {app: checkout}}
  template:
    metadata: {labels: {app: checkout}}
    spec: {containers: [{name: app, image: "shop:1"}]}
"#,
    );
    let deployments: kube::Api<Deployment> = ns.api();
    wait_until(
        Duration::from_secs(60),
        "the Deployment to be ready",
        || async {
            let d = deployments.get("checkout").await.unwrap();
            let s = d.status.unwrap_or_default();
            s.observed_generation == d.metadata.generation && s.ready_replicas == Some(2)
        },
    )
    .await;
    let out = cluster_script(&["stop-controller-manager"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _restart = Restart;
    // NB: the test cluster runs without leader election (other tests restart
    // its apiserver, which makes a leader exit), so the Lease a stopped
    // leader leaves behind is written here as it would have left it.
    let leases: kube::Api<Lease> = kube::Api::namespaced(ns.client.clone(), "kube-system");
    let duration = 15u64;
    let renewed = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
    let lease: Lease = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "kube-controller-manager", "namespace": "kube-system"},
        "spec": {"holderIdentity": "cp-1_test", "leaseDurationSeconds": duration,
                 "acquireTime": renewed, "renewTime": renewed}
    }))
    .unwrap();
    let _ = leases
        .delete("kube-controller-manager", &Default::default())
        .await;
    leases.create(&Default::default(), &lease).await.unwrap();
    kubectl(&[
        "set",
        "image",
        "deploy/checkout",
        "app=shop:2",
        "--field-manager=ci-bot",
        "-n",
        n,
    ]);
    // Stale once twice its duration (at least 30 s) has passed without a renewal.
    std::thread::sleep(Duration::from_secs((2 * duration).max(30) + 3));
    let d = deployments.get("checkout").await.unwrap();
    assert!(
        d.status.unwrap().observed_generation < d.metadata.generation,
        "nothing observed the change while the controller-manager was stopped"
    );

    // Live check: C001 first, and the Deployment's stall names it.
    let (code, table, stderr) = support::diag_no_recording(data.path(), &["check", "-n", n]);
    assert_eq!(code, Some(1), "{stderr}\n{table}");
    let screen = first_screen(&table);
    for expected in [
        "C001",
        "kube-controller-manager has not renewed its Lease kube-system/kube-controller-manager",
        "it is not running, or cannot reach the apiserver",
    ] {
        assert!(
            screen.contains(expected),
            "{expected:?} not on the first screen:\n{screen}"
        );
    }
    let (_, json, _) = support::diag_no_recording(data.path(), &["check", "-n", n, "-o", "json"]);
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    let findings = report["findings"].as_array().unwrap();
    assert_eq!(findings[0]["code"], "C001", "{json}");
    assert_eq!(findings[0]["severity"], "error", "{json}");

    // The timeline with no recording: the change by ci-bot, and why nothing followed.
    let (code, table, stderr) =
        support::diag_no_recording(data.path(), &["timeline", "deploy/checkout", "-n", n]);
    assert_eq!(code, Some(0), "{stderr}\n{table}");
    let screen = first_screen(&table);
    for expected in [
        "Reconstructed from the live cluster",
        "ci-bot",
        "Why:",
        "kube-controller-manager has not renewed its Lease",
    ] {
        assert!(
            screen.contains(expected),
            "{expected:?} not on the first screen:\n{screen}"
        );
    }
    let why = screen.lines().find(|l| l.contains("Why:")).unwrap();
    assert!(
        why.contains("kube-controller-manager has not renewed"),
        "{why}"
    );
}
