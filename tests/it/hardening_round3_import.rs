//! Issue 27's findings about `import` and the flags of `record`, `changes`
//! and `import`, run as a user would run the binary, on temp files. No
//! cluster needed: every refusal here comes before anything connects.

use std::io::Write;
use std::path::Path;
use std::process::Stdio;

use crate::support::cli;
use cli::{offline as diag, run, write};

fn sql(db: &Path, query: &str) -> String {
    let (code, out, err) = run(diag(db).args(["sql", "-o", "csv", query]));
    assert_eq!(code, Some(0), "{err}");
    out
}

/// Regression (issue 27.16): the BackOff row (`x1e3`) was added to the
/// FailedScheduling Event's message, and its own Event lost without a note.
#[test]
fn a_describe_row_whose_count_does_not_parse_is_its_own_event_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    let text = "\
Name:             too-big
Namespace:        imp
QoS Class:        Burstable
Events:
  Type     Reason            Age                  From               Message
  ----     ------            ----                 ----               -------
  Warning  FailedScheduling  2m (x12 over 5m)     default-scheduler  0/1 nodes are available: 1 Insufficient cpu.
  Warning  BackOff           90s (x1e3 over 7m)   kubelet            Back-off restarting
";
    let file = write(dir.path(), "describe.txt", text);
    let (code, out, err) = run(diag(&db)
        .args(["import", "--taken-at", "2026-11-29T03:00:00Z"])
        .arg(&file));
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains(": 2 Event(s)"), "{out}");
    assert!(
        err.contains("line 8: count x1e3 is not a number: stored as one occurrence, its last"),
        "{err}"
    );
    let rows = sql(
        &db,
        "SELECT r.s, m.s, e.count FROM events e JOIN strings r ON r.id = e.reason \
         JOIN occurrences o ON o.event_id = e.id JOIN strings m ON m.id = o.message ORDER BY r.s",
    );
    assert!(rows.contains("BackOff,Back-off restarting,1\n"), "{rows}");
    assert!(
        rows.contains("FailedScheduling,0/1 nodes are available: 1 Insufficient cpu.,12\n"),
        "{rows}"
    );
}

/// Regression (issue 27.16): a count of 2^63 or more was refused ("expected
/// i64"), where README says a count above the API's int32 is clamped.
#[test]
fn a_json_count_of_2_63_or_more_is_clamped_not_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    let event = |uid: &str, count: &str| {
        format!(
            r#"{{"kind":"Event","metadata":{{"name":"p.{uid}","namespace":"ns","uid":"{uid}"}},"involvedObject":{{"kind":"Pod","namespace":"ns","name":"p"}},"reason":"BackOff","count":{count},"firstTimestamp":"2026-11-29T03:00:00Z","message":"m {uid}"}}"#
        )
    };
    let dump = format!(
        r#"{{"kind":"List","items":[{},{}]}}"#,
        event("a", "9223372036854775808"),
        event("b", "100000000000000000000")
    );
    let file = write(dir.path(), "e.json", &dump);
    let (code, _, err) = run(diag(&db).args(["import"]).arg(&file));
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("2 Event(s) with a count above 2147483647"),
        "{err}"
    );
    assert_eq!(
        sql(&db, "SELECT MAX(count), MIN(count) FROM events"),
        "MAX(count),MIN(count)\n2147483647,2147483647\n"
    );
}

/// Regression (issue 27.20): a message cut at 64 KiB carried no mark.
#[test]
fn an_event_message_cut_at_64_kib_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    let dump = format!(
        r#"{{"kind":"Event","metadata":{{"name":"p.1","namespace":"ns","uid":"u"}},"involvedObject":{{"kind":"Pod","name":"p"}},"reason":"X","firstTimestamp":"2026-11-29T03:00:00Z","message":"{}"}}"#,
        "x".repeat(70_000)
    );
    let file = write(dir.path(), "e.json", &dump);
    let (code, _, err) = run(diag(&db).args(["import"]).arg(&file));
    assert_eq!(code, Some(0), "{err}");
    let out = sql(
        &db,
        "SELECT length(CAST(m.s AS BLOB)), substr(m.s, -20) FROM occurrences o JOIN strings m ON m.id = o.message",
    );
    assert!(out.contains("65536,xxx… [cut at 64 KiB]"), "{out}");
}

fn assert_nothing_stored(db: &Path) {
    assert_eq!(
        sql(db, "SELECT COUNT(*) FROM events"),
        "COUNT(*)\n0\n",
        "nothing stored"
    );
}

/// Regression (issue 27.9): `import /dev/zero` grew without bound (3.4 GB in 7 s).
#[test]
fn import_of_dev_zero_stops_at_the_limit_and_stores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    let (code, _, err) = run(diag(&db).args(["import", "/dev/zero"]));
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("/dev/zero: more than 128 MiB of text, the most import reads"),
        "{err}"
    );
    assert!(err.contains("nothing of it was stored"), "{err}");
    assert_nothing_stored(&db);
}

/// Regression (issue 27.9): `yes | kubectl-diag import -` grew without bound.
#[test]
fn yes_piped_into_import_stops_at_the_limit_and_stores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    let mut child = diag(&db)
        .args(["import", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || {
        let chunk = "y\n".repeat(32 * 1024);
        let mut written: u64 = 0;
        // Until import stops reading (a broken pipe), or well past the limit.
        while written < (1 << 30) && stdin.write_all(chunk.as_bytes()).is_ok() {
            written += chunk.len() as u64;
        }
        written
    });
    let out = child.wait_with_output().unwrap();
    let written = feeder.join().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(written < (1 << 30), "import read on: {written} bytes");
    assert!(err.contains("-: more than 128 MiB of text"), "{err}");
    assert_nothing_stored(&db);
}

/// Regression (issue 27.18): `record --kinds ''` recorded every type while
/// `changes --kinds ''` matched none.
#[test]
fn an_empty_kinds_is_refused_by_record_and_changes() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    for cmd in [
        &["record", "--once", "--kinds", ""][..],
        &["record", "--once", "--kinds", "pods,,nodes"],
        &["changes", "--kinds", ""],
    ] {
        let (code, _, err) = run(diag(&db).args(cmd));
        assert_eq!(code, Some(2), "{cmd:?}: {err}");
        assert!(
            err.contains("--kinds <TYPES>") && err.contains("an empty resource type name"),
            "{cmd:?}: {err}"
        );
    }
    assert!(!db.exists(), "nothing recorded");
}

/// Regression (issue 27.18): `--exclude-kinds events` was accepted and ignored.
#[test]
fn record_exclude_kinds_events_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    for name in ["events", "ev", "events.events.k8s.io"] {
        let (code, _, err) = run(diag(&db).args(["record", "--once", "--exclude-kinds", name]));
        assert_eq!(code, Some(2), "{name}: {err}");
        assert!(
            err.contains("--exclude-kinds <TYPES>") && err.contains("Events are always recorded"),
            "{name}: {err}"
        );
    }
    assert!(!db.exists(), "nothing recorded");
}

/// Regression (issue 27.18): `record -n ''` and `-n ADV-A` recorded nothing
/// without a word, and `-n a/b` ended in a 404 from "list events".
#[test]
fn record_refuses_a_namespace_that_cannot_be_one_before_connecting() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    for (ns, why) in [
        ("", "an empty name"),
        ("ADV-A", "holds 'A'"),
        ("a/b", "holds '/'"),
        ("shop,", "an empty name"),
    ] {
        let (code, _, err) = run(diag(&db).args(["record", "--once", "-n", ns]));
        assert_eq!(code, Some(2), "{ns:?}: {err}");
        assert!(
            err.contains("-n/--namespace") && err.contains(why) && err.contains("RFC 1123 label"),
            "{ns:?}: {err}"
        );
        assert!(
            !err.contains("kubeconfig"),
            "refused before connecting: {err}"
        );
    }
    assert!(!db.exists(), "nothing recorded");
}

/// Regression (issue 27.18): `import --cluster ""` made a cluster with an empty uid.
#[test]
fn import_refuses_an_empty_cluster_id() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    let file = write(
        dir.path(),
        "e.json",
        r#"{"kind":"Event","metadata":{"name":"p.1","uid":"u"},"reason":"X"}"#,
    );
    let (code, _, err) = run(diag(&db).args(["import", "--cluster", ""]).arg(&file));
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("--cluster <ID>") && err.contains("an empty cluster id"),
        "{err}"
    );
    assert!(!db.exists(), "nothing stored");
}

/// Regression (issue 27.20): `changes -o json` printed epoch milliseconds
/// where `timeline` and `check` print RFC 3339.
#[test]
fn changes_json_prints_rfc3339_times() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    let file = write(
        dir.path(),
        "e.json",
        r#"{"kind":"Event","metadata":{"name":"p.1","uid":"u"},"reason":"X","firstTimestamp":"2026-11-29T03:00:00Z"}"#,
    );
    let (code, _, err) = run(diag(&db).args(["import"]).arg(&file));
    assert_eq!(code, Some(0), "{err}");
    let (code, out, err) = run(diag(&db).args([
        "changes",
        "-o",
        "json",
        "--since",
        "2026-11-29T02:00:00Z",
        "--until",
        "2026-11-29T04:00:00.500Z",
    ]));
    assert_eq!(code, Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["since"], "2026-11-29T02:00:00Z", "{out}");
    assert_eq!(v["until"], "2026-11-29T04:00:00.500Z", "{out}");
}
