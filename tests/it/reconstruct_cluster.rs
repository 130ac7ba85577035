//! `timeline` with no recording at all (issue 29), against the real
//! cluster: the story the live objects still hold, each entry with its
//! certainty, and the cause on the first screen.

use crate::support;

use std::process::Command;
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;
use support::{TestNamespace, apply, kubeconfig, kubectl, run_ok, wait_until};

/// `kubectl-diag ARGS` with no recording anywhere, which must succeed.
fn no_recording(data: &std::path::Path, args: &[&str]) -> (String, String) {
    let (code, stdout, stderr) = support::diag_no_recording(data, args);
    assert_eq!(code, Some(0), "{args:?}: {stderr}\n{stdout}");
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

fn entry_ms(e: &serde_json::Value) -> i64 {
    chrono::DateTime::parse_from_rfc3339(e["time"].as_str().unwrap())
        .unwrap()
        .timestamp_millis()
}

/// A StatefulSet's revisions are its ControllerRevisions: the image change
/// by ci-bot is a revision, dated by its ControllerRevision's creation.
#[tokio::test]
async fn a_statefulsets_image_change_with_no_recording_is_a_revision_from_its_controller_revisions()
{
    let ns = TestNamespace::new("recon-sts").await;
    let data = tempfile::tempdir().unwrap();
    let n = ns.name.as_str();
    apply(
        n,
        r#"apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 1
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: pg, image: "pg:1"}]}
"#,
    );
    let sets: kube::Api<k8s_openapi::api::apps::v1::StatefulSet> = ns.api();
    let rolled = |image: &'static str| {
        let sets = sets.clone();
        async move {
            wait_until(
                Duration::from_secs(90),
                "the StatefulSet to roll",
                || async {
                    let s = sets.get("db").await.unwrap();
                    let st = s.status.clone().unwrap_or_default();
                    st.observed_generation == s.metadata.generation
                        && st.ready_replicas == Some(1)
                        && st.updated_replicas == Some(1)
                        && st.current_revision == st.update_revision
                        && s.spec
                            .template
                            .spec
                            .as_ref()
                            .and_then(|p| p.containers[0].image.as_deref())
                            == Some(image)
                },
            )
            .await
        }
    };
    rolled("pg:1").await;
    std::thread::sleep(Duration::from_secs(3));
    kubectl(&[
        "set",
        "image",
        "sts/db",
        "pg=pg:2",
        "--field-manager=ci-bot",
        "-n",
        n,
    ]);
    let changed = now_ms();
    rolled("pg:2").await;

    let screen = first_screen(data.path(), &["timeline", "sts/db", "-n", n]);
    for expected in [
        "Revisions 1–2 kept",
        "(ControllerRevision db-",
        "image pg:1 → pg:2",
        "(by ci-bot)",
    ] {
        assert!(
            screen.contains(expected),
            "{expected:?} not on the first screen:\n{screen}"
        );
    }
    let (json, _) = no_recording(data.path(), &["timeline", "sts/db", "-n", n, "-o", "json"]);
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    let revision = doc["entries"]
        .as_array()
        .unwrap()
        .iter()
        .rfind(|e| e["reason"] == "Revision")
        .unwrap();
    assert_eq!(revision["certainty"], "inferred");
    assert!(
        (entry_ms(revision) - changed).abs() <= 2_000,
        "revision at {}, changed at {changed}",
        entry_ms(revision)
    );
}

/// A container whose status says 6 restarts, the last OOMKilled: one
/// termination is visible (exact, when it finished), five are a gap.
#[tokio::test]
async fn a_container_restarted_six_times_shows_its_last_termination_and_five_not_visible() {
    let ns = TestNamespace::new("recon-oom").await;
    let data = tempfile::tempdir().unwrap();
    let n = ns.name.as_str();
    apply(
        n,
        "apiVersion: v1\nkind: Pod\nmetadata: {name: worker}\nspec: {containers: [{name: app, image: \"worker:1\"}]}\n",
    );
    let pods: kube::Api<Pod> = ns.api();
    wait_until(Duration::from_secs(60), "the Pod to run", || async {
        pods.get("worker")
            .await
            .unwrap()
            .status
            .and_then(|s| s.phase)
            .as_deref()
            == Some("Running")
    })
    .await;
    let finished = chrono::Utc::now() - chrono::Duration::seconds(20);
    let started = finished - chrono::Duration::seconds(95);
    let ts = |t: chrono::DateTime<chrono::Utc>| t.format("%Y-%m-%dT%H:%M:%SZ").to_string();
    let patch = serde_json::json!({"status": {"containerStatuses": [{
        "name": "app", "image": "worker:1", "imageID": "", "ready": true, "started": true,
        "restartCount": 6,
        "state": {"running": {"startedAt": ts(finished)}},
        "lastState": {"terminated": {"reason": "OOMKilled", "exitCode": 137,
            "startedAt": ts(started), "finishedAt": ts(finished)}}
    }]}});
    kubectl(&[
        "patch",
        "pod/worker",
        "-n",
        n,
        "--subresource=status",
        "--type=merge",
        "-p",
        &patch.to_string(),
    ]);
    let screen = first_screen(data.path(), &["timeline", "pod/worker", "-n", n]);
    for expected in [
        "container app terminated: OOMKilled, exit code 137, ran 1m",
        "5 restarts not visible",
    ] {
        assert!(
            screen.contains(expected),
            "{expected:?} not on the first screen:\n{screen}"
        );
    }
    let (json, _) = no_recording(
        data.path(),
        &["timeline", "pod/worker", "-n", n, "-o", "json"],
    );
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    let entries = doc["entries"].as_array().unwrap();
    let last = entries
        .iter()
        .find(|e| e["reason"] == "Terminated")
        .unwrap();
    assert_eq!(last["certainty"], "exact");
    // Second precision on the wire: within 2 s of what was written.
    assert!((entry_ms(last) - finished.timestamp_millis()).abs() <= 2_000);
    let gap = entries
        .iter()
        .find(|e| e["reason"] == "RestartsNotVisible")
        .unwrap();
    assert_eq!(gap["certainty"], "gap");
}

/// A Pod no Node fits for a while, then placed once a Node gets the label it
/// asks for: the first unschedulable moment and the bind are both exact.
#[tokio::test]
async fn a_pod_unschedulable_then_placed_has_its_first_failure_and_its_bind_exact() {
    let ns = TestNamespace::new("recon-sched").await;
    let data = tempfile::tempdir().unwrap();
    let n = ns.name.as_str();
    let label = format!("diag.test/recon-{}", &n[n.len() - 6..]);
    apply(
        n,
        &format!(
            "apiVersion: v1\nkind: Pod\nmetadata: {{name: placed}}\nspec:\n  nodeSelector: {{\"{label}\": \"yes\"}}\n  containers: [{{name: app, image: \"app:1\"}}]\n"
        ),
    );
    let created = now_ms();
    let pods: kube::Api<Pod> = ns.api();
    wait_until(
        Duration::from_secs(30),
        "the Pod to be unschedulable",
        || async {
            pods.get("placed")
                .await
                .unwrap()
                .status
                .and_then(|s| s.conditions)
                .is_some_and(|cs| {
                    cs.iter().any(|c| {
                        c.type_ == "PodScheduled" && c.reason.as_deref() == Some("Unschedulable")
                    })
                })
        },
    )
    .await;
    std::thread::sleep(Duration::from_secs(8));
    struct Unlabel(String);
    impl Drop for Unlabel {
        fn drop(&mut self) {
            support::cluster_script_from_drop(
                &[
                    "kubectl",
                    "label",
                    "node",
                    "kwok-small",
                    &format!("{}-", self.0),
                ],
                &[],
            );
        }
    }
    kubectl(&["label", "node", "kwok-small", &format!("{label}=yes")]);
    let _unlabel = Unlabel(label.clone());
    let labelled = now_ms();
    wait_until(Duration::from_secs(60), "the Pod to be placed", || async {
        pods.get("placed")
            .await
            .unwrap()
            .spec
            .and_then(|s| s.node_name)
            .is_some()
    })
    .await;

    let screen = first_screen(data.path(), &["timeline", "pod/placed", "-n", n]);
    for expected in ["FailedScheduling", "bound to node kwok-small"] {
        assert!(
            screen.contains(expected),
            "{expected:?} not on the first screen:\n{screen}"
        );
    }
    let (json, _) = no_recording(
        data.path(),
        &["timeline", "pod/placed", "-n", n, "-o", "json"],
    );
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    let entries = doc["entries"].as_array().unwrap();
    let failed = entries
        .iter()
        .find(|e| e["reason"] == "FailedScheduling")
        .unwrap();
    assert_eq!(failed["certainty"], "exact");
    assert!(
        (entry_ms(failed) - created).abs() <= 2_000,
        "first FailedScheduling at {}, created at {created}",
        entry_ms(failed)
    );
    let bound = entries.iter().find(|e| e["reason"] == "Bound").unwrap();
    assert_eq!(bound["certainty"], "exact");
    assert!(
        (entry_ms(bound) - labelled).abs() <= 2_000,
        "bound at {}, node labelled at {labelled}",
        entry_ms(bound)
    );
}

/// A recording that exists but never saw the object (it recorded another
/// namespace): the live cluster's story, saying the recording does not hold it.
#[tokio::test]
async fn an_object_the_recording_does_not_hold_is_reconstructed_from_the_live_cluster() {
    let ns = TestNamespace::new("recon-other").await;
    let elsewhere = TestNamespace::new("recon-elsewhere").await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("other.db");
    let out = Command::new(env!("CARGO_BIN_EXE_kubectl-diag"))
        .args(["record", "--once", "-n", &elsewhere.name, "--db"])
        .arg(&db)
        .env("KUBECONFIG", kubeconfig())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let n = ns.name.as_str();
    apply(
        n,
        r#"apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: "web:1"}]}
"#,
    );
    let out = Command::new(env!("CARGO_BIN_EXE_kubectl-diag"))
        .args(["timeline", "deploy/web", "-n", n, "--db"])
        .arg(&db)
        .env("KUBECONFIG", kubeconfig())
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let first = table.lines().next().unwrap_or_default();
    assert!(
        first.starts_with(&format!("Not in the recording {}.", db.display()))
            && first.contains("Reconstructed from the live cluster"),
        "{table}"
    );
    assert!(table.contains("Deployment/web"), "{table}");
}

/// `changes` with no recording: the kept revisions and each field manager's
/// last write, from the live objects, each with its certainty.
#[tokio::test]
async fn changes_with_no_recording_lists_revisions_and_last_writes_with_their_certainty() {
    let ns = TestNamespace::new("recon-changes").await;
    let data = tempfile::tempdir().unwrap();
    let n = ns.name.as_str();
    apply(
        n,
        r#"apiVersion: apps/v1
kind: Deployment
metadata: {name: cart}
spec:
  replicas: 1
  selector: {matchLabels: {app: cart}}
  template:
    metadata: {labels: {app: cart}}
    spec: {containers: [{name: app, image: "cart:1"}]}
"#,
    );
    let deployments: kube::Api<Deployment> = ns.api();
    let settled = |image: &'static str| {
        let deployments = deployments.clone();
        async move {
            wait_until(Duration::from_secs(60), "the rollout to settle", || async {
                let d = deployments.get("cart").await.unwrap();
                let s = d.status.clone().unwrap_or_default();
                s.observed_generation == d.metadata.generation
                    && s.updated_replicas == s.replicas
                    && d.spec
                        .template
                        .spec
                        .as_ref()
                        .and_then(|p| p.containers[0].image.as_deref())
                        == Some(image)
            })
            .await
        }
    };
    settled("cart:1").await;
    std::thread::sleep(Duration::from_secs(3));
    kubectl(&[
        "set",
        "image",
        "deploy/cart",
        "app=cart:2",
        "--field-manager=ci-bot",
        "-n",
        n,
    ]);
    let changed = now_ms();
    settled("cart:2").await;

    let screen = first_screen(data.path(), &["changes", "-n", n, "--since", "10m"]);
    for expected in [
        "Reconstructed from the live cluster",
        "CERTAINTY",
        "revision 2 (ReplicaSet cart-",
        "image cart:1 → cart:2",
        "ci-bot",
        "inferred",
        "last write by",
    ] {
        assert!(
            screen.contains(expected),
            "{expected:?} not on the first screen:\n{screen}"
        );
    }
    let (json, _) = no_recording(
        data.path(),
        &["changes", "-n", n, "--since", "10m", "-o", "json"],
    );
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["source"], "reconstructed");
    let items = doc["items"].as_array().unwrap();
    assert!(
        items
            .iter()
            .all(|i| i["certainty"].is_string() && i["rule"].is_string())
    );
    let revision = items
        .iter()
        .find(|i| i["change"].as_str().unwrap().starts_with("revision 2"))
        .unwrap();
    assert_eq!(revision["by"][0], "ci-bot");
    assert!((entry_ms(revision) - changed).abs() <= 2_000, "{revision}");
}

/// A recording that begins after its object was made: what came before is
/// completed from the live cluster, each entry labelled (issue 29, "a
/// recording that does not reach back far enough").
#[tokio::test]
async fn a_recording_that_starts_late_is_completed_from_the_live_cluster() {
    let ns = TestNamespace::new("recon-late").await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("late.db");
    let n = ns.name.as_str();
    apply(
        n,
        r#"apiVersion: apps/v1
kind: Deployment
metadata: {name: late}
spec:
  replicas: 1
  selector: {matchLabels: {app: late}}
  template:
    metadata: {labels: {app: late}}
    spec: {containers: [{name: app, image: "late:1"}]}
"#,
    );
    let created = now_ms();
    let deployments: kube::Api<Deployment> = ns.api();
    let settled = |image: &'static str| {
        let deployments = deployments.clone();
        async move {
            wait_until(Duration::from_secs(60), "the rollout to settle", || async {
                let d = deployments.get("late").await.unwrap();
                let s = d.status.clone().unwrap_or_default();
                let doc = serde_json::to_value(&d).unwrap();
                doc["spec"]["template"]["spec"]["containers"][0]["image"] == image
                    && s.observed_generation == d.metadata.generation
                    && s.updated_replicas == Some(1)
                    && s.ready_replicas == Some(1)
            })
            .await
        }
    };
    settled("late:1").await;
    std::thread::sleep(Duration::from_secs(2));
    kubectl(&[
        "set",
        "image",
        "deploy/late",
        "app=late:2",
        "--field-manager=ci-bot",
        "-n",
        n,
    ]);
    let changed = now_ms();
    settled("late:2").await;
    // The recording starts well after both.
    let wait = (created + 12_000 - now_ms()).max(0) as u64;
    std::thread::sleep(Duration::from_millis(wait));
    run_ok(support::diag(&db).args(["record", "--once", "-n", n]));
    let run = |format: &str| {
        let out =
            run_ok(support::diag(&db).args(["timeline", "deploy/late", "-n", n, "-o", format]));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let table = run("table");
    let first = table.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("The recording first saw it at ")
            && first.contains("reconstructed from the live cluster"),
        "{table}"
    );
    // Before the recording: the second revision, its image change and its writer.
    let revision = table
        .lines()
        .find(|l| l.contains(" Revision ") && l.contains("late:1 → late:2"))
        .unwrap_or_else(|| panic!("no revision 2 line:\n{table}"));
    assert!(revision.contains("ci-bot"), "{table}");
    assert!(
        revision.contains("inferred") || revision.contains("exact"),
        "{table}"
    );
    // And what the recording holds is labelled so.
    assert!(table.contains(" recorded "), "{table}");

    let doc: serde_json::Value = serde_json::from_str(&run("json")).unwrap();
    assert!(
        doc["target"]["completed"]
            .as_str()
            .is_some_and(|s| s.starts_with("The recording first saw it")),
        "{doc}"
    );
    let entries = doc["entries"].as_array().unwrap();
    let rev = entries
        .iter()
        .find(|e| e["reason"] == "Revision" && e["message"].as_str().unwrap().contains("late:2"))
        .unwrap_or_else(|| panic!("no Revision entry: {doc}"));
    let at = chrono::DateTime::parse_from_rfc3339(rev["time"].as_str().unwrap())
        .unwrap()
        .timestamp_millis();
    assert!(
        (at - changed).abs() <= 2_000,
        "revision 2 at {at}, changed at {changed}"
    );
    assert!(rev["certainty"].is_string(), "{rev}");
    // Reconstructed entries come only from before the recording first saw it.
    let note = doc["target"]["completed"].as_str().unwrap();
    let seen = note
        .strip_prefix("The recording first saw it at ")
        .and_then(|rest| rest.split(';').next())
        .unwrap_or_else(|| panic!("{note}"));
    let seen = chrono::DateTime::parse_from_rfc3339(seen)
        .unwrap()
        .timestamp_millis();
    for e in entries.iter().filter(|e| e["certainty"].is_string()) {
        let at = chrono::DateTime::parse_from_rfc3339(e["time"].as_str().unwrap())
            .unwrap()
            .timestamp_millis();
        assert!(
            at < seen,
            "a reconstructed entry after the recording began: {e}"
        );
    }
}

/// The first 25 lines of `timeline ARGS` with no recording.
fn first_screen(data: &std::path::Path, args: &[&str]) -> String {
    let (table, _) = no_recording(data, args);
    table.lines().take(25).collect::<Vec<_>>().join("\n")
}

/// A paused Deployment whose image was changed: no ReplicaSet comes, and
/// the reason is the pause the Deployment states (Progressing=Unknown,
/// DeploymentPaused), not a missing controller.
#[tokio::test]
async fn a_paused_rollout_is_explained_by_the_pause_with_no_recording() {
    let ns = TestNamespace::new("recon-paused").await;
    let data = tempfile::tempdir().unwrap();
    let n = ns.name.as_str();
    apply(
        n,
        r#"apiVersion: apps/v1
kind: Deployment
metadata: {name: held}
spec:
  replicas: 2
  selector: {matchLabels: {app: held}}
  template:
    metadata: {labels: {app: held}}
    spec: {containers: [{name: app, image: "held:1"}]}
"#,
    );
    let deployments: kube::Api<Deployment> = ns.api();
    wait_until(Duration::from_secs(60), "the rollout to settle", || async {
        let d = deployments.get("held").await.unwrap();
        let s = d.status.unwrap_or_default();
        s.ready_replicas == Some(2) && s.updated_replicas == Some(2)
    })
    .await;
    kubectl(&["rollout", "pause", "deploy/held", "-n", n]);
    kubectl(&[
        "set",
        "image",
        "deploy/held",
        "app=held:2",
        "--field-manager=ci-bot",
        "-n",
        n,
    ]);
    wait_until(
        Duration::from_secs(30),
        "the pause to be observed",
        || async {
            let d = deployments.get("held").await.unwrap();
            let observed = d.status.as_ref().and_then(|s| s.observed_generation);
            observed == d.metadata.generation
                && d.status
                    .unwrap_or_default()
                    .conditions
                    .unwrap_or_default()
                    .iter()
                    .any(|c| {
                        c.type_.as_deref() == Some("Progressing")
                            && c.reason.as_deref() == Some("DeploymentPaused")
                    })
        },
    )
    .await;
    let screen = first_screen(data.path(), &["timeline", "deploy/held", "-n", n]);
    let why = screen
        .lines()
        .find(|l| l.starts_with("Why:"))
        .unwrap_or_else(|| panic!("no Why: line on the first screen:\n{screen}"));
    assert!(why.contains("paused"), "{screen}");
    assert!(
        screen.contains("held:1 → held:2") && screen.contains("ci-bot"),
        "{screen}"
    );
}

/// A StatefulSet whose claim asks for a StorageClass that does not exist:
/// its Pod waits unscheduled, and why is stated one level further down, by
/// the claim's own Warning.
#[tokio::test]
async fn a_claim_of_a_missing_storage_class_is_named_with_no_recording() {
    let ns = TestNamespace::new("recon-pvc").await;
    let data = tempfile::tempdir().unwrap();
    let n = ns.name.as_str();
    apply(
        n,
        r#"apiVersion: apps/v1
kind: StatefulSet
metadata: {name: store}
spec:
  replicas: 1
  serviceName: store
  selector: {matchLabels: {app: store}}
  template:
    metadata: {labels: {app: store}}
    spec: {containers: [{name: app, image: "store:1"}]}
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      accessModes: [ReadWriteOnce]
      storageClassName: fast-missing
      resources: {requests: {storage: 1Gi}}
"#,
    );
    let pods: kube::Api<Pod> = ns.api();
    wait_until(
        Duration::from_secs(60),
        "the Pod to be unschedulable",
        || async {
            pods.get_opt("store-0")
                .await
                .ok()
                .flatten()
                .and_then(|p| p.status)
                .and_then(|s| s.conditions)
                .is_some_and(|cs| {
                    cs.iter()
                        .any(|c| c.type_ == "PodScheduled" && c.status == "False")
                })
        },
    )
    .await;
    // The claim's Warning comes from the persistent-volume controller.
    wait_until(Duration::from_secs(60), "the claim's Warning", || async {
        let events: kube::Api<k8s_openapi::api::core::v1::Event> = ns.api();
        events
            .list(&Default::default())
            .await
            .map(|l| {
                l.items.iter().any(|e| {
                    e.involved_object.kind.as_deref() == Some("PersistentVolumeClaim")
                        && e.type_.as_deref() == Some("Warning")
                })
            })
            .unwrap_or(false)
    })
    .await;
    let screen = first_screen(data.path(), &["timeline", "sts/store", "-n", n]);
    assert!(screen.contains("fast-missing"), "{screen}");
    let why = screen
        .lines()
        .find(|l| l.starts_with("Why:"))
        .unwrap_or_else(|| panic!("no Why: line on the first screen:\n{screen}"));
    assert!(why.contains("fast-missing"), "{screen}");
}

/// A suspended CronJob: nothing is broken, and nothing runs; the first
/// screen says why (its own `spec.suspend`), with no recording.
#[tokio::test]
async fn a_suspended_cronjob_says_it_is_suspended_with_no_recording() {
    let ns = TestNamespace::new("recon-cron").await;
    let data = tempfile::tempdir().unwrap();
    let n = ns.name.as_str();
    apply(
        n,
        r#"apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly}
spec:
  schedule: "* * * * *"
  suspend: true
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: c, image: "job:1"}]
"#,
    );
    let screen = first_screen(data.path(), &["timeline", "cronjob/nightly", "-n", n]);
    let stopped = screen
        .lines()
        .find(|l| l.starts_with("Stopped:"))
        .unwrap_or_else(|| panic!("no Stopped: line on the first screen:\n{screen}"));
    assert!(
        stopped.contains("suspended (spec.suspend: true)") && stopped.contains("never scheduled"),
        "{screen}"
    );
}

/// The HPA that scales a Deployment is part of its story with no
/// recording: its conditions (here no metrics server: ScalingActive=False,
/// the first screen's Check line) and its last scale, dated by
/// `status.lastScaleTime` (written here as the HPA controller would).
#[tokio::test]
async fn an_hpa_without_metrics_and_its_last_scale_are_in_the_story_with_no_recording() {
    let ns = TestNamespace::new("recon-hpa").await;
    let data = tempfile::tempdir().unwrap();
    let n = ns.name.as_str();
    apply(
        n,
        r#"apiVersion: apps/v1
kind: Deployment
metadata: {name: api}
spec:
  replicas: 2
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec: {containers: [{name: app, image: "api:1", resources: {requests: {cpu: 100m}}}]}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: api}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: api}
  minReplicas: 2
  maxReplicas: 5
  metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}}]
"#,
    );
    let hpas: kube::Api<k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler> = ns.api();
    wait_until(
        Duration::from_secs(60),
        "the HPA's ScalingActive",
        || async {
            hpas.get("api")
                .await
                .ok()
                .and_then(|h| h.status)
                .and_then(|s| s.conditions)
                .is_some_and(|cs| cs.iter().any(|c| c.type_ == "ScalingActive"))
        },
    )
    .await;
    std::thread::sleep(Duration::from_secs(2));
    let scaled = chrono::Utc::now() - chrono::Duration::seconds(1);
    let scaled_at = scaled.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    hpas.patch_status(
        "api",
        &kube::api::PatchParams::default(),
        &kube::api::Patch::Merge(serde_json::json!({"status": {"lastScaleTime": scaled_at}})),
    )
    .await
    .unwrap();
    let screen = first_screen(data.path(), &["timeline", "deploy/api", "-n", n]);
    let check = screen
        .lines()
        .find(|l| l.starts_with("Check:") && l.contains("HorizontalPodAutoscaler/api"))
        .unwrap_or_else(|| panic!("no Check: line of the HPA:\n{screen}"));
    assert!(
        check.contains("ScalingActive=False") && check.contains("FailedGetResourceMetric"),
        "{screen}"
    );
    let (json, _) = no_recording(
        data.path(),
        &["timeline", "deploy/api", "-n", n, "-o", "json"],
    );
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    let last = doc["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["reason"] == "LastScale")
        .unwrap_or_else(|| panic!("no LastScale entry: {doc}"));
    assert_eq!(last["certainty"], "last", "{last}");
    assert_eq!(last["object"]["kind"], "HorizontalPodAutoscaler", "{last}");
    let at = chrono::DateTime::parse_from_rfc3339(last["time"].as_str().unwrap()).unwrap();
    // NB: the apiserver keeps lastScaleTime to the second.
    assert!(
        (at.timestamp() - scaled.timestamp()).abs() <= 1,
        "LastScale at {at}, written {scaled_at}"
    );
}

/// `kubectl ARGS` against the test cluster; false when it fails (the
/// apiserver may be restarting under another test).
fn kubectl_ok(args: &[&str]) -> bool {
    Command::new(support::repo_root().join("scripts/cluster"))
        .arg("kubectl")
        .args(args)
        .env("DIAG_CLUSTER_DIR", kubeconfig().parent().unwrap())
        .output()
        .unwrap()
        .status
        .success()
}

/// Issue 47, with no recording: a Deployment created with 3 replicas and
/// scaled to 0 through the scale subresource is not "created: replicas 0"
/// (exact), and its stop says how it was scaled and when the controller
/// acted; two `set image` and a `rollout undo` tell revision 4 (the reused
/// ReplicaSet of revision 2) after revision 3, dated by its scale-up, and
/// `Rollout:` is about that ReplicaSet, not the abandoned revision 3's.
#[tokio::test]
async fn with_no_recording_a_scale_to_zero_and_a_rollback_are_told_as_the_cluster_proves_them() {
    let ns = TestNamespace::new("recon-undo").await;
    let data = tempfile::tempdir().unwrap();
    let n = ns.name.as_str();
    let deployment = |name: &str, replicas: u32, image: &str| {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}}}\nspec:\n  replicas: {replicas}\n  selector: {{matchLabels: {{app: {name}}}}}\n  template:\n    metadata: {{labels: {{app: {name}}}}}\n    spec: {{containers: [{{name: app, image: \"{image}\"}}]}}\n"
        )
    };
    apply(n, &deployment("web", 3, "web:1"));
    apply(n, &deployment("shop", 1, "shop:1"));
    let deployments: kube::Api<Deployment> = ns.api();
    let settled = |name: &'static str, replicas: i32, image: &'static str| {
        let deployments = deployments.clone();
        async move {
            wait_until(Duration::from_secs(90), name, || async {
                let Ok(d) = deployments.get(name).await else {
                    return false;
                };
                let s = d.status.clone().unwrap_or_default();
                let now = d
                    .spec
                    .template
                    .spec
                    .as_ref()
                    .and_then(|p| p.containers[0].image.clone());
                now.as_deref() == Some(image)
                    && s.observed_generation == d.metadata.generation
                    && s.updated_replicas.unwrap_or(0) == replicas
                    && s.ready_replicas.unwrap_or(0) == replicas
                    && s.replicas.unwrap_or(0) == replicas
            })
            .await
        }
    };
    // NB: every step some seconds apart: creation times are whole seconds.
    let step = |args: &[&str]| {
        std::thread::sleep(Duration::from_secs(3));
        let mut all = args.to_vec();
        all.extend(["-n", n]);
        for _ in 0..30 {
            if kubectl_ok(&all) {
                return now_ms();
            }
            std::thread::sleep(Duration::from_secs(1));
        }
        panic!("kubectl {all:?} kept failing");
    };
    settled("web", 3, "web:1").await;
    step(&["scale", "deploy/web", "--replicas=0"]);
    settled("web", 0, "web:1").await;

    settled("shop", 1, "shop:1").await;
    step(&[
        "set",
        "image",
        "deploy/shop",
        "app=shop:2",
        "--field-manager=alice-tool",
    ]);
    settled("shop", 1, "shop:2").await;
    step(&[
        "set",
        "image",
        "deploy/shop",
        "app=shop:3",
        "--field-manager=ci-bot",
    ]);
    settled("shop", 1, "shop:3").await;
    std::thread::sleep(Duration::from_secs(3));
    let undo = now_ms();
    // NB: not retried blindly: a second undo would roll back the rollback.
    while !kubectl_ok(&["rollout", "undo", "deploy/shop", "-n", n]) {
        std::thread::sleep(Duration::from_secs(1));
        let current = deployments
            .get("shop")
            .await
            .ok()
            .and_then(|d| d.spec.template.spec?.containers[0].image.clone());
        if current.as_deref() == Some("shop:2") {
            break;
        }
    }
    settled("shop", 1, "shop:2").await;

    // 1. Nothing read from today's spec is stated as the creation's, exact;
    // the stop says how and when.
    let screen = first_screen(data.path(), &["timeline", "deploy/web", "-n", n]);
    assert!(!screen.contains("created: replicas"), "{screen}");
    assert!(
        !screen
            .lines()
            .any(|l| l.contains(" exact ") && l.contains("replicas 0")),
        "today's replicas stated as exact:\n{screen}"
    );
    let stopped = screen
        .lines()
        .find(|l| l.starts_with("Stopped:"))
        .unwrap_or_else(|| panic!("no Stopped: line on the first screen:\n{screen}"));
    for expected in [
        "scaled to 0 (spec.replicas: 0)",
        "via the scale subresource",
        "down from 3 to 0 at",
    ] {
        assert!(stopped.contains(expected), "{expected:?} not in {stopped}");
    }
    assert!(
        !stopped.contains("kubectl-client-side-apply"),
        "the creator is not who scaled it: {stopped}"
    );

    // 2. Revisions in their order, the rollback dated by its scale-up, and the
    // rollout about the reused ReplicaSet.
    let sets: kube::Api<k8s_openapi::api::apps::v1::ReplicaSet> = ns.api();
    let sets = sets.list(&Default::default()).await.unwrap().items;
    let revision_of = |number: &str| {
        sets.iter()
            .find(|r| {
                r.metadata
                    .annotations
                    .as_ref()
                    .and_then(|a| a.get("deployment.kubernetes.io/revision"))
                    .is_some_and(|r| r == number)
                    && r.metadata
                        .name
                        .as_deref()
                        .is_some_and(|n| n.starts_with("shop-"))
            })
            .and_then(|r| r.metadata.name.clone())
            .unwrap_or_else(|| panic!("no ReplicaSet of revision {number}"))
    };
    let reused = revision_of("4");
    let abandoned = revision_of("3");
    let screen = first_screen(data.path(), &["timeline", "deploy/shop", "-n", n]);
    let changes: Vec<&str> = screen
        .lines()
        .filter(|l| l.starts_with("Change:"))
        .collect();
    let at = |revision: &str| {
        changes
            .iter()
            .position(|l| l.contains(&format!("revision {revision} (ReplicaSet ")))
            .unwrap_or_else(|| panic!("no revision {revision} on the first screen:\n{screen}"))
    };
    assert!(at("1") < at("3") && at("3") < at("4"), "{screen}");
    let four = changes[at("4")];
    for expected in [
        reused.as_str(),
        "image shop:3 → shop:2",
        "a rollback: this template was revision 2 before",
        "dated by the deployment controller scaling it up from 0",
    ] {
        assert!(four.contains(expected), "{expected:?} not in {four}");
    }
    let rollout = screen
        .lines()
        .find(|l| l.starts_with("Rollout:"))
        .unwrap_or_else(|| panic!("no Rollout: line:\n{screen}"));
    assert!(
        rollout.contains(&format!("ReplicaSet {reused} (shop:2)")) && !rollout.contains(&abandoned),
        "{rollout}"
    );
    let (json, _) = no_recording(
        data.path(),
        &["timeline", "deploy/shop", "-n", n, "-o", "json"],
    );
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    let revision = |number: &str| {
        doc["entries"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| {
                e["reason"] == "Revision"
                    && e["message"]
                        .as_str()
                        .is_some_and(|m| m.starts_with(&format!("revision {number} ")))
            })
            .unwrap_or_else(|| panic!("no revision {number} in {json}"))
    };
    let (three, four) = (entry_ms(revision("3")), entry_ms(revision("4")));
    assert!(three < four, "revision 3 at {three}, revision 4 at {four}");
    assert!(
        (four - undo).abs() <= 5_000,
        "revision 4 at {four}, undone at {undo}"
    );
    assert_eq!(revision("4")["certainty"], "inferred");
}
