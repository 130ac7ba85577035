//! `import` of audit logs in every shape people have them (fixtures in
//! tests/fixtures/audit, their sources in its README): the same facts from
//! each, stored once. No cluster: the real apiserver's log is
//! tests/it/audit_cluster.rs.

use crate::support::cli;

use cli::{offline, run, write};

fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/audit/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// `timeline TARGET -n NS` over every time, with `extra` arguments.
fn timeline_of(db: &std::path::Path, target: &str, ns: &str, extra: &[&str]) -> String {
    let (code, out, err) = run(offline(db)
        .args(["timeline", target, "-n", ns, "--since", "100000h"])
        .args(extra));
    assert_eq!(code, Some(0), "{target}: {err}");
    out
}

/// `timeline TARGET -n NS -o json` over every time: (the text, the document).
fn timeline_json(db: &std::path::Path, target: &str, ns: &str) -> (String, serde_json::Value) {
    let out = timeline_of(db, target, ns, &["-o", "json"]);
    let json = serde_json::from_str(&out).unwrap();
    (out, json)
}

/// The transition entries of a `timeline -o json` document.
fn transitions(json: &serde_json::Value) -> Vec<&serde_json::Value> {
    json["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["entry"] == "transition")
        .collect()
}

/// Imports `file` into a fresh recording: (its first stdout line, `changes -A`).
fn import(file: &str) -> (String, String, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let (code, out, err) = run(offline(&db).args(["import", file]));
    assert_eq!(code, Some(0), "{file}: {err}");
    let (_, changes, _) = run(offline(&db).args(["changes", "-A", "--since", "100000h"]));
    (out, changes, dir)
}

fn refusals(dir: &tempfile::TempDir) -> Vec<(String, i64)> {
    let c = rusqlite::Connection::open(dir.path().join("r.db")).unwrap();
    let mut st = c
        .prepare("SELECT user, code FROM refusals ORDER BY at")
        .unwrap();
    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

const IMAGE: &str = "spec.template.spec.containers[web].image ? → nginx:1.25.5";

#[test]
fn every_shape_reads_as_the_same_writes_by_the_same_people() {
    for (file, shape, who) in [
        (
            "k8s-audit-log.jsonl",
            "apiserver log",
            "alice (kubectl-set)",
        ),
        (
            "eks-cloudwatch-events.jsonl",
            "CloudWatch Logs",
            "alice (kubectl-set)",
        ),
        (
            "eks-filter-log-events.json",
            "CloudWatch Logs",
            "alice (kubectl-set)",
        ),
        (
            "eks-get-log-events.json",
            "CloudWatch Logs",
            "alice (kubectl-set)",
        ),
        (
            "eks-subscription-payload.json",
            "CloudWatch Logs",
            "alice (kubectl-set)",
        ),
        (
            "eks-s3-export-000000.gz",
            "apiserver log",
            "alice (kubectl-set)",
        ),
        (
            "gke-gcloud-logging-read.json",
            "Cloud Logging",
            "alice@example.com (kubectl)",
        ),
        (
            "gke-gcs-sink-S0.jsonl",
            "Cloud Logging",
            "alice@example.com (kubectl)",
        ),
    ] {
        let (out, changes, dir) = import(&fixture(file));
        assert!(
            out.contains(&format!("audit log ({shape})")) && out.contains("1 refused"),
            "{file}: {out}"
        );
        // The patch of an object made before the log began: the field it set,
        // from unknown, by its writer, not the object's creation by them.
        assert!(
            changes.lines().any(|l| l.contains("default/Deployment/web")
                && l.contains(who)
                && l.contains(IMAGE)),
            "{file}:\n{changes}"
        );
        assert!(
            changes
                .lines()
                .any(|l| l.contains("created") && !l.contains("alice")),
            "{file}: the creation is nobody's:\n{changes}"
        );
        let refused = refusals(&dir);
        assert_eq!(refused.len(), 1, "{file}: {refused:?}");
        assert!(
            refused[0].0.starts_with("bob") && refused[0].1 == 403,
            "{file}: {refused:?}"
        );
    }
}

#[test]
fn an_event_list_is_read_item_by_item() {
    let (out, _, _) = import(&fixture("k8s-audit-eventlist.json"));
    assert!(
        out.contains("audit log (apiserver log), 2 entries"),
        "{out}"
    );
}

#[test]
fn the_same_file_twice_and_two_overlapping_shapes_store_each_write_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let native = fixture("k8s-audit-log.jsonl");
    let wrapped = fixture("eks-cloudwatch-events.jsonl");
    assert_eq!(run(offline(&db).args(["import", &native])).0, Some(0));
    let count = || {
        let c = rusqlite::Connection::open(&db).unwrap();
        let one = |sql: &str| c.query_row(sql, [], |r| r.get::<_, i64>(0)).unwrap();
        (
            one("SELECT count(*) FROM versions"),
            one("SELECT count(*) FROM refusals"),
        )
    };
    let once = count();
    let (code, out, _) = run(offline(&db).args(["import", &native, &wrapped]));
    assert_eq!(code, Some(0));
    assert_eq!(
        out.matches("2 write(s) imported before (by auditID)")
            .count(),
        2,
        "{out}"
    );
    assert_eq!(count(), once);
}

#[test]
fn a_broken_line_names_its_line_and_stores_nothing_of_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let good = std::fs::read_to_string(fixture("k8s-audit-log.jsonl")).unwrap();
    let first = good.lines().next().unwrap();
    let bad = write(
        dir.path(),
        "bad.jsonl",
        &format!("{first}\n{{\"kind\":\"Pod\"}}\n"),
    );
    let (code, _, err) = run(offline(&db).args(["import", bad.to_str().unwrap()]));
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("line 2 is not an audit entry") && err.contains("nothing of it was stored"),
        "{err}"
    );
    let c = rusqlite::Connection::open(&db).unwrap();
    let n: i64 = c
        .query_row("SELECT count(*) FROM audit_ids", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 0);
}

#[test]
fn an_iam_identity_behind_a_shared_user_name_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let line = r#"{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Request","auditID":"x1","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/shop/configmaps","verb":"create","user":{"username":"kubernetes-admin","extra":{"arn":["arn:aws:iam::111122223333:user/alice"]}},"objectRef":{"resource":"configmaps","namespace":"shop","apiVersion":"v1"},"responseStatus":{"code":403,"reason":"Forbidden"},"stageTimestamp":"2026-11-29T03:00:00.000000Z"}"#;
    let file = write(dir.path(), "eks.jsonl", &format!("{line}\n"));
    let db = dir.path().join("r.db");
    assert_eq!(
        run(offline(&db).args(["import", file.to_str().unwrap()])).0,
        Some(0)
    );
    let c = rusqlite::Connection::open(&db).unwrap();
    let user: String = c
        .query_row("SELECT user FROM refusals", [], |r| r.get(0))
        .unwrap();
    assert_eq!(
        user,
        "kubernetes-admin [arn:aws:iam::111122223333:user/alice]"
    );
}

/// The time no imported log covers is a gap of the imports: before the first
/// entry, between two logs, after the last; worked out again at each import.
#[test]
fn the_time_outside_every_imported_log_is_a_gap() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let native = std::fs::read_to_string(fixture("k8s-audit-log.jsonl")).unwrap();
    let later: String = native
        .lines()
        .map(|l| {
            l.replace("2024-05-12T10:", "2024-05-12T12:")
                .replace("\"auditID\":\"", "\"auditID\":\"later-")
                + "\n"
        })
        .collect();
    let later = write(dir.path(), "later.jsonl", &later);
    let gaps = || -> Vec<(i64, i64, String)> {
        let c = rusqlite::Connection::open(&db).unwrap();
        let mut st = c
            .prepare("SELECT start, finish, reason FROM gaps ORDER BY start")
            .unwrap();
        st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    let t = |s: &str| {
        chrono::DateTime::parse_from_rfc3339(s)
            .unwrap()
            .timestamp_millis()
    };
    assert_eq!(
        run(offline(&db).args(["import", &fixture("k8s-audit-log.jsonl")])).0,
        Some(0)
    );
    let first = gaps();
    assert_eq!(first.len(), 2, "{first:?}");
    assert_eq!((first[0].0, first[0].2.as_str()), (0, "not-imported"));
    assert_eq!(first[0].1, t("2024-05-12T10:15:02.118Z"));
    assert_eq!(first[1].0, t("2024-05-12T10:17:05Z").max(first[1].0));
    assert_eq!(
        run(offline(&db).args(["import", later.to_str().unwrap()])).0,
        Some(0)
    );
    let both = gaps();
    assert_eq!(both.len(), 3, "{both:?}");
    assert_eq!(
        (both[0].1, both[1].1),
        (first[0].1, t("2024-05-12T12:15:02.118Z"))
    );
    assert!(both[1].0 > both[0].1 && both[2].0 > both[1].1, "{both:?}");
    let (_, timeline, err) = run(offline(&db).args([
        "timeline",
        "deploy/web",
        "-n",
        "default",
        "--since",
        "2024-05-12T10:00:00Z",
        "--until",
        "2024-05-12T13:00:00Z",
    ]));
    assert!(timeline.contains("not-imported"), "{timeline}{err}");
    assert!(timeline.contains("no data from"), "{timeline}");
}

/// Regression: a custom resource known only from an audit log could not be
/// named (`no such resource type in the recording`), and its timeline's
/// Check line looked at "now", days after the log, and found nothing.
#[test]
fn an_operator_refused_on_a_custom_resource_is_on_the_first_screen() {
    let (_, _, dir) = import(&fixture("widget-status-forbidden.jsonl"));
    let db = dir.path().join("r.db");
    let (code, timeline, err) =
        run(offline(&db).args(["timeline", "widgets.example.com/cart", "-n", "shop"]));
    assert_eq!(code, Some(0), "{err}");
    let screen: Vec<&str> = timeline.lines().take(25).collect();
    assert!(
        screen.iter().any(|l| l.starts_with("Check:")
            && l.contains("H004")
            && l.contains("update widgets/cart/status refused")
            && l.contains("widget-operator")),
        "{timeline}"
    );
    let (_, check, _) = run(offline(&db).args(["check", "-A"]));
    let screen: Vec<&str> = check.lines().take(25).collect();
    assert!(
        screen
            .iter()
            .any(|l| l.contains("H004") && l.contains("Widget/cart")),
        "{check}"
    );
}

// ---- Issue 48: audit logs as they really come -------------------------------

/// Imports `files` into a fresh recording; returns (code, stdout, stderr, dir).
fn import_all(files: &[&str]) -> (Option<i32>, String, String, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let (code, out, err) = run(offline(&db).arg("import").args(files));
    (code, out, err, dir)
}

fn changes_in(dir: &tempfile::TempDir, extra: &[&str]) -> String {
    let db = dir.path().join("r.db");
    let (code, out, err) = run(offline(&db)
        .args(["changes", "-A", "--since", "100000h", "-o", "wide"])
        .args(extra));
    assert_eq!(code, Some(0), "{err}");
    out
}

/// OpenShift's Default profile logs every write at Metadata: no body. Each
/// write is still who, what, on which object, when (the node-logs prefix
/// read off every line).
#[test]
fn a_metadata_level_write_is_kept_with_its_person_and_says_what_is_unknown() {
    for file in [
        "openshift-node-logs.txt",
        "k8s-audit-v1beta1.jsonl",
        "k8s-audit-v1alpha1.jsonl",
    ] {
        let (code, out, err, dir) = import_all(&[&fixture(file)]);
        assert_eq!(code, Some(0), "{file}: {err}");
        assert!(out.contains("touch(es) without a body"), "{file}: {out}");
        let changes = changes_in(&dir, &[]);
        let line = |words: &[&str]| {
            changes
                .lines()
                .position(|l| words.iter().all(|w| l.contains(w)))
                .unwrap_or_else(|| panic!("{file}: no {words:?} in\n{changes}"))
        };
        let scaled = line(&["shop/Deployment/web", "scaled", "carol"]);
        let deleted = line(&["shop/Pod/web-7d4b9c5f8-abcde", "deleted", "carol"]);
        assert!(scaled < deleted, "{file}: out of order\n{changes}");
        assert!(
            changes.contains("no body (Metadata level)"),
            "{file}: the unknown is not said\n{changes}"
        );
        assert!(!changes.contains("1970"), "{file}: {changes}");
        // The refused read of the reporter, with who refused it.
        let c = rusqlite::Connection::open(dir.path().join("r.db")).unwrap();
        let refused: Vec<(String, String)> = c
            .prepare("SELECT verb, refused_by FROM refusals")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert!(
            refused.iter().any(|(v, _)| v == "list"),
            "{file}: the refused read is lost: {refused:?}"
        );
    }
}

/// Every vendor shape of the same story tells the same writes by the same
/// person, in the cluster the vendor names.
#[test]
fn every_vendor_shape_tells_who_scaled_and_who_deleted() {
    for (file, cluster) in [
        ("gke-gcloud-logging-read.yaml", ""),
        ("gke-logs-explorer-download.json", ""),
        ("eks-logs-insights-get-query-results.json", "shop-prod"),
        ("eks-logs-insights-export.json", "shop-prod"),
        ("eks-logs-insights-export.csv", "shop-prod"),
        ("aks-log-analytics-aksaudit.csv", ""),
        ("aks-storage-kube-audit.json", ""),
        ("aks-eventhub-records.json", ""),
        ("aks-log-analytics-aksaudit.json", ""),
        ("aks-log-analytics-azurediagnostics.json", ""),
    ] {
        let (code, out, err, dir) = import_all(&[&fixture(file)]);
        assert_eq!(code, Some(0), "{file}: {out}{err}");
        if !cluster.is_empty() {
            assert!(out.contains(&format!("{cluster:?}")), "{file}: {out}");
        }
        assert!(
            !out.contains("\"imported\""),
            "{file}: the cluster it names is lost: {out}"
        );
        let changes = changes_in(&dir, &[]);
        assert!(
            changes
                .lines()
                .any(|l| l.contains("shop/Deployment/web") && l.contains("carol")),
            "{file}: who scaled it?\n{changes}\n{err}"
        );
        assert!(
            changes.lines().any(|l| l.contains("web-7d4b9c5f8-abcde")
                && l.contains("deleted")
                && l.contains("carol")),
            "{file}: who deleted the Pod?\n{changes}"
        );
        // No recorder ever ran: no line, a deletion neither, is told as seen
        // by one (issue 43).
        assert!(
            changes
                .lines()
                .next()
                .is_some_and(|h| h.contains(" SOURCE "))
                && changes.lines().skip(1).all(|l| l.contains(" audit-log ")),
            "{file}:\n{changes}"
        );
    }
}

/// GKE's log of two clusters of one project: each write in its own cluster,
/// staging's change never in prod's story.
#[test]
fn two_clusters_in_one_log_stay_apart() {
    let (code, out, err, dir) = import_all(&[&fixture("gke-two-clusters.json")]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("gke_acme-shop_europe-west1_prod")
            && out.contains("gke_acme-shop_europe-west1-b_staging"),
        "{out}"
    );
    let prod = changes_in(&dir, &["--cluster", "gke_acme-shop_europe-west1_prod"]);
    let staging = changes_in(&dir, &["--cluster", "gke_acme-shop_europe-west1-b_staging"]);
    assert!(
        prod.contains("web:2.4.1") && !prod.contains("rc.1"),
        "{prod}"
    );
    assert!(
        staging.contains("rc.1") && !staging.contains("web:2.4.1"),
        "{staging}"
    );
}

/// A must-gather's audit_logs folder: every log under it, rotated and
/// gzipped, the rest (listings, termination.log) skipped.
#[test]
fn a_must_gather_folder_is_read_whole() {
    let (code, out, err, dir) = import_all(&[&fixture("must-gather")]);
    assert_eq!(code, Some(0), "{out}{err}");
    let changes = changes_in(&dir, &[]);
    assert!(
        changes
            .lines()
            .any(|l| l.contains("scaled") && l.contains("carol")),
        "{changes}\n{err}"
    );
}

/// The entries of a log in any order, split with overlap, concatenated:
/// the same recording, told the same (`changes -o json` byte for byte).
#[test]
fn any_order_split_or_concatenation_of_a_log_tells_the_same_story() {
    let lines: Vec<String> = std::fs::read_to_string(fixture("k8s-audit-log.jsonl"))
        .unwrap()
        .lines()
        .chain(
            std::fs::read_to_string(fixture("widget-status-forbidden.jsonl"))
                .unwrap()
                .lines(),
        )
        .map(str::to_string)
        .collect();
    let story = |files: Vec<Vec<String>>| -> String {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("r.db");
        let names: Vec<String> = files
            .iter()
            .enumerate()
            .map(|(i, f)| {
                write(
                    dir.path(),
                    &format!("part{i}.jsonl"),
                    &(f.join("\n") + "\n"),
                )
                .display()
                .to_string()
            })
            .collect();
        let (code, _, err) = run(offline(&db).arg("import").args(&names));
        assert_eq!(code, Some(0), "{err}");
        let (_, out, _) =
            run(offline(&db).args(["changes", "-A", "--since", "100000h", "-o", "json"]));
        // NB: the window's ends are the moment of the run.
        let json: serde_json::Value = serde_json::from_str(&out).unwrap();
        json["items"].to_string()
    };
    let whole = story(vec![lines.clone()]);
    assert!(whole.contains("nginx:1.25.5"), "{whole}");
    // A small deterministic generator: the same cases every run.
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    };
    for case in 0..6 {
        let mut shuffled = lines.clone();
        for i in (1..shuffled.len()).rev() {
            shuffled.swap(i, next(i + 1));
        }
        let files = match case % 3 {
            // Newest first.
            0 => vec![lines.iter().rev().cloned().collect()],
            // Shuffled, in one file.
            1 => vec![shuffled],
            // Split in two with an overlap, given in reverse order.
            _ => {
                let cut = 1 + next(lines.len() - 1);
                let overlap = cut.saturating_sub(3);
                vec![lines[overlap..].to_vec(), lines[..cut].to_vec()]
            }
        };
        assert_eq!(story(files), whole, "case {case}");
    }
}

/// Bob scales through the subresource (Metadata level: no body), then
/// alice's patch is logged with the object: the replicas alice's patch did
/// not set are not told as hers.
#[test]
fn a_scale_without_a_body_before_a_patch_is_not_the_patchers() {
    let t = |s: &str| format!("2026-11-29T03:0{s}Z");
    let dep = |replicas: i64, image: &str, generation: i64| {
        serde_json::json!({"kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":"billing","namespace":"shop","uid":"u-1","generation":generation,"creationTimestamp":"2026-11-29T02:00:00Z"},
            "spec":{"replicas":replicas,"selector":{"matchLabels":{"app":"b"}},"template":{"metadata":{"labels":{"app":"b"}},"spec":{"containers":[{"name":"app","image":image}]}}}})
    };
    let entry = |id: &str,
                 verb: &str,
                 sub: &str,
                 user: &str,
                 at: &str,
                 req: Option<serde_json::Value>,
                 resp: Option<serde_json::Value>| {
        let mut e = serde_json::json!({"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"RequestResponse","auditID":id,"stage":"ResponseComplete",
            "requestURI":"/apis/apps/v1/namespaces/shop/deployments/billing","verb":verb,"user":{"username":user},"userAgent":"kubectl/v1.34.0 (linux/amd64)",
            "objectRef":{"resource":"deployments","namespace":"shop","name":"billing","apiGroup":"apps","apiVersion":"v1","subresource":sub},
            "responseStatus":{"code":200},"stageTimestamp":t(at)});
        if let Some(r) = req {
            e["requestObject"] = r;
        }
        if let Some(r) = resp {
            e["responseObject"] = r;
        }
        e.to_string()
    };
    let log = [
        entry("a", "update", "", "admin", "0:00", Some(dep(2, "billing:1", 1)), Some(dep(2, "billing:1", 1))),
        // Metadata level: no body at all.
        entry("b", "patch", "scale", "bob", "1:00", None, None),
        entry("c", "patch", "", "alice", "2:00",
            Some(serde_json::json!({"spec":{"template":{"spec":{"containers":[{"name":"app","image":"billing:2"}]}}}})),
            Some(dep(0, "billing:2", 3))),
    ]
    .join("\n");
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "a.jsonl", &(log + "\n"));
    let db = dir.path().join("r.db");
    let (code, _, err) = run(offline(&db).args(["import", file.to_str().unwrap()]));
    assert_eq!(code, Some(0), "{err}");
    let (_, changes, _) =
        run(offline(&db).args(["changes", "-A", "--since", "100000h", "-o", "wide"]));
    let lines: Vec<&str> = changes
        .lines()
        .filter(|l| l.contains("Deployment/billing"))
        .collect();
    let scaled = lines
        .iter()
        .position(|l| l.contains("spec.replicas 2 → 0") && l.contains("bob (kubectl) [inferred]"));
    let image = lines
        .iter()
        .position(|l| l.contains("billing:1 → billing:2") && l.contains("alice (kubectl)"));
    assert!(
        scaled.is_some() && image.is_some() && scaled < image,
        "{changes}"
    );
    assert!(
        !lines
            .iter()
            .any(|l| l.contains("alice") && l.contains("replicas")),
        "bob's scale told as alice's:\n{changes}"
    );
}

/// Times that cannot be read: the entry is skipped and counted, never
/// stored at 1970; a last line cut short (a log being written) is a
/// warning and the rest is stored; a BOM and a one-line array are read.
#[test]
fn untimed_entries_torn_lines_boms_and_one_line_arrays() {
    let native = std::fs::read_to_string(fixture("k8s-audit-log.jsonl")).unwrap();
    let first = native
        .lines()
        .find(|l| l.contains("ResponseComplete") && l.contains("\"patch\""))
        .unwrap();
    let no_zone = first.replace("Z\"", "\"");
    let dir = tempfile::tempdir().unwrap();
    let torn = format!(
        "{}\n{no_zone}\n{}",
        native.trim_end(),
        &first[..first.len() / 2]
    );
    let file = write(dir.path(), "torn.jsonl", &format!("\u{feff}{torn}"));
    let db = dir.path().join("r.db");
    let (code, out, err) = run(offline(&db).args(["import", file.to_str().unwrap()]));
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(err.contains("last line is cut short"), "{err}");
    assert!(out.contains("no time that can be read"), "{out}");
    let (_, changes, _) = run(offline(&db).args(["changes", "-A", "--since", "100000h"]));
    assert!(
        changes.contains("nginx:1.25.5") && !changes.contains("1970"),
        "{changes}"
    );

    let gke = std::fs::read_to_string(fixture("gke-gcloud-logging-read.json")).unwrap();
    let compact: serde_json::Value = serde_json::from_str(&gke).unwrap();
    let file = write(dir.path(), "compact.json", &compact.to_string());
    let db = dir.path().join("c.db");
    let (code, out, err) = run(offline(&db).args(["import", file.to_str().unwrap()]));
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("audit log (Cloud Logging)"), "{out}");
}

/// A controller whose service account may not list what it reads does
/// nothing at all: its refused reads are H004 like refused writes, with who
/// refused them (RBAC's decision), not "No findings".
#[test]
fn a_controller_refused_its_reads_is_h004_with_the_authorizers_decision() {
    let line = |i: usize| {
        format!(
            r#"{{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"r{i}","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/shop/pods?limit=500","verb":"list","user":{{"username":"system:serviceaccount:shop:reporter"}},"userAgent":"reporter/v1.4.2 (linux/amd64)","objectRef":{{"resource":"pods","namespace":"shop","apiVersion":"v1"}},"responseStatus":{{"code":403,"reason":"Forbidden","message":"pods is forbidden: User \"system:serviceaccount:shop:reporter\" cannot list resource \"pods\" in API group \"\" in the namespace \"shop\""}},"stageTimestamp":"2026-11-29T03:0{i}:00.000000Z","annotations":{{"authorization.k8s.io/decision":"forbid","authorization.k8s.io/reason":""}}}}"#
        )
    };
    let dir = tempfile::tempdir().unwrap();
    let text: String = (0..4).map(|i| line(i) + "\n").collect();
    let file = write(dir.path(), "reads.jsonl", &text);
    let db = dir.path().join("r.db");
    let (code, out, err) = run(offline(&db).args(["import", file.to_str().unwrap()]));
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("4 refused read(s)"), "{out}");
    let (code, check, err) = run(offline(&db).args([
        "check",
        "hotloop",
        "--db",
        db.to_str().unwrap(),
        "-n",
        "shop",
    ]));
    assert_eq!(code, Some(1), "{check}{err}");
    let h004 = check
        .lines()
        .find(|l| l.contains("H004"))
        .unwrap_or_else(|| panic!("{check}"));
    assert!(
        h004.contains("list pods refused 4 times")
            && h004.contains("by authorization")
            && h004.contains("reporter"),
        "{check}"
    );
}

/// `--cluster` naming a recorded cluster none of whose objects the log
/// writes: the log is another cluster's, refused with the fix, nothing
/// stored (its writes would have been told as that cluster's).
#[test]
fn a_log_of_another_cluster_named_into_a_recording_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    // A recorded cluster, as a recorder leaves it: a cluster and a session.
    let (code, _, err) = run(offline(&db).args(["import", &fixture("k8s-audit-log.jsonl")]));
    assert_eq!(code, Some(0), "{err}");
    {
        let c = rusqlite::Connection::open(&db).unwrap();
        c.execute_batch(
            "INSERT INTO clusters (uid, label, server, added) VALUES ('0b1e-prod', 'kind-prod', '', 0);
             INSERT INTO recorder_sessions (cluster_id, host, pid, version, started, heartbeat, stopped, mode)
             SELECT id, 'h', 1, 'v', 0, 0, 1, 'watch' FROM clusters WHERE uid = '0b1e-prod';",
        )
        .unwrap();
    }
    let entry = |i: usize| {
        serde_json::json!({"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"RequestResponse","auditID":format!("m{i}"),
            "stage":"ResponseComplete","requestURI":"/api/v1/namespaces/shop/configmaps","verb":"create","user":{"username":"alice"},
            "objectRef":{"resource":"configmaps","namespace":"shop","name":format!("c{i}"),"apiVersion":"v1"},"responseStatus":{"code":201},
            "responseObject":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":format!("c{i}"),"namespace":"shop","uid":format!("uid-{i}")}},
            "stageTimestamp":format!("2026-11-29T03:00:0{i}Z")})
        .to_string()
    };
    let log: String = (0..6).map(|i| entry(i) + "\n").collect();
    let file = write(dir.path(), "other.jsonl", &log);
    let (code, out, err) =
        run(offline(&db).args(["import", "--cluster", "kind-prod", file.to_str().unwrap()]));
    assert_eq!(code, Some(2), "{out}{err}");
    assert!(
        err.contains("the log is of another cluster") && err.contains("--cluster NAME"),
        "{err}"
    );
    let c = rusqlite::Connection::open(&db).unwrap();
    let stored: i64 = c
        .query_row(
            "SELECT count(*) FROM audit_ids WHERE audit_id LIKE 'm%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(stored, 0);
}

/// Who opened a shell in which Pod: `kubectl exec` (a websocket upgrade is
/// a `get` of `pods/exec`), an ephemeral container and an eviction are
/// facts of the Pod's story, by their person, at Metadata level.
#[test]
fn an_exec_an_ephemeral_container_and_an_eviction_are_the_pods_story() {
    let entry = |id: &str, verb: &str, sub: &str, at: &str| {
        serde_json::json!({"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":id,"stage":"ResponseComplete",
            "requestURI":format!("/api/v1/namespaces/shop/pods/web-1/{sub}"),"verb":verb,
            "user":{"username":"admin"},"impersonatedUser":{"username":"dana@example.com"},"userAgent":"kubectl/v1.34.0 (linux/amd64)",
            "objectRef":{"resource":"pods","namespace":"shop","name":"web-1","apiVersion":"v1","subresource":sub},
            "responseStatus":{"code":if sub == "eviction" { 201 } else { 101 }},"stageTimestamp":format!("2026-11-29T03:0{at}Z")})
        .to_string()
    };
    let log = [
        entry("x1", "get", "exec", "1:00"),
        entry("x2", "patch", "ephemeralcontainers", "2:00"),
        entry("x3", "create", "eviction", "3:00"),
    ]
    .join("\n");
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "exec.jsonl", &(log + "\n"));
    let db = dir.path().join("r.db");
    let (code, _, err) = run(offline(&db).args(["import", file.to_str().unwrap()]));
    assert_eq!(code, Some(0), "{err}");
    let (code, timeline, err) = run(offline(&db).args(["timeline", "pod/web-1", "-n", "shop"]));
    assert_eq!(code, Some(0), "{err}");
    let at = |w: &str| {
        timeline
            .lines()
            .take(25)
            .position(|l| l.contains(w) && l.contains("dana@example.com [impersonated by admin]"))
            .unwrap_or_else(|| panic!("{w}:\n{timeline}"))
    };
    assert!(
        at("exec into") < at("ephemeral container") && at("ephemeral container") < at("evicted"),
        "{timeline}"
    );
}

/// Issue 43: every fact an audit log made says so, in `changes` and in the
/// object's `timeline`, and none of them claims the recorder saw it.
#[test]
fn what_an_audit_log_made_says_it_came_from_the_audit_log() {
    let (_, _, dir) = import(&fixture("k8s-audit-log.jsonl"));
    let db = dir.path().join("r.db");
    let (code, out, err) =
        run(offline(&db).args(["changes", "-A", "--since", "100000h", "-o", "json"]));
    assert_eq!(code, Some(0), "{err}");
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    let items = json["items"].as_array().unwrap();
    assert!(items.len() >= 2, "{out}");
    for i in items {
        assert_eq!(i["provenance"], "audit-log", "{i}");
    }
    // `-o wide` says it in a SOURCE column, before the change.
    let wide = changes_in(&dir, &[]);
    let mut rows = wide.lines();
    let header = rows.next().unwrap_or_default();
    assert!(
        header.contains(" BY ")
            && header.contains(" SOURCE ")
            && header.trim_end().ends_with("CHANGE"),
        "{wide}"
    );
    let source_at = header.find("SOURCE").unwrap();
    for row in rows {
        assert_eq!(
            row.get(source_at..source_at + 9),
            Some("audit-log"),
            "{wide}"
        );
    }
    let (out, json) = timeline_json(&db, "deployment/web", "default");
    let transitions = transitions(&json);
    assert!(
        transitions.iter().any(|e| e["reason"] == "SpecChanged"),
        "{out}"
    );
    for e in transitions {
        assert_eq!(e["provenance"], "audit-log", "{e}");
        assert!(e.get("certainty").is_none(), "{e}");
    }
    // The table never calls the log's first write of it "recorded".
    let table = timeline_of(&db, "deployment/web", "default", &[]);
    let object = table
        .lines()
        .find(|l| l.starts_with("Object:"))
        .unwrap_or_default();
    assert!(
        object.contains("(first seen in an imported audit log 2024-05-12 10:15:02)"),
        "{table}"
    );
    assert!(!table.contains("first recorded"), "{table}");
    // What no import covers is a hole of the imports: no recorder ever ran.
    assert!(
        table.contains("(imports)") && !table.contains("(recorder)"),
        "{table}"
    );
    // `-o wide`: the SOURCE column says it of each transition.
    let wide = timeline_of(&db, "deployment/web", "default", &["-o", "wide"]);
    let changed: Vec<&str> = wide.lines().filter(|l| l.contains("SpecChanged")).collect();
    assert!(
        !changed.is_empty() && changed.iter().all(|l| l.trim_end().ends_with("audit-log")),
        "{wide}"
    );
}

/// Review of issue 43: a deletion stores no version, so it was told as the
/// recorder's; and an import's first write of a Pod made long before, a
/// deletion, told its whole state as changes made at that moment.
#[test]
fn a_deletion_only_a_log_tells_is_the_logs_and_its_first_state_is_a_first_sight() {
    let (code, out, err, dir) = import_all(&[&fixture("aks-storage-kube-audit.json")]);
    assert_eq!(code, Some(0), "{out}{err}");
    let db = dir.path().join("r.db");
    let (out, json) = timeline_json(&db, "pod/web-7d4b9c5f8-abcde", "shop");
    let transitions = transitions(&json);
    let reasons: Vec<&str> = transitions
        .iter()
        .map(|e| e["reason"].as_str().unwrap())
        .collect();
    assert!(reasons.contains(&"Deleted"), "{out}");
    for e in &transitions {
        assert_eq!(e["provenance"], "audit-log", "{e}");
    }
    // Its phase was Running before the log began: not a change at the deletion.
    assert!(!reasons.contains(&"Phase"), "{reasons:?}");
    assert!(
        transitions.iter().any(|e| e["reason"] == "FirstRecorded"
            && e["message"]
                .as_str()
                .unwrap()
                .starts_with("state when first seen in an imported audit log: ")),
        "{out}"
    );
}
