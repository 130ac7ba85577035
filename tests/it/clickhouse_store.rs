//! The ClickHouse store against a real ClickHouse engine (chdb-core behind
//! scripts/clickhouse-front.py; docs/testing.md) and the real control plane:
//! `record --ship`, `ship`, and every reader with `--store`. Each test runs
//! a front of its own (its own port and data), so one can be killed.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Event};
use kube::api::{DeleteParams, PostParams};
use serde_json::json;
use support::{Background, TestNamespace, diag, run_ok, wait_until};

use support::clickhouse::{Front, PASSWORD, diag_ch};

fn sqlite_count(db: &Path, sql: &str) -> i64 {
    support::open_fresh(db)
        .unwrap()
        .query_row(sql, [], |r| r.get(0))
        .unwrap()
}

fn recorder(db: &Path, ns: &str, extra: &[&str]) -> Background {
    Background::new(
        diag_ch(db)
            .args(["record", "--quiet", "-n", ns, "--commit-every", "1s"])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    )
}

async fn warning(api: &kube::Api<Event>, ns: &str, name: &str, i: usize) {
    let ev: Event = serde_json::from_value(json!({
        "metadata": {"name": format!("{name}.{i:x}")},
        "involvedObject": {"kind": "Pod", "name": name, "namespace": ns, "apiVersion": "v1",
                           "uid": "11111111-2222-3333-4444-555555555555"},
        "reason": "BackOff", "type": "Warning",
        "message": format!("Back-off restarting failed container web ({i})"),
        "count": 1, "firstTimestamp": "2026-11-29T03:00:00Z", "lastTimestamp": "2026-11-29T03:00:00Z",
        "source": {"component": "kubelet", "host": "kwok-small"}
    }))
    .unwrap();
    api.create(&PostParams::default(), &ev).await.unwrap();
}

/// The facts in the file and in ClickHouse (FINAL: as every reader counts them), table by table.
fn assert_same_counts(db: &Path, front: &Front) {
    for (table, sqlite) in [
        ("occurrences", "SELECT count(*) FROM occurrences"),
        ("events", "SELECT count(*) FROM events"),
        ("objects", "SELECT count(*) FROM objects"),
        ("versions", "SELECT count(*) FROM versions"),
        ("gaps", "SELECT count(*) FROM gaps"),
        ("sessions", "SELECT count(*) FROM recorder_sessions"),
    ] {
        let want = sqlite_count(db, sqlite);
        let got = front.count(&format!("SELECT count() FROM {table} FINAL"));
        assert_eq!(
            got, want,
            "{table}: ClickHouse holds {got}, the recording {want}"
        );
    }
}

/// A Deployment rolled to a new image, a ConfigMap stuck on its finalizer,
/// Warning Events: recorded with --ship; timeline, changes, check and export
/// against ClickHouse print what they print against the file.
#[tokio::test]
async fn a_recorded_scenario_reads_the_same_from_clickhouse_as_from_the_file() {
    let front = Front::start();
    let ns = TestNamespace::new("ch-same").await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    let rec = recorder(
        &db,
        &ns.name,
        &["--ship", &front.url(), "--ship-create-schema"],
    );
    support::wait_until(
        Duration::from_secs(30),
        "the recorder's first lists",
        || {
            let db = db.clone();
            async move {
                db.exists()
                    && support::open_fresh(&db)
                        .and_then(|c| {
                            c.query_row("SELECT count(*) FROM watch_positions", [], |r| {
                                r.get::<_, i64>(0)
                            })
                        })
                        .is_ok_and(|n| n > 0)
            }
        },
    )
    .await;
    // NB: causes along relationships too (issue 47): a ConfigMap the template
    // reads, edited before the rollout; one it names that does not exist; a
    // Service whose selector matches no Pod.
    support::apply(
        &ns.name,
        r#"apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {LOG_LEVEL: info}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {selector: {app: web, track: gone}, ports: [{port: 80}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      nodeSelector: {type: kwok}
      tolerations: [{key: kwok.x-k8s.io/node, operator: Exists, effect: NoSchedule}]
      containers:
      - name: web
        image: "nginx:1.25"
        envFrom: [{configMapRef: {name: settings}}, {configMapRef: {name: missing-settings}}]
"#,
    );
    let deployments: kube::Api<k8s_openapi::api::apps::v1::Deployment> = ns.api();
    support::wait_available(&deployments, "web", 2).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    support::kubectl(&[
        "-n",
        &ns.name,
        "patch",
        "configmap",
        "settings",
        "--type=merge",
        "-p",
        r#"{"data":{"LOG_LEVEL":"debug"}}"#,
    ]);
    support::kubectl(&[
        "-n",
        &ns.name,
        "set",
        "image",
        "deploy/web",
        "web=nginx:1.27",
    ]);
    let cms: kube::Api<ConfigMap> = ns.api();
    let cm: ConfigMap = serde_json::from_value(json!({
        "metadata": {"name": "held", "finalizers": ["example.com/never"]}
    }))
    .unwrap();
    cms.create(&PostParams::default(), &cm).await.unwrap();
    cms.delete("held", &DeleteParams::default()).await.unwrap();
    let events: kube::Api<Event> = ns.api();
    for i in 0..5 {
        warning(&events, &ns.name, "web-1", i).await;
    }
    // A fight: two field managers taking one label from each other, 40 times.
    let contested: ConfigMap = serde_json::from_value(json!({
        "metadata": {"name": "contested"}, "data": {"k": "v"}
    }))
    .unwrap();
    cms.create(&PostParams::default(), &contested)
        .await
        .unwrap();
    for i in 0..40 {
        let (manager, value) = if i % 2 == 0 {
            ("fighter-a", "a")
        } else {
            ("fighter-b", "b")
        };
        let params = kube::api::PatchParams {
            field_manager: Some(manager.into()),
            ..Default::default()
        };
        cms.patch(
            "contested",
            &params,
            &kube::api::Patch::Merge(json!({"metadata": {"labels": {"owner": value}}})),
        )
        .await
        .unwrap();
    }
    support::wait_available(&deployments, "web", 2).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(rec.terminate().success());

    assert_same_counts(&db, &front);
    let until = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    for args in [
        vec!["timeline", "deploy/web", "-n", &ns.name, "--until", &until],
        vec![
            "timeline",
            "deploy/web",
            "-n",
            &ns.name,
            "--until",
            &until,
            "-o",
            "json",
        ],
        vec![
            "changes", "-n", &ns.name, "--since", "1h", "--until", &until,
        ],
        vec![
            "check",
            "-n",
            &ns.name,
            "--at",
            &until,
            "--stuck-after",
            "1s",
            "--window",
            "1m",
        ],
        vec![
            "check",
            "-n",
            &ns.name,
            "--at",
            &until,
            "--stuck-after",
            "1s",
            "--window",
            "1m",
            "-o",
            "json",
        ],
        vec!["export"],
        vec!["query", "warnings-by-reason", "--since", "2000d"],
    ] {
        let file = diag_ch(&db)
            .args(&args)
            .args(["--db", db.to_str().unwrap()])
            .output()
            .unwrap();
        let store = diag_ch(&db)
            .env_remove("KUBECTL_DIAG_DB")
            .args(&args)
            .args(["--store", &front.url()])
            .output()
            .unwrap();
        let (file_out, store_out) = (
            String::from_utf8_lossy(&file.stdout),
            String::from_utf8_lossy(&store.stdout),
        );
        assert_eq!(
            file.status.code(),
            store.status.code(),
            "{args:?}: exit codes\nfile stderr: {}\nstore stderr: {}",
            String::from_utf8_lossy(&file.stderr),
            String::from_utf8_lossy(&store.stderr)
        );
        assert!(!file_out.trim().is_empty(), "{args:?} printed nothing");
        assert_eq!(
            file_out, store_out,
            "{args:?}: the store's output differs from the file's"
        );
    }
    // What the scenario is about, on the first screen of the store's check.
    let check = diag_ch(&db)
        .env_remove("KUBECTL_DIAG_DB")
        .args([
            "check",
            "-n",
            &ns.name,
            "--at",
            &until,
            "--stuck-after",
            "1s",
            "--window",
            "1m",
            "--store",
            &front.url(),
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&check.stdout);
    assert!(
        text.lines()
            .take(25)
            .any(|l| l.contains("F001") && l.contains("ConfigMap/held")),
        "{text}"
    );
    assert!(
        text.lines()
            .take(25)
            .any(|l| l.contains("H002") && l.contains("fighter-a") && l.contains("fighter-b")),
        "{text}"
    );
    for (code, what) in [
        ("L001", "Service/web"),
        ("L004", "ConfigMap/missing-settings"),
    ] {
        assert!(
            text.lines()
                .take(25)
                .any(|l| l.contains(code) && l.contains(what)),
            "{code} {what}:\n{text}"
        );
    }
    // Live, from the file and from the store: the same relationship findings.
    let relations = |place: &[&str]| -> Vec<String> {
        let out = diag_ch(&db)
            .env_remove("KUBECTL_DIAG_DB")
            .args(["check", "relations", "-n", &ns.name, "-o", "json"])
            .args(place)
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
        let mut rows: Vec<String> = v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                format!(
                    "{} {}/{}",
                    f["code"], f["object"]["kind"], f["object"]["name"]
                )
            })
            .collect();
        rows.sort();
        rows
    };
    let live = relations(&[]);
    assert!(live.len() >= 2, "{live:?}");
    assert_eq!(
        relations(&["--db", db.to_str().unwrap()]),
        live,
        "file vs live"
    );
    assert_eq!(relations(&["--store", &front.url()]), live, "store vs live");
    // An assistant asking the store through `kubectl diag mcp --store`.
    let url = front.url();
    let answers = support::mcp::converse(
        &["--store", &url],
        &[
            ("KUBECTL_DIAG_CLICKHOUSE_PASSWORD", PASSWORD),
            ("KUBECONFIG", "/nonexistent"),
        ],
        json!([
            {"tool": "check", "args": {"namespace": ns.name, "codes": ["L001"]}},
            {"tool": "sql", "args": {"query": "SELECT count() AS n FROM clusters FINAL"}},
            {"tool": "sql", "args": {"query": "INSERT INTO clusters (cluster) VALUES ('x')"}}
        ]),
    );
    let findings = answers["results"][0]["structured"]["findings"]
        .as_array()
        .unwrap();
    assert!(
        findings
            .iter()
            .any(|f| f["object"]["name"] == "web" && f["code"] == "L001"),
        "{answers:#}"
    );
    assert_eq!(
        answers["results"][1]["structured"]["rows"][0]["n"], 1,
        "{answers:#}"
    );
    assert_eq!(answers["results"][2]["is_error"], true, "{answers:#}");
    // The Deployment's story names the ConfigMap's edit, from the store too.
    let story = diag_ch(&db)
        .env_remove("KUBECTL_DIAG_DB")
        .args([
            "timeline",
            "deploy/web",
            "-n",
            &ns.name,
            "--store",
            &front.url(),
        ])
        .output()
        .unwrap();
    let story = String::from_utf8_lossy(&story.stdout);
    assert!(
        story.lines().take(25).any(|l| l.starts_with("Related:")
            && l.contains("ConfigMap/settings changed: data.LOG_LEVEL changed (by kubectl-patch)")),
        "{story}"
    );
    support::kubectl(&[
        "-n",
        &ns.name,
        "patch",
        "configmap",
        "held",
        "--type=merge",
        "-p",
        r#"{"metadata":{"finalizers":null}}"#,
    ]);
}

/// The front killed for 30 s while the recorder ships, then the recorder
/// killed with SIGKILL mid-batch and started again: ClickHouse ends with
/// every row of the file once, and the outbox empty.
#[tokio::test]
async fn the_store_down_for_30s_and_the_recorder_killed_mid_batch_lose_and_double_nothing() {
    let front = Front::start();
    let ns = TestNamespace::new("ch-fault").await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    let url = front.url();
    let listen = support::free_local_addr();
    let rec = recorder(
        &db,
        &ns.name,
        &["--ship", &url, "--ship-create-schema", "--listen", &listen],
    );
    let events: kube::Api<Event> = ns.api();
    wait_until(
        Duration::from_secs(30),
        "the first rows in ClickHouse",
        || async { front.count_or_none("SELECT count() FROM clusters FINAL") > 0 },
    )
    .await;
    for i in 0..20 {
        warning(&events, &ns.name, "before", i).await;
    }
    front.script("kill");
    for i in 0..40 {
        warning(&events, &ns.name, "during", i).await;
        tokio::time::sleep(Duration::from_millis(750)).await;
    }
    // The recorder says it is behind and failing, and records all the same.
    let metrics = Command::new("curl")
        .args(["-s", &format!("http://{listen}/metrics")])
        .output()
        .unwrap();
    let metrics = String::from_utf8_lossy(&metrics.stdout);
    let value = |name: &str| -> i64 {
        metrics
            .lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{name} not in /metrics:\n{metrics}"))
    };
    assert!(value("kubectl_diag_ship_errors_total") > 0, "{metrics}");
    assert!(value("kubectl_diag_ship_backlog") > 0, "{metrics}");
    assert!(value("kubectl_diag_ship_behind_seconds") >= 20, "{metrics}");
    // A server that refuses (503) for a while: the same, then it catches up.
    front.script("up");
    front.script_with(&["refuse", "on"]);
    for i in 0..5 {
        warning(&events, &ns.name, "refused", i).await;
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(
        front.count_or_none("SELECT count() FROM clusters FINAL"),
        -1
    );
    // Mid-batch: the server takes the next insert but answers only after
    // the recorder is gone, so the recorder never learns it was taken.
    front.script_with(&["slow", "30"]);
    front.script_with(&["refuse", "off"]);
    // NB: the shipper may wait out its backoff (at most 30 s) before it tries.
    let held = front.dir.path().join("slow.held");
    wait_until(
        Duration::from_secs(90),
        "an insert taken and not yet answered",
        || async { held.exists() },
    )
    .await;
    rec.kill_9();
    front.script_with(&["slow", "off"]);
    for i in 0..10 {
        warning(&events, &ns.name, "after", i).await;
    }
    let rec = recorder(&db, &ns.name, &["--ship", &url]);
    wait_until(
        Duration::from_secs(60),
        "every Event in ClickHouse",
        || async {
            front.count_or_none(&format!(
                "SELECT count() FROM events FINAL WHERE namespace = '{}'",
                ns.name
            )) == 75
        },
    )
    .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(rec.terminate().success());
    assert_same_counts(&db, &front);
    assert_eq!(
        sqlite_count(&db, "SELECT count(*) FROM outbox"),
        0,
        "the outbox is empty after a clean stop"
    );
    // No row twice, whichever way it was read.
    let keys = front.count("SELECT count() FROM (SELECT cluster, event_namespace, event_name, event_uid, count FROM occurrences FINAL GROUP BY ALL)");
    assert_eq!(keys, front.count("SELECT count() FROM occurrences FINAL"));
    let gaps = front.count("SELECT count() FROM gaps FINAL WHERE reason = 'not-running'");
    assert!(
        gaps >= 1,
        "the SIGKILL's blind interval is a gap in the store too"
    );
}

/// Two clusters in one database (the recorded one and an import shipped with
/// `ship`): changes, check and query with --all-clusters name each; sending
/// the import again changes nothing.
#[tokio::test]
async fn two_clusters_in_one_store_are_asked_together() {
    let front = Front::start();
    let ns = TestNamespace::new("ch-fleet").await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    let events: kube::Api<Event> = ns.api();
    for i in 0..3 {
        warning(&events, &ns.name, "web-1", i).await;
    }
    run_ok(diag_ch(&db).args([
        "record",
        "--once",
        "--quiet",
        "-n",
        &ns.name,
        "--ship",
        &front.url(),
        "--ship-create-schema",
    ]));
    let import = dir.path().join("import.db");
    let audit = support::repo_root().join("tests/fixtures/audit/widget-status-forbidden.jsonl");
    run_ok(
        diag(&import)
            .args(["import", "--cluster", "staging-eu"])
            .arg(&audit),
    );
    let first = run_ok(diag_ch(&import).args(["ship", "--to", &front.url()]));
    assert!(
        String::from_utf8_lossy(&first.stdout).contains("shipped"),
        "{first:?}"
    );
    let refusals = front.count("SELECT count() FROM refusals");
    run_ok(diag_ch(&import).args(["ship", "--to", &front.url()]));
    assert_eq!(
        front.count("SELECT count() FROM refusals"),
        refusals,
        "a second ship inserted nothing new"
    );

    let store = |args: &[&str]| -> String {
        let out = diag_ch(&db)
            .env_remove("KUBECTL_DIAG_DB")
            .args(args)
            .args(["--store", &front.url()])
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap() + &String::from_utf8_lossy(&out.stderr)
    };
    let changes = store(&["changes", "--all-clusters", "--since", "2000d"]);
    assert!(
        changes.lines().next().unwrap().contains("CLUSTER"),
        "{changes}"
    );
    assert!(changes.contains("staging-eu"), "{changes}");
    let check = store(&["check", "--all-clusters"]);
    assert!(
        check
            .lines()
            .take(25)
            .any(|l| l.contains("staging-eu") && l.contains("H004")),
        "{check}"
    );
    let query = store(&[
        "query",
        "warnings-by-reason",
        "--since",
        "2000d",
        "--all-clusters",
    ]);
    assert!(query.lines().next().unwrap().contains("CLUSTER"), "{query}");
    assert!(query.contains("BackOff"), "{query}");
    // One cluster among several is chosen by name; none chosen is an error that lists them.
    let one = diag_ch(&db)
        .env_remove("KUBECTL_DIAG_DB")
        .args(["changes", "--since", "2000d", "--store", &front.url()])
        .output()
        .unwrap();
    assert_eq!(one.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&one.stderr).contains("--cluster"),
        "{one:?}"
    );
    let chosen = store(&[
        "timeline",
        "widgets.example.com/cart",
        "-n",
        "shop",
        "--cluster",
        "staging-eu",
    ]);
    assert!(chosen.contains("refused"), "{chosen}");
}

/// Regression (issue 44.2): ClickHouse's TTL on `versions.at` dropped every
/// version of an object unchanged for longer than --retain, where SQLite's
/// retention keeps each object's latest: `--store` readers lost quiet objects.
#[tokio::test]
async fn an_object_untouched_past_the_ttl_keeps_its_latest_version_in_the_store() {
    let front = Front::start();
    let ns = TestNamespace::new("ch-quiet").await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    let maps: kube::Api<ConfigMap> = ns.api();
    maps.create(
        &PostParams::default(),
        &serde_json::from_value(json!({"metadata": {"name": "quiet"}, "data": {"k": "v"}}))
            .unwrap(),
    )
    .await
    .unwrap();
    run_ok(diag_ch(&db).args([
        "record",
        "--once",
        "--quiet",
        "-n",
        &ns.name,
        "--retain",
        "8s",
        "--ship",
        &front.url(),
        "--ship-create-schema",
    ]));
    // NB: a TTL of 8 s, not 2: ClickHouse drops rows already past their TTL
    // as it inserts them, and a loaded run took over 2 s from the list to the
    // insert (the version was never there to be kept).
    let of_quiet = "WHERE kind = 'ConfigMap' AND name = 'quiet'";
    assert_eq!(
        front.count(&format!("SELECT count() FROM versions FINAL {of_quiet}")),
        1
    );
    // Past the TTL, and merged: ClickHouse applies a TTL when it merges.
    std::thread::sleep(Duration::from_secs(9));
    front.sql("OPTIMIZE TABLE versions FINAL");
    front.sql("OPTIMIZE TABLE latest_versions FINAL");
    assert_eq!(
        front.count(&format!("SELECT count() FROM versions {of_quiet}")),
        0,
        "the TTL dropped the version (what this test is about)"
    );
    assert_eq!(
        front.count(&format!(
            "SELECT count() FROM latest_versions FINAL {of_quiet}"
        )),
        1
    );

    let timeline = |source: &[&str]| -> String {
        let out = run_ok(
            diag_ch(&db)
                .env_remove("KUBECTL_DIAG_DB")
                .args(["timeline", "configmap/quiet", "-n", &ns.name, "-o", "json"])
                .args(source),
        );
        String::from_utf8(out.stdout).unwrap()
    };
    // NB: `since` and `until` are each run's now, and so is the subject's
    // "not deleted by" (regression: a CI run's two reads straddled a second).
    let told = |json: String| -> serde_json::Value {
        let mut v: serde_json::Value = serde_json::from_str(&json).unwrap();
        v.as_object_mut().unwrap().remove("since");
        v.as_object_mut().unwrap().remove("until");
        let subject = v["summary"]["subject"].as_str().unwrap_or_default();
        if let Some((kept, _now)) = subject.split_once(", not deleted by ") {
            v["summary"]["subject"] =
                serde_json::Value::from(format!("{kept}, not deleted by (now)"));
        }
        v
    };
    let stored = told(timeline(&["--store", &front.url()]));
    let recorded = told(timeline(&["--db", db.to_str().unwrap()]));
    assert_eq!(stored["entries"][0]["reason"], "Created", "{stored}");
    assert_eq!(stored, recorded, "the store tells what the file tells");
    let table = run_ok(diag_ch(&db).env_remove("KUBECTL_DIAG_DB").args([
        "timeline",
        "configmap/quiet",
        "-n",
        &ns.name,
        "--store",
        &front.url(),
    ]));
    let table = String::from_utf8(table.stdout).unwrap();
    assert!(!table.contains("not found"), "{table}");
    // Pulled whole (changes --store reads read/versions.sql): once, not twice.
    let changes = |source: &[&str]| -> String {
        let out = run_ok(
            diag_ch(&db)
                .env_remove("KUBECTL_DIAG_DB")
                .args(["changes", "-n", &ns.name, "--since", "1h", "-o", "json"])
                .args(source),
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let stored = told(changes(&["--store", &front.url()]));
    assert_eq!(stored, told(changes(&["--db", db.to_str().unwrap()])));
    let quiet = stored["items"].as_array().unwrap().iter();
    assert_eq!(
        quiet.filter(|i| i["name"] == "quiet").count(),
        1,
        "{stored}"
    );
}

/// `sql --store` reads; a write is refused by us and by the server, and changes nothing.
#[tokio::test]
async fn sql_writes_against_clickhouse_are_refused() {
    let front = Front::start();
    let dir = tempfile::tempdir().unwrap();
    let import = dir.path().join("import.db");
    let audit = support::repo_root().join("tests/fixtures/audit/widget-status-forbidden.jsonl");
    run_ok(
        diag(&import)
            .args(["import", "--cluster", "staging-eu"])
            .arg(&audit),
    );
    run_ok(diag_ch(&import).args(["ship", "--to", &front.url(), "--create-schema"]));
    let before = front.count("SELECT count() FROM refusals");
    let sql = |statement: &str| {
        diag_ch(&import)
            .args(["sql", "--store", &front.url(), statement])
            .output()
            .unwrap()
    };
    let read = sql("SELECT cluster, count() AS n FROM refusals FINAL GROUP BY cluster");
    assert!(read.status.success(), "{read:?}");
    assert!(String::from_utf8_lossy(&read.stdout).contains("staging-eu"));
    for write in [
        "DROP TABLE refusals",
        "INSERT INTO refusals (cluster) VALUES ('x')",
        "SELECT 1; TRUNCATE TABLE refusals",
        "ALTER TABLE refusals DELETE WHERE 1",
    ] {
        let out = sql(write);
        assert_eq!(out.status.code(), Some(2), "{write}: {out:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("read-only"),
            "{write}: {out:?}"
        );
    }
    assert_eq!(front.count("SELECT count() FROM refusals"), before);
}

/// A wrong password or a missing schema stops `record --ship` before it
/// records anything, saying what to fix; a store that does not answer is a
/// warning and the recording goes on.
#[tokio::test]
async fn a_store_that_refuses_stops_the_recorder_and_one_that_is_away_does_not() {
    let front = Front::start();
    let ns = TestNamespace::new("ch-refuse").await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    let wrong = diag(&db)
        .env("KUBECTL_DIAG_CLICKHOUSE_PASSWORD", "wrong")
        .args([
            "record",
            "--once",
            "--quiet",
            "-n",
            &ns.name,
            "--ship",
            &front.url(),
            "--ship-create-schema",
        ])
        .output()
        .unwrap();
    assert_eq!(wrong.status.code(), Some(2), "{wrong:?}");
    let said = String::from_utf8_lossy(&wrong.stderr);
    assert!(
        said.contains("password") && !said.contains(PASSWORD),
        "{said}"
    );
    let no_schema = diag_ch(&db)
        .args([
            "record",
            "--once",
            "--quiet",
            "-n",
            &ns.name,
            "--ship",
            &front.url(),
        ])
        .output()
        .unwrap();
    assert_eq!(no_schema.status.code(), Some(2), "{no_schema:?}");
    assert!(
        String::from_utf8_lossy(&no_schema.stderr).contains("--ship-create-schema"),
        "{no_schema:?}"
    );
    let away: PathBuf = dir.path().join("away.db");
    let port = support::free_local_addr();
    let out = diag_ch(&away)
        .args([
            "record",
            "--once",
            "--quiet",
            "-n",
            &ns.name,
            "--ship",
            &format!("clickhouse://diag@{port}/diag"),
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("does not answer"),
        "{out:?}"
    );
    assert!(
        sqlite_count(&away, "SELECT count(*) FROM outbox") > 0,
        "what was not shipped waits in the outbox"
    );
}
