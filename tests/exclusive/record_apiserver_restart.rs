//! The apiserver goes away and comes back: the recorder recovers by itself,
//! loses nothing the apiserver still holds, and records the blind interval.
//!
//! NB: in `tests/exclusive`, because it restarts the shared apiserver: no
//! other test may see the outage.

use crate::support;

use std::process::Stdio;
use std::time::Duration;

use k8s_openapi::api::core::v1::Event;
use kube::Api;
use kube::api::PostParams;
use serde_json::json;
use support::{Background, TestNamespace, cluster_script, diag, run_ok, wait_until};

fn event(ns: &str, name: &str) -> Event {
    serde_json::from_value(json!({
        "metadata": {"name": name},
        "involvedObject": {"kind": "Pod", "name": "web-1", "namespace": ns, "apiVersion": "v1"},
        "reason": "Started", "type": "Normal", "message": "Started container web",
        "count": 1, "firstTimestamp": "2026-11-29T03:00:00Z", "lastTimestamp": "2026-11-29T03:00:00Z",
        "source": {"component": "kubelet"}
    }))
    .unwrap()
}

fn stored_names(db: &std::path::Path, ns: &str) -> Vec<String> {
    if !db.exists() {
        return Vec::new();
    }
    let out = run_ok(diag(db).arg("export"));
    let mut names: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|l| l["event"]["namespace"] == ns)
        .map(|l| l["event"]["name"].as_str().unwrap().to_string())
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn recorder_survives_an_apiserver_restart_and_records_the_gap() {
    let _alone = support::exclusive().await;
    let ns = TestNamespace::new("rec-restart").await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    let events: Api<Event> = ns.api();
    events
        .create(&PostParams::default(), &event(&ns.name, "before"))
        .await
        .unwrap();

    let child = diag(&db)
        .args(["record", "--quiet", "-n", &ns.name])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let child = Background::new(child);
    let (db2, ns2) = (db.clone(), ns.name.clone());
    wait_until(Duration::from_secs(30), "the first event stored", || {
        let (db, ns) = (db2.clone(), ns2.clone());
        async move { stored_names(&db, &ns) == ["before"] }
    })
    .await;

    cluster_script(&["stop-apiserver"]);
    tokio::time::sleep(Duration::from_secs(3)).await;
    cluster_script(&["start-apiserver"]);
    // A fresh client: the old connections died with the apiserver.
    let events: Api<Event> = Api::namespaced(support::client().await, &ns.name);
    events
        .create(&PostParams::default(), &event(&ns.name, "after"))
        .await
        .unwrap();

    wait_until(
        Duration::from_secs(60),
        "the event created after the restart",
        || {
            let (db, ns) = (db.clone(), ns.name.clone());
            async move { stored_names(&db, &ns) == ["after", "before"] }
        },
    )
    .await;
    assert!(child.terminate().success());

    let conn = support::open_fresh(&db).unwrap();
    let mut st = conn
        .prepare("SELECT reason, finish - start, detail FROM gaps")
        .unwrap();
    let gaps: Vec<(String, i64, String)> = st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    // The apiserver was away for at least the 3 s the test waited.
    assert!(
        gaps.iter().any(|g| g.0 == "disconnected" && g.1 >= 3_000),
        "the outage must be recorded as a gap: {gaps:?}"
    );
}
