//! Golden output of `kubectl diag timeline` (table and JSON) for recorded
//! scenarios: a Deployment rolled to an image that never gets ready (with its
//! ReplicaSets, Pods, Node, Warnings and a gap in the recording), an
//! unschedulable Deployment, a stuck finalizer, a generation lag, a memory
//! limit cut that ends in OOMKills, and two field managers fighting. Each
//! test holds the rule: the cause is within the first 25 lines of
//! the table. The recordings (`timeline_recordings`) are written through the
//! recorder's own writer with fixed times, so the output is the same on every
//! machine. `UPDATE_GOLDEN=1` rewrites the files after a deliberate change.

use crate::support::golden_file;
use golden_file::golden;

use crate::support::timeline_recordings;
use timeline_recordings::{
    fight, generation_lag, memory_cut, recording, selectors_in_time, stuck_finalizer, timeline,
    timeline_of, unschedulable,
};

/// The first screen of a table: its first 25 lines.
fn first_screen(table: &str) -> String {
    table.lines().take(25).collect::<Vec<_>>().join("\n")
}

#[test]
fn a_rollout_that_never_gets_ready_table() {
    let dir = tempfile::tempdir().unwrap();
    let db = recording(dir.path());
    let table = timeline(&db, "table");
    golden("timeline_rollout.txt", &table);
    // The cause is on the first screen: the bad image, who set it, and what the Pods say.
    let first = first_screen(&table);
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
    let first = first_screen(&table);
    assert!(
        first.contains("never ready: Unschedulable: 0/1 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}"),
        "{first}"
    );
    let json = timeline_of(&db, "deploy/trainer", "ml", "json");
    golden("timeline_unschedulable.json", &json);
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["summary"]["pods"][0]["problem"], "never-ready");
}

#[test]
fn a_stuck_finalizer_shows_the_deletion_the_finalizer_and_the_check_on_the_first_screen() {
    let dir = tempfile::tempdir().unwrap();
    let db = stuck_finalizer(dir.path());
    let table = timeline_of(&db, "widget/stuck", "shop", "table");
    golden("timeline_stuck-finalizer.txt", &table);
    let first = first_screen(&table);
    for cause in [
        "deletion requested; waiting for finalizers example.com/cleanup",
        "F001 Widget/stuck: deleting for 12m, held by finalizer(s) example.com/cleanup",
        "F002 Namespace/shop: namespace Terminating for 13m: 1 object(s) held by finalizers: Widget/stuck (example.com/cleanup",
    ] {
        assert!(first.contains(cause), "{cause} not in\n{first}");
    }
    let json = timeline_of(&db, "widget/stuck", "shop", "json");
    golden("timeline_stuck-finalizer.json", &json);
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    let codes: Vec<&str> = doc["summary"]["check"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, ["F002", "F001"]);
}

#[test]
fn the_stuck_namespace_names_the_widget_and_its_finalizer_on_the_first_screen() {
    let dir = tempfile::tempdir().unwrap();
    let db = stuck_finalizer(dir.path());
    let table = timeline_of(&db, "ns/shop", "shop", "table");
    golden("timeline_stuck-finalizer_namespace.txt", &table);
    let first = first_screen(&table);
    for cause in [
        "deletion requested; waiting for finalizers kubernetes",
        "F002 Namespace/shop: namespace Terminating for 13m: 1 object(s) held by finalizers: Widget/stuck (example.com/cleanup; expected remover: no controller found for example.com)",
        "NamespaceFinalizersRemaining none → True (SomeFinalizersRemain): Some content in the namespace has finalizers remaining: example.com/cleanup",
    ] {
        assert!(first.contains(cause), "{cause} not in\n{first}");
    }
}

#[test]
fn a_generation_lag_shows_the_spec_diff_its_writer_and_g001_on_the_first_screen() {
    let dir = tempfile::tempdir().unwrap();
    let db = generation_lag(dir.path());
    let table = timeline_of(&db, "widget/lagging", "shop", "table");
    golden("timeline_generation-lag.txt", &table);
    let first = first_screen(&table);
    for cause in [
        "spec changed, generation 1 → 2: spec.size 1 → 2 (by alice)",
        "spec changed, generation 2 → 3: spec.size 2 → 3 (by alice)",
        "G001 Widget/lagging: generation 3 not observed for 9m (status.observedGeneration 1)",
    ] {
        assert!(first.contains(cause), "{cause} not in\n{first}");
    }
    let json = timeline_of(&db, "widget/lagging", "shop", "json");
    golden("timeline_generation-lag.json", &json);
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["summary"]["changes"][1]["writers"][0], "alice");
    assert_eq!(doc["summary"]["check"][0]["code"], "G001");
}

#[test]
fn a_memory_limit_cut_shows_the_diff_its_writer_and_the_oomkilled_restarts_on_the_first_screen() {
    let dir = tempfile::tempdir().unwrap();
    let db = memory_cut(dir.path());
    let table = timeline_of(&db, "deploy/web", "shop", "table");
    golden("timeline_memory-cut.txt", &table);
    let first = first_screen(&table);
    for cause in [
        "spec.template.spec.containers[web].resources.limits.memory 512Mi → 256Mi (by alice)",
        "Pod web-5d4f8b-m4x7p never ready: web: waiting (CrashLoopBackOff)",
        "Pod web-5d4f8b-m4x7p restarted: web restarted (last: OOMKilled)",
        "P001 Pod/web-5d4f8b-m4x7p: container web waiting (CrashLoopBackOff)",
        "after 6 restart(s), last exit 137 (OOMKilled)",
    ] {
        assert!(first.contains(cause), "{cause} not in\n{first}");
    }
    let json = timeline_of(&db, "deploy/web", "shop", "json");
    golden("timeline_memory-cut.json", &json);
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["summary"]["changes"][0]["writers"][0], "alice");
    assert_eq!(
        doc["summary"]["pods"][1]["reason"],
        "web restarted (last: OOMKilled)"
    );
}

#[test]
fn a_fight_names_both_managers_and_the_flipping_field_on_the_first_screen() {
    let dir = tempfile::tempdir().unwrap();
    let db = fight(dir.path());
    let table = timeline_of(&db, "widget/contested", "shop", "table");
    golden("timeline_fight.txt", &table);
    let first = first_screen(&table);
    for cause in [
        "spec.size 3 ↔ 5, back and forth 110 times (by argocd-controller, widget-autoscaler)",
        "H001 Widget/contested",
        "fight between argocd-controller and widget-autoscaler over spec.size",
    ] {
        assert!(first.contains(cause), "{cause} not in\n{first}");
    }
    // The table folds the 110 flips too: one entry line, not 110.
    assert_eq!(
        table
            .lines()
            .filter(|l| l.contains("SpecChanged"))
            .collect::<Vec<_>>(),
        vec![
            " 2026-11-29 03:05:30  +2h5m  Widget/contested  change  SpecChanged  spec.size 3 ↔ 5, back and forth 110 times until 2026-11-29 03:14:35 (by argocd-controller, widget-autoscaler)"
        ]
    );
    let wide = timeline_of(&db, "widget/contested", "shop", "wide");
    assert_eq!(
        wide.lines().filter(|l| l.contains("SpecChanged")).count(),
        110,
        "-o wide keeps every entry"
    );
    let json = timeline_of(&db, "widget/contested", "shop", "json");
    golden("timeline_fight.json", &json);
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    let changes = doc["summary"]["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "{changes:#?}");
    assert_eq!(changes[0]["count"], 110);
}

/// Regression (issue 47): a Service was called related when any of its
/// selectors matched any labels the Pod ever had, at any time; one made, or
/// changed to match, after the Pod was gone is not part of its story.
#[test]
fn a_service_that_matched_only_after_the_pod_was_gone_is_not_related() {
    let dir = tempfile::tempdir().unwrap();
    let db = selectors_in_time(dir.path());
    let json = timeline_of(&db, "pod/web-1", "shop", "json");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let related: Vec<(String, String)> = v["objects"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["kind"] == "Service")
        .map(|o| {
            (
                o["name"].as_str().unwrap().to_string(),
                o["relation"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    assert_eq!(
        related,
        [("web".to_string(), "selects".to_string())],
        "{json}"
    );
    let table = timeline_of(&db, "pod/web-1", "shop", "table");
    assert!(
        !table.contains("late") && !table.contains("relabelled"),
        "{table}"
    );
}
