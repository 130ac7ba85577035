//! `check scheduling` names the taint behind "node(s) had untolerated
//! taint(s)" (which the scheduler no longer names since 1.27), the Nodes that
//! carry it, and, from a recording, since when and by whom — live and with
//! `--db`, against the real scheduler.
//!
//! NB: in `tests/exclusive`, because it taints every Node of the shared
//! cluster: no other test may see the taint. A guard removes it however the test ends.

use crate::support;

use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kube::api::{DeleteParams, PostParams};
use serde_json::json;
use support::{TestNamespace, cluster_script, start_recorder, wait_for};

const TAINT: &str = "drill/maintenance=true:NoSchedule";

/// Removes the drill taint from every Node when dropped.
struct Untaint;

impl Drop for Untaint {
    fn drop(&mut self) {
        let _ = std::process::Command::new(support::repo_root().join("scripts/cluster"))
            .args(["kubectl", "taint", "nodes", "--all", "drill/maintenance-"])
            .env("DIAG_CLUSTER_DIR", support::kubeconfig().parent().unwrap())
            .output();
    }
}

#[tokio::test]
async fn the_untolerated_taint_is_named_with_its_nodes_and_its_writer() {
    let _alone = support::exclusive().await;
    let ns = TestNamespace::new("chk-taint").await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    let recorder = start_recorder(&db, &ns.name, &[], &format!("pods/{}", ns.name)).await;
    let _untaint = Untaint;
    // As an operator would: kubectl's own field manager is kubectl-taint.
    cluster_script(&["kubectl", "taint", "nodes", "--all", TAINT]);
    let pods: kube::Api<Pod> = ns.api();
    // NB: the scheduler places a Pod by its informers' view of the Nodes. Right after the
    // apiserver restarts of the test before (audit_policies_cluster), its Node watch can still be
    // re-listing: once (CI rehearsal of 3bad234) it bound the Pod 1.2 s after all three taints were
    // written, to a Node it still saw untainted. That is the precondition failing, not the check:
    // a Pod the scheduler binds is deleted and made again until one meets the taints.
    let mut attempt = 0;
    wait_for(
        Duration::from_secs(90),
        "a Pod that the scheduler finds no Node for (its view of the taints)",
        || {
            attempt += 1;
            let (pods, name) = (pods.clone(), format!("web-{attempt}"));
            async move {
                let pod: Pod = serde_json::from_value(json!({
                    "metadata": {"name": name},
                    "spec": {"containers": [{"name": "web", "image": "web:1"}]}
                }))
                .unwrap();
                pods.create(&PostParams::default(), &pod).await.unwrap();
                for _ in 0..40 {
                    tokio::time::sleep(Duration::from_millis(250)).await;
                    let now = pods.get(&name).await.unwrap();
                    let status = now.status.unwrap_or_default();
                    if now
                        .spec
                        .as_ref()
                        .and_then(|s| s.node_name.as_ref())
                        .is_some()
                    {
                        let _ = pods
                            .delete(&name, &DeleteParams::default().grace_period(0))
                            .await;
                        return None;
                    }
                    let unschedulable = status.conditions.unwrap_or_default().iter().any(|c| {
                        c.type_ == "PodScheduled" && c.reason.as_deref() == Some("Unschedulable")
                    });
                    if unschedulable {
                        return Some(());
                    }
                }
                None
            }
        },
    )
    .await;

    let live_db = dir.path().join("unused.db");
    let live = wait_for(Duration::from_secs(60), "a live S001", || {
        let (db, ns) = (live_db.clone(), ns.name.clone());
        async move { support::s001_findings(&db, &["-n", &ns]) }
    })
    .await;
    let summary = live[0]["summary"].as_str().unwrap();
    assert!(
        summary.contains(&format!("taint {TAINT} on 3 nodes (")),
        "{summary}"
    );
    let causes = &live[0]["details"]["causes"];
    assert_eq!(causes[0]["taint"], TAINT, "{causes:#}");
    assert_eq!(
        causes[0]["nodes"].as_array().unwrap().len(),
        3,
        "{causes:#}"
    );
    // kwok-large-tainted's own taint is untolerated too, on one Node.
    assert!(
        causes
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["taint"] == "dedicated=batch:NoSchedule"
                && c["nodes"] == json!(["kwok-large-tainted"])),
        "{causes:#}"
    );

    let db_arg = db.to_str().unwrap().to_string();
    let recorded = wait_for(Duration::from_secs(30), "a recorded S001", || {
        let db = db.clone();
        let db_arg = db_arg.clone();
        async move { support::s001_findings(&db, &["--db", &db_arg]) }
    })
    .await;
    let summary = recorded[0]["summary"].as_str().unwrap();
    assert!(
        summary.contains(&format!("taint {TAINT} on 3 nodes (")),
        "{summary}"
    );
    assert!(summary.contains(" by kubectl-taint"), "{summary}");
    let causes = &recorded[0]["details"]["causes"];
    assert_eq!(causes[0]["by"], json!(["kubectl-taint"]), "{causes:#}");
    assert!(causes[0]["since"].is_string(), "{causes:#}");
    assert!(recorder.terminate().success());
}
