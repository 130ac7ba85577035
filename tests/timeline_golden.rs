//! Golden output of `kubectl diag timeline` (table and JSON) for a recorded
//! scenario: a Deployment rolled to an image that never gets ready, with its
//! ReplicaSets, Pods, Node, Warnings and a gap in the recording. The
//! recording (`timeline_recordings`) is written through the recorder's own
//! writer with fixed times, so the output is the same on every machine.
//! `UPDATE_GOLDEN=1` rewrites the files after a deliberate change.

mod golden_file;
use golden_file::golden;

mod timeline_recordings;
use timeline_recordings::{recording, timeline, timeline_of, unschedulable};

#[test]
fn a_rollout_that_never_gets_ready_table() {
    let dir = tempfile::tempdir().unwrap();
    let db = recording(dir.path());
    let table = timeline(&db, "table");
    golden("timeline_rollout.txt", &table);
    // The cause is on the first screen: the bad image, who set it, and what the Pods say.
    let first: String = table.lines().take(25).collect::<Vec<_>>().join("\n");
    assert!(
        first.contains("image web:1 → web:broken (by kubectl-set)")
            && first.contains("NOT ready")
            && first.contains("never ready: web: waiting (ImagePullBackOff)"),
        "{first}"
    );
}

#[test]
fn a_rollout_that_never_gets_ready_json() {
    let dir = tempfile::tempdir().unwrap();
    let db = recording(dir.path());
    let json = timeline(&db, "json");
    golden("timeline_rollout.json", &json);
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        doc["summary"]["pods"][0]["reason"],
        "web: waiting (ImagePullBackOff)"
    );
    assert_eq!(doc["summary"]["changes"][0]["writers"][0], "kubectl-set");
}

#[test]
fn a_rollout_that_never_gets_ready_html_is_one_self_contained_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = recording(dir.path());
    let html = timeline(&db, "html");
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("<svg"), "an SVG picture");
    // One inline script (zoom, pan, hover details), which loads nothing.
    assert_eq!(html.matches("<script").count(), 1, "one script");
    let script =
        &html[html.find("<script>").expect("inline, no src")..html.find("</script>").unwrap()];
    for forbidden in ["http", "fetch(", "XMLHttpRequest", "import", "src="] {
        assert!(!script.contains(forbidden), "the script uses {forbidden}");
    }
    assert!(
        html.contains("id=\"zin\"") && html.contains("addEventListener('wheel'"),
        "buttons and the wheel zoom"
    );
    assert!(
        html.contains("class=\"z zw\""),
        "state bars stretch with the zoom"
    );
    assert!(
        !html.contains("src=\"http") && !html.contains("href=\"http"),
        "no external assets"
    );
    assert!(html.contains("url(#hatch)"), "the gap is hatched");
    assert!(
        html.contains("<dl class=\"summary\">") && html.contains("never ready"),
        "the summary heads the page"
    );
    assert!(
        html.contains("Error: ImagePullBackOff"),
        "hover text and table carry the details"
    );
}

#[test]
fn an_unschedulable_deployment_names_the_taint_on_the_first_screen() {
    let dir = tempfile::tempdir().unwrap();
    let db = unschedulable(dir.path());
    let table = timeline_of(&db, "deploy/trainer", "ml", "table");
    golden("timeline_unschedulable.txt", &table);
    let first: String = table.lines().take(25).collect::<Vec<_>>().join("\n");
    assert!(
        first.contains("never ready: Unschedulable: 0/1 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}"),
        "{first}"
    );
    let json = timeline_of(&db, "deploy/trainer", "ml", "json");
    golden("timeline_unschedulable.json", &json);
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["summary"]["pods"][0]["problem"], "never-ready");
}
