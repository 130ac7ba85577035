//! `kubectl diag import` of dumps captured from the real cluster with the real
//! kubectl: JSON and YAML, the same file twice, a truncated file.

use crate::support;

use std::path::Path;

use k8s_openapi::api::core::v1::Event;
use kube::api::PostParams;
use serde_json::json;
use support::{TestNamespace, cluster_script, diag, run_ok};

fn export_lines(db: &Path, cluster: &str) -> Vec<serde_json::Value> {
    let out = run_ok(diag(db).args(["export", "--cluster", cluster]));
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[tokio::test]
async fn dumps_from_kubectl_import_once_and_bad_files_store_nothing() {
    let ns = TestNamespace::new("import").await;
    let events: kube::Api<Event> = ns.api();
    for (name, count) in [("a", 1), ("b", 4)] {
        let e: Event = serde_json::from_value(json!({
            "metadata": {"name": name},
            "involvedObject": {"kind": "Pod", "name": "web-1", "namespace": ns.name, "apiVersion": "v1"},
            "reason": "BackOff", "type": "Warning", "message": format!("event {name}"),
            "count": count, "firstTimestamp": "2026-11-29T03:00:00Z", "lastTimestamp": "2026-11-29T03:04:00Z",
            "source": {"component": "kubelet"}
        }))
        .unwrap();
        events.create(&PostParams::default(), &e).await.unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    let json_dump = dir.path().join("events.json");
    let yaml_dump = dir.path().join("events.yaml");
    std::fs::write(
        &json_dump,
        cluster_script(&["kubectl", "get", "events", "-n", &ns.name, "-o", "json"]).stdout,
    )
    .unwrap();
    std::fs::write(
        &yaml_dump,
        cluster_script(&["kubectl", "get", "events", "-n", &ns.name, "-o", "yaml"]).stdout,
    )
    .unwrap();

    let db = dir.path().join("diag.db");
    let out = run_ok(
        diag(&db)
            .args(["import", "--cluster", "from-json"])
            .arg(&json_dump),
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("2 Event(s), 5 new occurrence(s)"),
        "{out:?}"
    );
    // The same file again adds nothing.
    let out = run_ok(
        diag(&db)
            .args(["import", "--cluster", "from-json"])
            .arg(&json_dump),
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("2 Event(s), 0 new occurrence(s)"),
        "{out:?}"
    );
    // YAML of the same Events, under another cluster id: the same occurrences.
    run_ok(
        diag(&db)
            .args(["import", "--cluster", "from-yaml"])
            .arg(&yaml_dump),
    );
    let from_json = export_lines(&db, "from-json");
    let from_yaml = export_lines(&db, "from-yaml");
    assert_eq!(from_json.len(), 2);
    let strip = |lines: Vec<serde_json::Value>| -> Vec<serde_json::Value> {
        lines
            .into_iter()
            .map(|mut l| {
                l["cluster"] = json!("");
                l
            })
            .collect()
    };
    assert_eq!(strip(from_json.clone()), strip(from_yaml));
    let b = from_json
        .iter()
        .find(|l| l["event"]["name"] == "b")
        .unwrap();
    assert_eq!(
        (b["count"].as_i64(), b["occurrences"].as_i64()),
        (Some(4), Some(4))
    );

    // A truncated file: a clear error naming it, nothing of it stored; the good file still imports.
    let text = std::fs::read_to_string(&json_dump).unwrap();
    let truncated = dir.path().join("truncated.json");
    std::fs::write(&truncated, &text[..text.len() * 2 / 3]).unwrap();
    let out = diag(&db)
        .args(["import", "--cluster", "mixed"])
        .arg(&truncated)
        .arg(&yaml_dump)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("truncated.json: not valid JSON at line"),
        "{err}"
    );
    assert!(err.contains("nothing of it was stored"), "{err}");
    assert_eq!(
        export_lines(&db, "mixed").len(),
        2,
        "the YAML file after the bad one still imports"
    );

    // The imported recording works with timeline and check like any other.
    let out = run_ok(diag(&db).args([
        "timeline",
        "pod/web-1",
        "-n",
        &ns.name,
        "--cluster",
        "from-json",
        "-o",
        "json",
    ]));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let counts: Vec<i64> = doc["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["entry"] == "event" && e["reason"] == "BackOff")
        .map(|e| e["count"].as_i64().unwrap())
        .collect();
    assert_eq!(counts.iter().sum::<i64>(), 5, "{doc:#}");
    let out = diag(&db)
        .args(["check", "--db"])
        .arg(&db)
        .args(["--cluster", "from-json", "-o", "json"])
        .output()
        .unwrap();
    // NB: Events imported alone: the Pod's recurring BackOff is its own
    // R004 (no object state, so no R001 reads it), and nothing else.
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["source"], "recording");
    let findings = support::finding_keys(&doc);
    assert_eq!(findings, [("R004".to_string(), "Pod/web-1".to_string())]);
}
