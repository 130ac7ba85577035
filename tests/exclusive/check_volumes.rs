//! `check scheduling` explains "didn't match PersistentVolume's node
//! affinity" against the real scheduler: a claim bound to a volume in a zone
//! no Node is in, live and from the recording.
//!
//! NB: in `tests/exclusive`: run in parallel with the tests of
//! check_cluster it timed out (and so did their healthy-namespace test). Why
//! they interfere is not known yet.

use crate::support;

use std::time::Duration;

use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim, Pod};
use kube::Api;
use kube::api::{DeleteParams, PostParams};
use serde_json::{Value, json};
use support::{TestNamespace, diag, start_recorder, wait_for};

/// Deletes a cluster-scoped PersistentVolume when dropped (the namespace's
/// deletion takes only its claim).
struct DeleteVolume(String);

impl Drop for DeleteVolume {
    fn drop(&mut self) {
        let name = self.0.clone();
        support::delete_from_drop(move |client| async move {
            let api: Api<PersistentVolume> = Api::all(client);
            let _ = api.delete(&name, &DeleteParams::background()).await;
        });
    }
}

/// The S001 findings with a `volume` cause, once there are some.
fn volume_causes(db: &std::path::Path, args: &[&str]) -> Option<Vec<Value>> {
    let causes: Vec<Value> = support::s001_findings(db, args)?
        .iter()
        .flat_map(|f| {
            f["details"]["causes"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter(|c| c["kind"] == "volume")
        .collect();
    (!causes.is_empty()).then_some(causes)
}

/// A claim bound to a volume in a zone no Node is in: the real scheduler
/// says only "volume node affinity conflict"; check names the volume, its
/// zone and the Nodes lacking it, live and from the recording.
#[tokio::test]
async fn scheduling_names_the_volume_whose_zone_no_node_is_in() {
    let _alone = support::exclusive().await;
    let ns = TestNamespace::new("chk-vol").await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    let recorder = start_recorder(&db, &ns.name, &[], &format!("pods/{}", ns.name)).await;
    let pv_name = format!("{}-data", ns.name);
    let _cleanup = DeleteVolume(pv_name.clone());
    const ZONE: &str = "diag-test-nowhere-1a";
    let volumes: Api<PersistentVolume> = Api::all(ns.client.clone());
    let pv: PersistentVolume = serde_json::from_value(json!({
        "metadata": {"name": pv_name},
        "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                 "storageClassName": "diag-zonal", "persistentVolumeReclaimPolicy": "Retain",
                 "claimRef": {"namespace": ns.name, "name": "data"},
                 "hostPath": {"path": "/tmp/diag-zonal"},
                 "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                     {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [ZONE]}]}]}}}
    }))
    .unwrap();
    volumes.create(&PostParams::default(), &pv).await.unwrap();
    let claims: Api<PersistentVolumeClaim> = ns.api();
    let pvc: PersistentVolumeClaim = serde_json::from_value(json!({
        "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "diag-zonal", "volumeName": pv_name,
                 "resources": {"requests": {"storage": "1Gi"}}}
    }))
    .unwrap();
    claims.create(&PostParams::default(), &pvc).await.unwrap();
    let pods: Api<Pod> = ns.api();
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"name": "db"},
        "spec": {"tolerations": [{"operator": "Exists"}],
                 "containers": [{"name": "db", "image": "db:1"}],
                 "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]}
    }))
    .unwrap();
    pods.create(&PostParams::default(), &pod).await.unwrap();

    let want = format!(
        "volume {pv_name} (claim data) needs topology.kubernetes.io/zone={ZONE}: 3 of 3 nodes lack it ("
    );
    let live_db = dir.path().join("unused.db");
    let live = wait_for(Duration::from_secs(90), "a live volume cause", || {
        let (db, ns) = (live_db.clone(), ns.name.clone());
        async move { volume_causes(&db, &["-n", &ns]) }
    })
    .await;
    assert_eq!(live[0]["volume"], pv_name.as_str(), "{live:#?}");
    assert_eq!(live[0]["claim"], "data");
    assert_eq!(
        live[0]["requirement"],
        format!("topology.kubernetes.io/zone={ZONE}")
    );
    assert_eq!(live[0]["of_nodes"], 3);
    assert_eq!(live[0]["nodes"].as_array().unwrap().len(), 3);
    let out = diag(&live_db)
        .args(["check", "scheduling", "-n", &ns.name])
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains(&want), "{table}");

    // The recorder kept the claim's volume and the volume's node affinity.
    let db_arg = db.to_str().unwrap().to_string();
    let recorded = wait_for(Duration::from_secs(30), "a recorded volume cause", || {
        let (db, db_arg, ns) = (db.clone(), db_arg.clone(), ns.name.clone());
        async move { volume_causes(&db, &["--db", &db_arg, "-n", &ns]) }
    })
    .await;
    assert_eq!(recorded[0]["volume"], pv_name.as_str(), "{recorded:#?}");
    assert_eq!(recorded[0]["nodes"].as_array().unwrap().len(), 3);
    assert!(recorder.terminate().success());
}
