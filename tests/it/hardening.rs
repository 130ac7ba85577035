//! Issue 19's findings, run as a user would run the binary, on temp files:
//! what the recording accepts, what it refuses and leaves untouched, and
//! what importing and reading leave behind. No cluster needed.

use std::path::Path;

use crate::support::cli;
use cli::{diag, run, write};

/// One Event as `kubectl get events -o json` prints it.
fn event(uid: &str, count: &str, time: &str) -> String {
    format!(
        r#"{{"apiVersion":"v1","kind":"Event","metadata":{{"name":"p.{uid}","namespace":"ns","uid":"{uid}"}},
"involvedObject":{{"kind":"Pod","namespace":"ns","name":"p"}},"reason":"BackOff","type":"Warning",
"count":{count},"firstTimestamp":"{time}","lastTimestamp":"{time}","message":"m {uid}"}}"#
    )
}

/// Every command that opens the recording, as a user would type it.
const COMMANDS: &[&[&str]] = &[
    &["import", "--cluster", "x", "EVENTS"],
    &["export"],
    &["timeline", "pod/p", "-n", "ns"],
    &["query", "warnings-by-reason"],
    &["sql", "SELECT 1"],
    &["check"],
];

fn every_command(db: &Path, events: &Path) -> Vec<(String, Option<i32>, String)> {
    COMMANDS
        .iter()
        .map(|args| {
            let args: Vec<&str> = args
                .iter()
                .map(|a| {
                    if *a == "EVENTS" {
                        events.to_str().unwrap()
                    } else {
                        a
                    }
                })
                .collect();
            let (code, _, err) = run(diag(db).args(&args));
            (args.join(" "), code, err)
        })
        .collect()
}

/// Regression: `import` into another program's SQLite database added 22
/// schema objects and switched it to WAL.
#[test]
fn a_foreign_sqlite_file_is_refused_untouched_by_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let events = write(
        dir.path(),
        "e.json",
        &event("a", "1", "2026-11-29T03:00:00Z"),
    );
    for version in [0, 3, 99] {
        let db = dir.path().join(format!("other-{version}.db"));
        {
            let conn = rusqlite::Connection::open(&db).unwrap();
            conn.execute_batch(
                "CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('mine');",
            )
            .unwrap();
            conn.pragma_update(None, "user_version", version).unwrap();
        }
        let before = std::fs::read(&db).unwrap();
        for (command, code, err) in every_command(&db, &events) {
            assert_eq!(code, Some(2), "{command} on user_version {version}: {err}");
            assert!(
                err.contains(&db.display().to_string()) && err.contains("left untouched"),
                "{command}: {err}"
            );
            assert!(
                std::fs::read(&db).unwrap() == before,
                "{command} changed the file"
            );
            for suffix in ["-wal", "-shm", "-journal"] {
                let mut side = db.as_os_str().to_owned();
                side.push(suffix);
                assert!(!Path::new(&side).exists(), "{command} left {side:?}");
            }
        }
    }
}

/// Regression: `--db /dev/null import x` left a world-writable `/dev/null-journal`.
#[test]
fn a_device_as_db_is_refused_and_nothing_is_created_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let events = write(
        dir.path(),
        "e.json",
        &event("a", "1", "2026-11-29T03:00:00Z"),
    );
    for (command, code, err) in every_command(Path::new("/dev/null"), &events) {
        assert_eq!(code, Some(2), "{command}: {err}");
        assert!(
            err.contains("/dev/null is not a regular file"),
            "{command}: {err}"
        );
    }
    for side in ["/dev/null-journal", "/dev/null-wal", "/dev/null-shm"] {
        assert!(!Path::new(side).exists(), "{side}");
    }
}

/// Regression: every read left `-shm`/`-wal` beside the recording.
#[test]
fn reading_a_recording_leaves_no_files_behind() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    let events = write(
        dir.path(),
        "e.json",
        &event("a", "1", "2026-11-29T03:00:00Z"),
    );
    let (code, _, err) = run(diag(&db).args(["import", "--cluster", "x"]).arg(&events));
    assert_eq!(code, Some(0), "{err}");
    let listing = || {
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    let before = (listing(), std::fs::read(&db).unwrap());
    assert_eq!(before.0, ["diag.db", "e.json"]);
    for args in [
        &["export"][..],
        &["timeline", "pod/p", "-n", "ns"],
        &["query", "warnings-by-reason"],
        &["sql", "SELECT COUNT(*) FROM occurrences"],
        &["check", "--at", "2026-11-29T04:00:00Z"],
    ] {
        let (code, _, err) = run(diag(&db).args(args));
        assert!(matches!(code, Some(0 | 1)), "{args:?}: {err}");
        assert!(
            (listing(), std::fs::read(&db).unwrap()) == before,
            "{args:?} wrote: {:?}",
            listing()
        );
    }
}

/// Regression: `"count": 9223372036854775807` was stored as such, and every
/// `query warnings-by-reason` after failed with "integer overflow".
#[test]
fn a_count_of_2_63_is_clamped_and_queries_still_run() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    let dump = format!(
        r#"{{"kind":"List","items":[{},{}]}}"#,
        event("a", "9223372036854775807", "2026-11-29T03:00:00Z"),
        event("b", "9223372036854775807", "2026-11-29T03:00:01Z")
    );
    let events = write(dir.path(), "e.json", &dump);
    let (code, _, err) = run(diag(&db).args(["import", "--cluster", "x"]).arg(&events));
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("2 Event(s) with a count above 2147483647"),
        "{err}"
    );
    let (code, out, err) = run(diag(&db).args([
        "sql",
        "-o",
        "csv",
        "SELECT MAX(e.count), SUM(o.n) FROM events e JOIN occurrences o ON o.event_id = e.id",
    ]));
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("2147483647,4294967294"), "{out}");
    for _ in 0..2 {
        let (code, out, err) = run(diag(&db).args([
            "query",
            "warnings-by-reason",
            "--since",
            "2026-11-01T00:00:00Z",
        ]));
        assert_eq!(code, Some(0), "{err}");
        assert!(out.contains("4294967294"), "{out}");
    }
}

/// A recording in which a recorder ran for cluster `uid`, context `label`.
fn recorded(db: &Path, uid: &str, label: &str, now: i64) {
    use kubectl_diag::store::{self, Mode};
    let conn = store::Recording::open(db, Mode::Write).unwrap();
    let id = conn
        .register_cluster(uid, label, "https://api", now)
        .unwrap();
    let start = conn.start_session(id, uid, "once", now).unwrap();
    conn.stop_session(start.id, now).unwrap();
}

/// Regression: `import --cluster <a recorded cluster's uid>` merged into it
/// and overwrote its label and server.
#[test]
fn importing_under_a_recorded_clusters_uid_or_label_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    recorded(&db, "0f8e2a5c-1b2d-4e3f-8a9b-0c1d2e3f4a5b", "prod", 0);
    let events = write(
        dir.path(),
        "e.json",
        &event("a", "1", "2026-11-29T03:00:00Z"),
    );
    let clusters = || {
        run(diag(&db).args([
            "sql",
            "-o",
            "csv",
            "SELECT uid, label, server FROM clusters ORDER BY id",
        ]))
        .1
    };
    let before = clusters();
    for name in ["0f8e2a5c-1b2d-4e3f-8a9b-0c1d2e3f4a5b", "prod"] {
        let (code, _, err) = run(diag(&db).args(["import", "--cluster", name]).arg(&events));
        assert_eq!(code, Some(2), "{name}: {err}");
        assert!(
            err.contains(
                "names the recorded cluster prod (uid 0f8e2a5c-1b2d-4e3f-8a9b-0c1d2e3f4a5b)"
            ),
            "{err}"
        );
        assert_eq!(clusters(), before);
    }
    // A name of its own imports, and imports again into the same cluster.
    for _ in 0..2 {
        let (code, _, err) = run(diag(&db)
            .args(["import", "--cluster", "prod-ticket"])
            .arg(&events));
        assert_eq!(code, Some(0), "{err}");
    }
    assert_eq!(clusters().lines().count(), before.lines().count() + 1);
}

/// Regression: an imported Event with no timestamp at all was stored at
/// 1970-01-01, where the first retention dropped it.
#[test]
fn an_event_without_any_time_is_stored_at_its_import_time_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    let events = write(
        dir.path(),
        "e.json",
        r#"{"kind":"Event","metadata":{"name":"p.1","namespace":"ns","uid":"u1"},
            "involvedObject":{"kind":"Pod","name":"p","namespace":"ns"},"reason":"X","message":"m"}"#,
    );
    let before = chrono_now_ms();
    let (code, _, err) = run(diag(&db).args(["import", "--cluster", "x"]).arg(&events));
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("1 Event(s) carry no time at all"), "{err}");
    assert!(err.contains("stored at the time of this import"), "{err}");
    let (_, out, _) =
        run(diag(&db).args(["sql", "-o", "csv", "SELECT first, last FROM occurrences"]));
    let row = out.lines().last().unwrap();
    let times: Vec<i64> = row.split(',').map(|t| t.parse().unwrap()).collect();
    assert!(
        times.iter().all(|&t| t >= before && t <= chrono_now_ms()),
        "{out}"
    );
}

fn chrono_now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// `import` reads a List's items as a stream, stored a chunk at a time in one
/// transaction: every item lands, and a bad item late in the file still
/// leaves nothing of it stored.
#[test]
fn a_large_list_is_stored_whole_or_not_at_all() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    // NB: an object each: import compares an Event with those stored for the same object.
    let items: Vec<String> = (0..2_500)
        .map(|i| {
            event(&format!("u{i}"), "2", "2026-11-29T03:00:00Z")
                .replace(r#""name":"p"}"#, &format!(r#""name":"p{i}"}}"#))
        })
        .collect();
    let mut bad = items.clone();
    bad[2_400] = r#"{"kind":"Pod","metadata":{"name":"p"}}"#.into();
    let bad = write(
        dir.path(),
        "bad.json",
        &format!(r#"{{"kind":"List","items":[{}]}}"#, bad.join(",")),
    );
    let (code, _, err) = run(diag(&db).args(["import", "--cluster", "x"]).arg(&bad));
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("document 1 item 2401 is a Pod"), "{err}");
    let count = || {
        run(diag(&db).args([
            "sql",
            "-o",
            "csv",
            "SELECT COUNT(*), COALESCE(SUM(n), 0) FROM occurrences",
        ]))
        .1
    };
    assert!(count().ends_with("0,0\n"), "{}", count());
    let good = write(
        dir.path(),
        "good.json",
        &format!(r#"{{"kind":"List","items":[{}]}}"#, items.join(",")),
    );
    for _ in 0..2 {
        let (code, out, err) = run(diag(&db).args(["import", "--cluster", "x"]).arg(&good));
        assert_eq!(code, Some(0), "{err}");
        assert!(out.contains("2500 Event(s)"), "{out}");
    }
    assert!(count().ends_with("2500,5000\n"), "{}", count());
    // JSON Lines of the same, read a document at a time, add nothing.
    let lines = write(
        dir.path(),
        "e.jsonl",
        &items
            .iter()
            .map(|i| i.replace('\n', ""))
            .collect::<Vec<_>>()
            .join("\n"),
    );
    let (code, out, err) = run(diag(&db).args(["import", "--cluster", "x"]).arg(&lines));
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("2500 Event(s), 0 new occurrence(s)"), "{out}");
}
