//! `import` of audit logs in every shape people have them (fixtures in
//! tests/fixtures/audit, their sources in its README): the same facts from
//! each, stored once. No cluster: the real apiserver's log is
//! tests/audit_cluster.rs.

mod cli_common;

use cli_common::{offline, run, write};

fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/audit/{name}", env!("CARGO_MANIFEST_DIR"))
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
