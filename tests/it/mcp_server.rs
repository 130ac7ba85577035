//! `kubectl diag mcp` (issue 46) driven by MCP's official Python client (PyPI
//! `mcp`, tests/mcp/client.py) as an assistant would: over stdio, against a
//! recording of the real control plane, and with no recording (the live
//! reconstruction, labelled). The client comes from `scripts/mcp-python
//! install`, which `scripts/test` runs and exports as `DIAG_MCP_PYTHON`.

use crate::support;

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use support::mcp::converse;
use support::{TestNamespace, apply, start_recorder, wait_until};

fn result(answers: &Value, i: usize) -> &Value {
    &answers["results"][i]
}

fn text(answers: &Value, i: usize) -> String {
    result(answers, i)["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn events(db: &Path) -> i64 {
    support::open_fresh(db)
        .unwrap()
        .query_row("SELECT count(*) FROM occurrences", [], |r| r.get(0))
        .unwrap()
}

#[tokio::test]
async fn an_assistant_reads_a_recording_through_every_tool_and_can_write_nothing() {
    let ns = TestNamespace::new("mcp-rec").await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    let n = ns.name.as_str();
    let recorder = start_recorder(&db, n, &[], &format!("pods/{n}")).await;
    apply(
        n,
        r#"apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web, diag.test/never-ready: "true"}}
    spec: {containers: [{name: web, image: "web:broken"}]}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {selector: {app: web, track: gone}, ports: [{port: 80}]}
"#,
    );
    let db_arg = db.to_str().unwrap().to_string();
    // NB: L001 (the Service) can be recorded before the Deployment's first
    // Events; `export` with a limit of 2 needs at least 3 to be cut (a CI run
    // once held 2 when L001 appeared).
    wait_until(
        Duration::from_secs(30),
        "the recording to hold L001 and 3 Event occurrences",
        || {
            let db = db.clone();
            let db_arg = db_arg.clone();
            async move {
                if events(&db) < 3 {
                    return false;
                }
                let out = support::diag(&db)
                    .args(["--db", &db_arg, "check", "relations", "-o", "json", "-n", n])
                    .output()
                    .unwrap();
                String::from_utf8_lossy(&out.stdout).contains("\"L001\"")
            }
        },
    )
    .await;
    assert!(recorder.terminate().success());
    let before = events(&db);
    let deploy = "deploy/web";
    let answers = converse(
        &["--db", &db_arg],
        &[("KUBECONFIG", "/nonexistent")],
        json!([
            {"tool": "recordings"},
            {"tool": "check", "args": {"namespace": n, "codes": ["L001"]}},
            {"tool": "timeline", "args": {"object": deploy, "namespace": n}},
            {"tool": "changes", "args": {"namespace": n, "since": "1h"}},
            {"tool": "export", "args": {"namespace": n, "limit": 2}},
            {"tool": "sql", "args": {"query": "SELECT count(*) AS n FROM occurrences"}},
            {"tool": "sql", "args": {"query": "DELETE FROM occurrences"}},
            {"tool": "sql", "args": {"query": "SELECT 1; DROP TABLE events"}},
            {"tool": "check", "args": {"codes": ["Z999"]}},
            {"tool": "timeline", "args": {"object": "deploy/never-was", "namespace": n}},
            {"tool": "timeline", "args": {"object": "deploy/web", "namespace": "--store=clickhouse://x/y"}},
            {"tool": "no_such_tool"},
            {"resource": "kubectl-diag://docs/checks.md"},
            {"resource": "kubectl-diag://docs/schema.md"},
            {"resource": "kubectl-diag://nothing"},
            {"tool": "recordings"},
            {"tool": "check", "args": {"namespace": n, "codes": []}},
            {"tool": "sql", "args": {"query": "SELECT 1 AS a UNION ALL SELECT 2", "limit": 2}}
        ]),
    );
    // The handshake: who it is, what it offers, read-only tools.
    assert_eq!(answers["server"]["name"], "kubectl-diag");
    assert!(
        answers["server"]["instructions"]
            .as_str()
            .unwrap()
            .contains(&db_arg)
    );
    for tool in [
        "timeline",
        "check",
        "changes",
        "export",
        "sql",
        "recordings",
    ] {
        assert_eq!(
            answers["tools"][tool]["read_only"], true,
            "{tool}: {answers:#}"
        );
    }
    assert_eq!(answers["resources"].as_array().unwrap().len(), 2);
    // recordings(): the cluster, what it covers.
    assert!(
        text(&answers, 0).contains("cluster kubectl-diag-test"),
        "{}",
        text(&answers, 0)
    );
    assert_eq!(
        result(&answers, 0)["structured"]["clusters"][0]["sessions"],
        1
    );
    // check(): the table's first screen and the JSON, only L001 in it.
    let check = result(&answers, 1);
    assert_eq!(check["is_error"], false, "{check:#}");
    assert!(text(&answers, 1).contains("L001") && text(&answers, 1).contains("Service/web"));
    let findings = check["structured"]["findings"].as_array().unwrap();
    assert!(
        !findings.is_empty() && findings.iter().all(|f| f["code"] == "L001"),
        "{findings:#?}"
    );
    // timeline(): the story, as the CLI tells it, and its JSON.
    let story = text(&answers, 2);
    assert!(
        story.starts_with("Object:  Deployment") && story.contains("Check:"),
        "{story}"
    );
    assert_eq!(result(&answers, 2)["structured"]["target"]["name"], "web");
    // changes() and export(), the latter cut at its limit and saying so.
    assert_eq!(
        result(&answers, 3)["is_error"],
        false,
        "{:#}",
        result(&answers, 3)
    );
    let export = result(&answers, 4);
    assert_eq!(export["structured"]["events"].as_array().unwrap().len(), 2);
    assert_eq!(export["structured"]["cut"], true);
    assert!(text(&answers, 4).contains("cut at the limit of 2"));
    // sql(): reads answer; writes, and a second statement, are refused as tool errors.
    assert_eq!(result(&answers, 5)["structured"]["rows"][0]["n"], before);
    for i in [6, 7] {
        assert_eq!(
            result(&answers, i)["is_error"],
            true,
            "{:#}",
            result(&answers, i)
        );
    }
    assert!(
        text(&answers, 6).contains("read-only"),
        "{}",
        text(&answers, 6)
    );
    assert_eq!(events(&db), before, "nothing was written");
    // Bad input: a tool error that names the fix.
    assert_eq!(result(&answers, 8)["is_error"], true);
    assert!(text(&answers, 8).contains("no finding code \"Z999\"; the codes are C001"));
    assert_eq!(result(&answers, 9)["is_error"], true);
    assert!(
        text(&answers, 9).contains("never-was"),
        "{}",
        text(&answers, 9)
    );
    // A value that looks like a flag stays a value: a namespace named
    // `--store=…` that holds nothing, never a store.
    assert_eq!(result(&answers, 10)["is_error"], true);
    let said = text(&answers, 10);
    assert!(said.contains("--store=clickhouse://x/y"), "{said}");
    assert!(!said.to_lowercase().contains("clickhouse store"), "{said}");
    // An unknown tool or resource is a protocol error, and the server goes on.
    assert_eq!(result(&answers, 11)["protocol_error"], -32602);
    assert!(
        text(&answers, 12).contains("| L001 |"),
        "checks.md with the codes"
    );
    assert!(
        text(&answers, 13).contains("occurrences"),
        "schema.md with the tables"
    );
    assert!(result(&answers, 14)["protocol_error"].is_i64());
    assert_eq!(result(&answers, 15)["is_error"], false, "still serving");
    // An empty list of codes is no filter; exactly `limit` rows is not a cut.
    let all = result(&answers, 16)["structured"]["findings"]
        .as_array()
        .unwrap();
    assert!(!all.is_empty(), "{:#}", result(&answers, 16));
    assert_eq!(
        result(&answers, 17)["structured"]["rows"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert_eq!(
        result(&answers, 17)["structured"]["cut"],
        false,
        "{:#}",
        result(&answers, 17)
    );
}

#[tokio::test]
async fn with_no_recording_the_timeline_is_the_labelled_reconstruction_and_a_slow_call_is_an_error()
{
    let ns = TestNamespace::new("mcp-live").await;
    let n = ns.name.as_str();
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
    let deployments: kube::Api<k8s_openapi::api::apps::v1::Deployment> = ns.api();
    support::wait_available(&deployments, "api", 1).await;
    let data = tempfile::tempdir().unwrap();
    let kubeconfig = support::kubeconfig();
    let env = [
        ("KUBECONFIG", kubeconfig.to_str().unwrap()),
        ("XDG_DATA_HOME", data.path().to_str().unwrap()),
    ];
    let answers = converse(
        &[],
        &env,
        json!([
            {"tool": "recordings"},
            {"tool": "timeline", "args": {"object": "deploy/api", "namespace": n}},
            {"tool": "sql", "args": {"query": "SELECT 1"}}
        ]),
    );
    assert!(
        text(&answers, 0).contains("the live cluster"),
        "{}",
        text(&answers, 0)
    );
    let story = text(&answers, 1);
    assert!(
        story.starts_with("Reconstructed from the live cluster") && story.contains("no recording"),
        "{story}"
    );
    assert!(
        story.contains("Deployment ") && story.contains("/api"),
        "{story}"
    );
    assert_eq!(result(&answers, 2)["is_error"], true);
    assert!(text(&answers, 2).contains("kubectl diag record"));
    // A call past the server's time limit answers with an error saying so
    // (live `check` samples hot loops for 5 s); the server serves the next
    // call, one that needs a command slot too, while the first still runs.
    let answers = converse(
        &["--timeout", "3s"],
        &env,
        json!([
            {"tool": "check", "args": {"namespace": n}},
            {"tool": "timeline", "args": {"object": "deploy/api", "namespace": n}}
        ]),
    );
    assert_eq!(result(&answers, 0)["is_error"], true);
    assert!(
        text(&answers, 0).contains("no answer within 3s"),
        "{}",
        text(&answers, 0)
    );
    assert_eq!(
        result(&answers, 1)["is_error"],
        false,
        "{:#}",
        result(&answers, 1)
    );
}
