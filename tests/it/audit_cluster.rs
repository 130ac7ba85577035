//! `import` of the real kube-apiserver's audit log (issue 30): the local
//! apiserver writes one (`scripts/cluster`: Metadata for most, RequestResponse
//! for workloads, Secrets and Events; reads left out). Writes by two people
//! with client certificates of their own (CN alice, CN bob), a Secret, writes
//! refused by RBAC; the log imported into a fresh recording and next to a
//! live one.

use crate::support;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use support::{
    TestNamespace, apply, diag, kubeconfig, kubectl, run_ok, start_recorder, wait_available,
};

fn people() -> (std::path::PathBuf, std::path::PathBuf) {
    let state = kubeconfig().parent().unwrap().to_path_buf();
    let (alice, bob) = (state.join("alice.kubeconfig"), state.join("bob.kubeconfig"));
    assert!(
        alice.exists() && bob.exists(),
        "{} is missing: the test cluster was started by an older scripts/cluster; \
         run `scripts/cluster down && scripts/cluster up`",
        alice.display()
    );
    (alice, bob)
}

/// (versions, occurrences, refusals) stored in a recording.
fn counts(db: &Path) -> (i64, i64, i64) {
    let c = support::open_fresh(db).unwrap();
    let one = |sql: &str| c.query_row(sql, [], |r| r.get::<_, i64>(0)).unwrap();
    (
        one("SELECT count(*) FROM versions"),
        one("SELECT coalesce(sum(n), 0) FROM occurrences"),
        one("SELECT count(*) FROM refusals"),
    )
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Every file of a recording (the database, its WAL) as bytes.
fn recording_bytes(db: &Path) -> Vec<u8> {
    let mut all = Vec::new();
    for suffix in ["", "-wal", "-shm"] {
        let p = format!("{}{suffix}", db.display());
        if let Ok(b) = std::fs::read(&p) {
            all.extend(b);
        }
    }
    all
}

/// Standard base64, as the apiserver writes a Secret's `data`.
fn base64(bytes: &[u8]) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(A[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn contains(hay: &[u8], needle: &str) -> bool {
    hay.windows(needle.len()).any(|w| w == needle.as_bytes())
}

#[tokio::test]
async fn an_audit_log_names_the_people_keeps_secrets_out_and_imports_exactly_once() {
    let (alice, bob) = people();
    let ns = TestNamespace::new("audit").await;
    let n = ns.name.as_str();
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("live.db");
    let recorder = start_recorder(&live, n, &[], &format!("pods/{n}")).await;

    kubectl(&[
        "create",
        "rolebinding",
        "people",
        "--clusterrole=edit",
        "--user=alice",
        "--user=bob",
        "-n",
        n,
    ]);
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
    spec: {containers: [{name: app, image: "shop:1"}]}
"#,
    );
    let deployments: kube::Api<Deployment> = ns.api();
    wait_available(&deployments, "web", 1).await;
    let alice_arg = format!("--kubeconfig={}", alice.display());
    let bob_arg = format!("--kubeconfig={}", bob.display());
    kubectl(&[&alice_arg, "scale", "deploy/web", "--replicas=3", "-n", n]);
    std::thread::sleep(Duration::from_secs(2));
    kubectl(&[
        &bob_arg,
        "set",
        "image",
        "deploy/web",
        "app=shop:2",
        "-n",
        n,
    ]);
    let secret = format!("pa55-{}", support::uuid_suffix());
    kubectl(&[
        "create",
        "secret",
        "generic",
        "creds",
        &format!("--from-literal=password={secret}"),
        "-n",
        n,
    ]);
    // A user with no rights tries again and again: refused writes, kept.
    let viewer = format!("--kubeconfig={}", support::viewer_kubeconfig().display());
    for _ in 0..3 {
        let out = Command::new(support::repo_root().join("scripts/cluster"))
            .args([
                "kubectl",
                &viewer,
                "create",
                "configmap",
                "settings",
                "-n",
                n,
            ])
            .env("DIAG_CLUSTER_DIR", kubeconfig().parent().unwrap())
            .output()
            .unwrap();
        assert!(!out.status.success(), "the viewer may not write");
    }
    wait_available(&deployments, "web", 3).await;
    std::thread::sleep(Duration::from_secs(3));
    assert!(recorder.terminate().success());

    // What a user would hand over: the audit entries of the namespace, gzipped.
    let whole = std::fs::read_to_string(kubeconfig().with_file_name("logs/audit.log")).unwrap();
    let mine: String = whole
        .lines()
        .filter(|l| l.contains(&format!("\"namespace\":\"{n}\"")))
        .map(|l| format!("{l}\n"))
        .collect();
    let encoded = base64(secret.as_bytes());
    assert!(
        mine.contains(&encoded),
        "the audit log holds the Secret's value (level RequestResponse): the test proves something"
    );
    let log = dir.path().join("audit.log.gz");
    {
        use std::io::Write as _;
        let mut gz = flate2::write::GzEncoder::new(
            std::fs::File::create(&log).unwrap(),
            flate2::Compression::fast(),
        );
        gz.write_all(mine.as_bytes()).unwrap();
        gz.finish().unwrap();
    }

    // Into a fresh recording.
    let fresh = dir.path().join("fresh.db");
    let out = run_ok(diag(&fresh).args(["import", log.to_str().unwrap()]));
    let said = stdout(&out);
    assert!(said.contains("audit log (apiserver log)"), "{said}");
    let changes = stdout(&run_ok(
        diag(&fresh).args(["changes", "-n", n, "--since", "1h"]),
    ));
    let line = |needle: &[&str]| {
        changes
            .lines()
            .any(|l| needle.iter().all(|w| l.contains(w)))
    };
    assert!(
        line(&["Deployment/web", "alice (kubectl", "spec.replicas 1 → 3"]),
        "{changes}"
    );
    assert!(
        line(&["Deployment/web", "bob (kubectl-set)", "shop:1 → shop:2"]),
        "{changes}"
    );
    let timeline = stdout(&run_ok(diag(&fresh).args([
        "timeline",
        "deploy/web",
        "-n",
        n,
    ])));
    let first_screen: Vec<&str> = timeline.lines().take(25).collect();
    let screen = first_screen.join("\n");
    assert!(screen.contains("by alice (kubectl"), "{timeline}");
    assert!(screen.contains("by bob (kubectl-set)"), "{timeline}");
    let bytes = recording_bytes(&fresh);
    assert!(
        !contains(&bytes, &secret),
        "the Secret's value is in the recording"
    );
    assert!(
        !contains(&bytes, &encoded),
        "the Secret's value (base64) is in the recording"
    );
    let out = diag(&fresh)
        .args(["check", "hotloop", "--db", fresh.to_str().unwrap(), "-n", n])
        .output()
        .unwrap();
    let check = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "a warning: {check}");
    assert!(
        check.contains("H004")
            && check.contains("ConfigMap/(new)")
            && check.contains("create configmaps refused 3 times")
            && check.contains("403 Forbidden by authorization): viewer (kubectl-create)"),
        "{check}"
    );

    // Again: nothing more.
    let once = counts(&fresh);
    assert!(once.0 > 0 && once.1 > 0 && once.2 >= 3, "{once:?}");
    let again = stdout(&run_ok(
        diag(&fresh).args(["import", log.to_str().unwrap()]),
    ));
    assert!(again.contains("imported before (by auditID)"), "{again}");
    assert_eq!(counts(&fresh), once);

    // Next to the live recording of the same writes: merged, nothing doubled,
    // and the recorded versions now name the people.
    let label: String = support::open_fresh(&live)
        .unwrap()
        .query_row("SELECT label FROM clusters", [], |r| r.get(0))
        .unwrap();
    let before = counts(&live);
    let merged = stdout(&run_ok(diag(&live).args([
        "import",
        "--cluster",
        &label,
        log.to_str().unwrap(),
    ])));
    assert!(merged.contains("the recording holds already"), "{merged}");
    let after = counts(&live);
    assert_eq!(
        (after.0, after.1),
        (before.0, before.1),
        "versions and occurrences of the live recording doubled: {merged}"
    );
    let changes = stdout(&run_ok(
        diag(&live).args(["changes", "-n", n, "--since", "1h"]),
    ));
    assert!(
        changes
            .lines()
            .any(|l| l.contains("bob (kubectl-set)") && l.contains("shop:1 → shop:2")),
        "{changes}"
    );
    // Regression: alice's `kubectl scale` went through the scale subresource,
    // whose answer is a Scale, not the Deployment: the recorded version
    // stayed "kubectl/scale" with no person.
    let scaled: Vec<&str> = changes
        .lines()
        .filter(|l| l.contains("Deployment/web") && l.contains("spec.replicas 1 → 3"))
        .collect();
    assert!(
        scaled.len() == 1 && scaled[0].contains("alice (kubectl"),
        "{changes}"
    );
    // Issue 43: those lines say the recorder saw them and the audit log named
    // who; what no audit entry named stays the recorder's, said by no field.
    let json: serde_json::Value = serde_json::from_slice(
        &run_ok(diag(&live).args(["changes", "-n", n, "--since", "1h", "-o", "json"])).stdout,
    )
    .unwrap();
    let items = json["items"].as_array().unwrap();
    let of = |writer: &str, path: &str| -> Vec<&serde_json::Value> {
        items
            .iter()
            .filter(|i| {
                i["writers"].to_string().contains(writer) && i["diff"].to_string().contains(path)
            })
            .collect()
    };
    for (writer, path) in [
        ("bob (kubectl-set)", "image"),
        ("alice (kubectl", "spec.replicas"),
    ] {
        let found = of(writer, path);
        assert!(
            found.len() == 1 && found[0]["provenance"] == "recorded-writer-from-audit-log",
            "{writer}: {json:#}"
        );
    }
    // The recorder saw every version here; what only the log tells (touches:
    // writes of types it did not watch, bodies the log left out) is the log's.
    for i in items {
        let expected: &[&str] = if i["change"] == "touch" {
            &["audit-log"]
        } else {
            &["recorded-writer-from-audit-log", "null"]
        };
        assert!(
            expected.contains(&i["provenance"].to_string().trim_matches('"')),
            "{i:#}"
        );
    }
    assert!(!contains(&recording_bytes(&live), &encoded));
}

/// Regression (issue 33 made the recorder hold its transaction for seconds):
/// an import into the file a recorder is writing, while Events arrive, waits
/// its turn and lands; the recorder goes on.
#[tokio::test]
async fn an_import_into_the_file_a_recorder_writes_lands_while_events_arrive() {
    use k8s_openapi::api::core::v1::Event;
    use kube::api::PostParams;
    let ns = TestNamespace::new("audit-live").await;
    let n = ns.name.clone();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("live.db");
    let recorder = start_recorder(&db, &n, &["--events-only"], &format!("events/{n}")).await;
    let events: kube::Api<Event> = ns.api();
    let feed = tokio::spawn(async move {
        for i in 0..60 {
            let e: Event = serde_json::from_value(serde_json::json!({
                "metadata": {"name": format!("e-{i}")},
                "involvedObject": {"kind": "Pod", "name": "web-1", "namespace": n, "apiVersion": "v1"},
                "reason": "BackOff", "type": "Warning", "message": format!("event {i}"),
                "count": 1, "firstTimestamp": chrono::Utc::now().to_rfc3339(),
                "lastTimestamp": chrono::Utc::now().to_rfc3339(),
                "source": {"component": "kubelet"}
            }))
            .unwrap();
            events.create(&PostParams::default(), &e).await.unwrap();
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    });
    tokio::time::sleep(Duration::from_secs(2)).await;
    let fixture = support::repo_root().join("tests/fixtures/audit/k8s-audit-log.jsonl");
    for _ in 0..3 {
        let out = diag(&db).args(["import"]).arg(&fixture).output().unwrap();
        assert!(
            out.status.success(),
            "import into a live recording: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    feed.await.unwrap();
    assert!(recorder.terminate().success());
}

/// Issue 48: a scale through the subresource by one person, an image change
/// by another, a deletion by a third made through impersonation. Imported
/// as the apiserver logged them (workloads at RequestResponse), as a policy
/// at Metadata level logs them (the same entries without bodies: what the
/// apiserver writes at that level), and newest first: each write is its
/// writer's alone, on the first screen, and no other writer's change is
/// told as theirs.
#[tokio::test]
async fn each_write_is_its_writers_alone_at_every_level_and_in_any_order() {
    let (alice, bob) = people();
    let ns = TestNamespace::new("audit-who").await;
    let n = ns.name.as_str();
    kubectl(&[
        "create",
        "rolebinding",
        "people",
        "--clusterrole=edit",
        "--user=alice",
        "--user=bob",
        "--user=carol@example.com",
        "-n",
        n,
    ]);
    apply(
        n,
        r#"apiVersion: apps/v1
kind: Deployment
metadata: {name: billing}
spec:
  replicas: 2
  selector: {matchLabels: {app: billing}}
  template:
    metadata: {labels: {app: billing}}
    spec: {containers: [{name: app, image: "billing:1"}]}
"#,
    );
    let deployments: kube::Api<Deployment> = ns.api();
    wait_available(&deployments, "billing", 2).await;
    let alice_arg = format!("--kubeconfig={}", alice.display());
    let bob_arg = format!("--kubeconfig={}", bob.display());
    kubectl(&[&bob_arg, "scale", "deploy/billing", "--replicas=0", "-n", n]);
    std::thread::sleep(Duration::from_millis(1500));
    kubectl(&[
        &alice_arg,
        "set",
        "image",
        "deploy/billing",
        "app=billing:2",
        "-n",
        n,
    ]);
    std::thread::sleep(Duration::from_millis(1500));
    kubectl(&[
        "delete",
        "deploy/billing",
        "--as=carol@example.com",
        "-n",
        n,
    ]);
    std::thread::sleep(Duration::from_secs(2));

    let whole = std::fs::read_to_string(kubeconfig().with_file_name("logs/audit.log")).unwrap();
    let mine: Vec<&str> = whole
        .lines()
        .filter(|l| l.contains(&format!("\"namespace\":\"{n}\"")))
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, lines: &[String]| {
        let p = dir.path().join(name);
        std::fs::write(&p, lines.join("\n") + "\n").unwrap();
        p
    };
    let logged: Vec<String> = mine.iter().map(|l| l.to_string()).collect();
    // What the apiserver writes at level Metadata: the same entry, no bodies.
    let metadata: Vec<String> = mine
        .iter()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            let m = v.as_object_mut().unwrap();
            m.remove("requestObject");
            m.remove("responseObject");
            m.insert("level".into(), "Metadata".into());
            v.to_string()
        })
        .collect();
    let newest_first: Vec<String> = logged.iter().rev().cloned().collect();

    let changes_of = |file: &Path| -> (String, String) {
        let db = file.with_extension("db");
        run_ok(diag(&db).args(["import", file.to_str().unwrap()]));
        let table = stdout(&run_ok(
            diag(&db).args(["changes", "-n", n, "--since", "1h", "-o", "wide"]),
        ));
        let json = stdout(&run_ok(
            diag(&db).args(["changes", "-n", n, "--since", "1h", "-o", "json"]),
        ));
        // NB: the window's ends are the moment of the run.
        let json: serde_json::Value = serde_json::from_str(&json).unwrap();
        (table, json["items"].to_string())
    };
    let only = |table: &str, object: &str| -> Vec<String> {
        table
            .lines()
            .filter(|l| l.contains(object))
            .map(str::to_string)
            .collect()
    };

    // As logged: bodies for workloads.
    let (table, json) = changes_of(&write("logged.log", &logged));
    let lines = only(&table, "Deployment/billing");
    let at = |needle: &[&str]| {
        lines
            .iter()
            .position(|l| needle.iter().all(|w| l.contains(w)))
            .unwrap_or_else(|| panic!("no line with {needle:?} in\n{table}"))
    };
    let scaled = at(&["spec.replicas 2 → 0", "bob (kubectl)"]);
    let image = at(&["billing:1 → billing:2", "alice (kubectl-set)"]);
    // NB: the log holds the Scale (its spec empty: replicas 0 is omitted):
    // nothing about bob's write is inferred (a regression: it was).
    assert!(!lines[scaled].contains("[inferred]"), "{table}");
    let deleted = at(&["deleted", "carol@example.com [impersonated by"]);
    assert!(scaled < image && image < deleted, "out of order:\n{table}");
    assert!(
        !lines
            .iter()
            .any(|l| l.contains("alice") && l.contains("spec.replicas")),
        "bob's scale told as alice's:\n{table}"
    );

    // Newest first: the same story, byte for byte.
    let (_, reversed) = changes_of(&write("newest-first.log", &newest_first));
    assert_eq!(reversed, json, "a newest-first log tells another story");

    // At Metadata level: every write by its writer, none with a diff it cannot know.
    let meta_file = write("metadata.log", &metadata);
    let (table, _) = changes_of(&meta_file);
    let lines = only(&table, "Deployment/billing");
    let at = |needle: &[&str]| {
        lines
            .iter()
            .position(|l| needle.iter().all(|w| l.contains(w)))
            .unwrap_or_else(|| panic!("no line with {needle:?} in\n{table}"))
    };
    let created = at(&["created", "no body"]);
    let scaled = at(&["scaled", "bob (kubectl"]);
    let patched = at(&["patched", "alice (kubectl-set)"]);
    let deleted = at(&["deleted", "carol@example.com [impersonated by"]);
    assert!(
        created < scaled && scaled < patched && patched < deleted,
        "{table}"
    );
    assert!(
        !table.contains(" → billing:2"),
        "a diff no body shows:\n{table}"
    );
    // "Who deleted it?" on the first screen of its timeline.
    let db = meta_file.with_extension("db");
    let timeline = stdout(&run_ok(diag(&db).args([
        "timeline",
        "deploy/billing",
        "-n",
        n,
    ])));
    let screen: Vec<&str> = timeline.lines().take(25).collect();
    let pos = |w: &str| {
        screen
            .iter()
            .position(|l| l.contains(w))
            .unwrap_or_else(|| panic!("{w} not on the first screen:\n{timeline}"))
    };
    assert!(
        pos("by bob (kubectl") < pos("by alice (kubectl-set)"),
        "{timeline}"
    );
    // The deleter: on the summary's first line (`Object: … deleted T by …`)
    // when the object is known, else in its place in time.
    let carol = pos("carol@example.com [impersonated by");
    assert!(
        (carol == 0 && screen[0].contains("deleted") && screen[0].starts_with("Object:"))
            || carol > pos("by alice (kubectl-set)"),
        "{timeline}"
    );
}

/// Issue 48: a recording and its own cluster's audit log, imported with no
/// `--cluster`: the log joins the recorded cluster (matched by uid, said),
/// and "who deleted it" is on the deleted Deployment's first screen. Before,
/// the log became a second cluster `imported` and `timeline` refused.
#[tokio::test]
async fn a_recordings_own_audit_log_joins_it_and_names_who_deleted() {
    let ns = TestNamespace::new("audit-join").await;
    let n = ns.name.as_str();
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("live.db");
    let recorder = start_recorder(&live, n, &[], &format!("deployments.apps/{n}")).await;
    kubectl(&[
        "create",
        "rolebinding",
        "people",
        "--clusterrole=edit",
        "--user=carol@example.com",
        "-n",
        n,
    ]);
    apply(
        n,
        r#"apiVersion: apps/v1
kind: Deployment
metadata: {name: ledger}
spec:
  replicas: 1
  selector: {matchLabels: {app: ledger}}
  template:
    metadata: {labels: {app: ledger}}
    spec: {containers: [{name: app, image: "ledger:1"}]}
"#,
    );
    let deployments: kube::Api<Deployment> = ns.api();
    wait_available(&deployments, "ledger", 1).await;
    kubectl(&["delete", "deploy/ledger", "--as=carol@example.com", "-n", n]);
    std::thread::sleep(Duration::from_secs(3));
    assert!(recorder.terminate().success());
    let whole = std::fs::read_to_string(kubeconfig().with_file_name("logs/audit.log")).unwrap();
    let mine: String = whole
        .lines()
        .filter(|l| l.contains(&format!("\"namespace\":\"{n}\"")))
        .map(|l| format!("{l}\n"))
        .collect();
    let log = dir.path().join("audit.log");
    std::fs::write(&log, mine).unwrap();
    let said = stdout(&run_ok(diag(&live).args(["import", log.to_str().unwrap()])));
    assert!(said.contains("joined the recording of cluster"), "{said}");
    let clusters: i64 = support::open_fresh(&live)
        .unwrap()
        .query_row("SELECT count(*) FROM clusters", [], |r| r.get(0))
        .unwrap();
    assert_eq!(clusters, 1, "the log made a cluster of its own: {said}");
    let timeline = stdout(&run_ok(diag(&live).args([
        "timeline",
        "deploy/ledger",
        "-n",
        n,
    ])));
    let first = timeline.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("Object:")
            && first.contains("deleted")
            && first.contains("by carol@example.com [impersonated by"),
        "{timeline}"
    );
}
