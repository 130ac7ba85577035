//! `timeline` with no recording at all (issue 29), against the real
//! cluster: the story the live objects still hold, each entry with its
//! certainty, and the cause on the first screen.

mod common;

use std::process::Command;
use std::time::Duration;

use common::{TestNamespace, apply, kubeconfig, kubectl, wait_until};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;

/// `kubectl-diag ARGS` with no recording anywhere: no --db, no
/// `KUBECTL_DIAG_DB`, and a data folder that holds none.
fn no_recording(data: &std::path::Path, args: &[&str]) -> (String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kubectl-diag"))
        .args(args)
        .env("KUBECONFIG", kubeconfig())
        .env_remove("KUBECTL_DIAG_DB")
        .env("XDG_DATA_HOME", data)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    );
    assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}\n{stdout}");
    (stdout, stderr)
}

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

#[tokio::test]
async fn a_rollout_with_no_recording_is_reconstructed_with_revisions_writers_and_its_cause() {
    let ns = TestNamespace::new("recon").await;
    let data = tempfile::tempdir().unwrap();
    let n = ns.name.as_str();
    apply(
        n,
        r#"apiVersion: apps/v1
kind: Deployment
metadata: {name: checkout}
spec:
  replicas: 2
  revisionHistoryLimit: 2
  selector: {matchLabels: {app: checkout}}
  template:
    metadata: {labels: {app: checkout}}
    spec: {containers: [{name: app, image: "shop:1"}]}
"#,
    );
    let deployments: kube::Api<Deployment> = ns.api();
    // NB: seconds apart, as revisions are: a manager's last write dates the newest one only.
    let step = |args: &[&str]| {
        std::thread::sleep(Duration::from_secs(3));
        let mut all = args.to_vec();
        all.extend(["-n", n]);
        kubectl(&all);
        now_ms()
    };
    let settled = || async {
        wait_until(Duration::from_secs(60), "the rollout to settle", || async {
            let d = deployments.get("checkout").await.unwrap();
            let s = d.status.unwrap_or_default();
            s.observed_generation == d.metadata.generation
                && s.updated_replicas == Some(2)
                && s.ready_replicas == Some(2)
                && s.replicas == Some(2)
        })
        .await
    };
    settled().await;
    step(&[
        "set",
        "image",
        "deploy/checkout",
        "app=shop:2",
        "--field-manager=alice-tool",
    ]);
    settled().await;
    step(&[
        "set",
        "image",
        "deploy/checkout",
        "app=shop:3",
        "--field-manager=ci-bot",
    ]);
    settled().await;
    step(&["rollout", "undo", "deploy/checkout"]);
    settled().await;
    step(&["rollout", "restart", "deploy/checkout"]);
    settled().await;
    // The bad rollout: its Pods stay in ImagePullBackOff (KWOK's never-ready stage).
    let broke = step(&[
        "patch",
        "deploy/checkout",
        "--field-manager=ci-bot",
        "--type=merge",
        "-p",
        r#"{"spec":{"template":{"metadata":{"labels":{"diag.test/never-ready":"true"}}}}}"#,
    ]);
    let pods: kube::Api<Pod> = ns.api();
    wait_until(
        Duration::from_secs(60),
        "a Pod in ImagePullBackOff",
        || async {
            pods.list(&Default::default())
                .await
                .unwrap()
                .items
                .iter()
                .any(|p| {
                    p.status
                        .as_ref()
                        .and_then(|s| s.container_statuses.as_ref())
                        .is_some_and(|cs| {
                            cs.iter().any(|c| {
                                c.state
                                    .as_ref()
                                    .and_then(|s| s.waiting.as_ref())
                                    .is_some_and(|w| {
                                        w.reason.as_deref() == Some("ImagePullBackOff")
                                    })
                            })
                        })
                })
        },
    )
    .await;

    let (table, _) = no_recording(data.path(), &["timeline", "deploy/checkout", "-n", n]);
    let screen: Vec<&str> = table.lines().take(25).collect();
    let screen = screen.join("\n");
    for expected in [
        "Reconstructed from the live cluster",
        "no recording.",
        "Events reach back to",
        "pruned)",
        "a rollback: this template was revision 2 before",
        "rollout restart at",
        "(by ci-bot)",
        "Why:",
        "ImagePullBackOff",
    ] {
        assert!(
            screen.contains(expected),
            "{expected:?} is not on the first screen:\n{screen}"
        );
    }
    assert!(
        table.contains("record from now on with `kubectl diag record`"),
        "{table}"
    );

    let (json, _) = no_recording(
        data.path(),
        &["timeline", "deploy/checkout", "-n", n, "-o", "json"],
    );
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["target"]["source"], "reconstructed");
    let entries = doc["entries"].as_array().unwrap();
    assert!(
        entries.iter().all(|e| e["certainty"].is_string()),
        "every entry says how certain it is"
    );
    // The bad revision, dated by its ReplicaSet's creation, against this test's clock.
    let revision = entries
        .iter()
        .rev()
        .find(|e| e["reason"] == "Revision")
        .expect("a Revision entry");
    assert_eq!(revision["certainty"], "inferred");
    assert_eq!(revision["writers"][0], "ci-bot");
    let at = chrono::DateTime::parse_from_rfc3339(revision["time"].as_str().unwrap())
        .unwrap()
        .timestamp_millis();
    assert!(
        (at - broke).abs() <= 2_000,
        "revision at {at}, patched at {broke}"
    );
    let pruned = entries
        .iter()
        .find(|e| e["reason"] == "RevisionsPruned")
        .unwrap();
    assert_eq!(pruned["certainty"], "gap");
}

/// No recording and no such object: an error that says both, exit 2.
#[tokio::test]
async fn no_recording_and_no_such_object_is_an_error_naming_both() {
    let ns = TestNamespace::new("recon-none").await;
    let data = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_kubectl-diag"))
        .args(["timeline", "deploy/nothing", "-n", &ns.name])
        .env("KUBECONFIG", kubeconfig())
        .env_remove("KUBECTL_DIAG_DB")
        .env("XDG_DATA_HOME", data.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("no Deployment named nothing") && err.contains("no recording at"),
        "{err}"
    );
}

/// `check --at T` with no recording: the live findings whose evidence
/// reaches back to T, and a note saying so (never a silent "No findings").
#[tokio::test]
async fn check_at_with_no_recording_answers_from_the_live_cluster_and_says_so() {
    let ns = TestNamespace::new("recon-at").await;
    let data = tempfile::tempdir().unwrap();
    let n = ns.name.as_str();
    apply(
        n,
        "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: none-allowed}\nspec: {hard: {pods: \"0\"}}\n",
    );
    kubectl(&[
        "wait",
        "-n",
        n,
        "--for=jsonpath={.status.hard.pods}=0",
        "--timeout=30s",
        "resourcequota/none-allowed",
    ]);
    apply(
        n,
        r#"apiVersion: apps/v1
kind: Deployment
metadata: {name: api}
spec:
  replicas: 1
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec: {containers: [{name: api, image: "api:1"}]}
"#,
    );
    let run = |at: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_kubectl-diag"))
            .args([
                "check",
                "progress",
                "-n",
                n,
                "--stuck-after",
                "1s",
                "--at",
                at,
            ])
            .env("KUBECONFIG", kubeconfig())
            .env_remove("KUBECTL_DIAG_DB")
            .env("XDG_DATA_HOME", data.path())
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).to_string(),
        )
    };
    tokio::time::sleep(Duration::from_secs(4)).await;
    let mut found = String::new();
    for _ in 0..30 {
        let (_, out) = run("1s");
        if out.contains("exceeded quota") {
            found = out;
            break;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    assert!(
        found.contains("exceeded quota none-allowed")
            && found.contains("no recording: --at")
            && found.contains("answered from the live cluster"),
        "{found}"
    );
    let (code, before) = run("2h");
    assert_eq!(code, Some(0), "{before}");
    assert!(
        before.contains("left out") && before.contains("unknown before"),
        "{before}"
    );
}
