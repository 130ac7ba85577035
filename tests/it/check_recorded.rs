//! `check --db` over an imported recording, no cluster needed: what `-n`
//! limits, in the findings and in the summary alike.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

fn diag(db: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kubectl-diag"));
    cmd.env("KUBECTL_DIAG_DB", db).env("NO_COLOR", "1");
    cmd
}

fn failed_scheduling(namespace: &str, pod: &str, uid: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": format!("{pod}.187c00000000000{}", uid.len()), "namespace": namespace, "uid": uid},
        "involvedObject": {"apiVersion": "v1", "kind": "Pod", "namespace": namespace, "name": pod, "uid": format!("pod-{uid}")},
        "reason": "FailedScheduling", "type": "Warning",
        "message": "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.",
        "count": 1,
        "firstTimestamp": "2026-11-30T03:00:00Z", "lastTimestamp": "2026-11-30T03:00:00Z",
        "source": {"component": "default-scheduler"}
    })
}

/// The summary once counted Pods of every namespace under `check -n NS`.
#[test]
fn namespace_limits_the_scheduling_summary_too() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    let dump = dir.path().join("events.json");
    let list = json!({"apiVersion": "v1", "kind": "List", "items": [
        failed_scheduling("shop", "web-1", "00000000-0000-4000-8000-000000000001"),
        failed_scheduling("shop", "web-2", "00000000-0000-4000-8000-000000000002"),
        failed_scheduling("batch", "job-1", "00000000-0000-4000-8000-000000000003"),
    ]});
    std::fs::write(&dump, list.to_string()).unwrap();
    let out = diag(&db)
        .args(["import", "--cluster", "ticket"])
        .arg(&dump)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let db_arg = db.to_str().unwrap();
    let out = diag(&db)
        .args([
            "check",
            "scheduling",
            "--db",
            db_arg,
            "-n",
            "shop",
            "-o",
            "json",
        ])
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["findings"].as_array().unwrap().len(), 2, "{doc:#}");
    assert_eq!(doc["summary"]["unschedulable_pods"], 2, "{doc:#}");
    assert_eq!(doc["summary"]["reasons"][0]["pods"], 2, "{doc:#}");

    let out = diag(&db)
        .args(["check", "scheduling", "--db", db_arg, "-n", "shop"])
        .output()
        .unwrap();
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(table.contains("(2 unschedulable Pod(s))"), "{table}");
    assert!(!table.contains("job-1"), "{table}");

    let out = diag(&db)
        .args(["check", "scheduling", "--db", db_arg, "-o", "json"])
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["summary"]["unschedulable_pods"], 3, "{doc:#}");
}
