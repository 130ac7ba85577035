//! Golden output of `query` and `sql` in each format, over a recording built
//! through the store's own writer (no cluster needed: nothing here watches).

use std::path::Path;
use std::process::Command;

use kubectl_diag::model::{EventChange, EventObservation, ObjectRef};
use kubectl_diag::store::writer::Writer;
use kubectl_diag::store::{self, Mode};

fn recording(path: &Path) {
    let conn = store::Recording::open(path, Mode::Write).unwrap();
    let cluster = conn
        .register_cluster("uid-1", "prod", "https://prod", 0)
        .unwrap();
    let mut w = Writer::new(conn, cluster);
    let t = 1_795_000_000_000; // 2026-11-18T11:06:40Z
    let obs = |uid: &str, pod: &str, reason: &str, type_: &str, count: i64, msg: &str| {
        EventChange::Upsert(Box::new(EventObservation {
            uid: uid.into(),
            namespace: "shop".into(),
            name: format!("{pod}.187c0000000{uid}"),
            involved: ObjectRef {
                kind: "Pod".into(),
                namespace: "shop".into(),
                name: pod.into(),
                api_version: "v1".into(),
                ..Default::default()
            },
            reason: reason.into(),
            type_: type_.into(),
            message: msg.into(),
            first: t,
            last: t + count * 60_000,
            count,
            ..Default::default()
        }))
    };
    let mut b = w.begin().unwrap();
    b.apply(&obs(
        "1",
        "web-1",
        "BackOff",
        "Warning",
        5,
        "Back-off restarting failed container",
    ))
    .unwrap();
    b.apply(&obs(
        "2",
        "web-2",
        "BackOff",
        "Warning",
        2,
        "Back-off restarting failed container",
    ))
    .unwrap();
    b.apply(&obs(
        "3",
        "web-2",
        "Pulled",
        "Normal",
        1,
        "Pulled image, a \"quoted\" one",
    ))
    .unwrap();
    b.apply(&obs(
        "4",
        "big",
        "FailedScheduling",
        "Warning",
        1,
        "0/3 nodes are available: 3 Insufficient cpu.",
    ))
    .unwrap();
    b.commit().unwrap();
}

fn diag(db: &Path, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_kubectl-diag"))
        .env("KUBECTL_DIAG_DB", db)
        .env("XDG_CONFIG_HOME", db.parent().unwrap())
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn query_golden_table_json_csv() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    recording(&db);
    let since = ["--since", "2020-01-01T00:00:00Z"];
    assert_eq!(
        diag(
            &db,
            &[&["query", "warnings-by-reason"][..], &since].concat()
        ),
        " REASON            OCCURRENCES  OBJECTS  LAST_SEEN\n BackOff           7            2        2026-11-18T11:11:40Z\n FailedScheduling  1            1        2026-11-18T11:07:40Z\n"
    );
    assert_eq!(
        diag(
            &db,
            &[
                &[
                    "query",
                    "noisiest-objects",
                    "-o",
                    "csv",
                    "--param",
                    "limit=2"
                ][..],
                &since
            ]
            .concat()
        ),
        "kind,namespace,name,occurrences,warnings,last_seen\nPod,shop,web-1,5,5,2026-11-18T11:11:40Z\nPod,shop,web-2,3,2,2026-11-18T11:08:40Z\n"
    );
    assert_eq!(
        diag(
            &db,
            &[
                "query",
                "object-events",
                "--param",
                "name=web-2",
                "-o",
                "json"
            ]
        ),
        r#"[
  {
    "last": "2026-11-18T11:07:40Z",
    "kind": "Pod",
    "namespace": "shop",
    "type": "Normal",
    "reason": "Pulled",
    "occurrences": 1,
    "count": 1,
    "message": "Pulled image, a \"quoted\" one"
  },
  {
    "last": "2026-11-18T11:08:40Z",
    "kind": "Pod",
    "namespace": "shop",
    "type": "Warning",
    "reason": "BackOff",
    "occurrences": 2,
    "count": 2,
    "message": "Back-off restarting failed container"
  }
]
"#
    );
}

#[test]
fn sql_golden_and_a_user_query() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    recording(&db);
    let sql = "SELECT r.s AS reason, SUM(o.n) AS n FROM occurrences o JOIN events e ON e.id = o.event_id \
               JOIN strings r ON r.id = e.reason WHERE r.s LIKE :r GROUP BY 1 ORDER BY 1";
    assert_eq!(
        diag(&db, &["sql", sql, "--param", "r=%", "-o", "csv"]),
        "reason,n\nBackOff,7\nFailedScheduling,1\nPulled,1\n"
    );
    assert_eq!(
        diag(&db, &["sql", sql, "--param", "r=P%", "-o", "jsonl"]),
        "{\"reason\":\"Pulled\",\"n\":1}\n"
    );
    assert_eq!(
        diag(&db, &["sql", sql, "--param", "r=B%"]),
        " REASON   N\n BackOff  7\n"
    );
    // A query of the user's own, found in $XDG_CONFIG_HOME/kubectl-diag/queries/.
    let user = dir.path().join("kubectl-diag/queries");
    std::fs::create_dir_all(&user).unwrap();
    std::fs::write(
        user.join("mine.sql"),
        "-- name: pods\n-- description: pods seen\nSELECT COUNT(*) AS pods FROM objects\n",
    )
    .unwrap();
    assert!(diag(&db, &["query", "--list"]).contains(" pods "));
    assert_eq!(diag(&db, &["query", "pods", "-o", "csv"]), "pods\n3\n");
    // A write through sql fails and changes nothing.
    let out = Command::new(env!("CARGO_BIN_EXE_kubectl-diag"))
        .env("KUBECTL_DIAG_DB", &db)
        .args(["sql", "DELETE FROM occurrences"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("read-only"));
    assert_eq!(
        diag(
            &db,
            &["sql", "SELECT COUNT(*) AS n FROM occurrences", "-o", "csv"]
        ),
        "n\n4\n"
    );
}

/// The object-history queries: restarts per Pod with the last termination,
/// and deletions that took longest or never finished.
#[test]
fn restarts_and_slowest_deletions_from_object_history() {
    use kubectl_diag::model::{
        Change, ContainerState, ObjectChange, ObjectObservation, ObjectState, Seen,
    };
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    let conn = store::Recording::open(&db, Mode::Write).unwrap();
    let cluster = conn.register_cluster("uid-1", "prod", "", 0).unwrap();
    let mut w = Writer::new(conn, cluster);
    let now = chrono::Utc::now().timestamp_millis();
    let pod = |name: &str, state: ObjectState, seen: Seen, at: i64| {
        Change::Object(ObjectChange {
            seen,
            at,
            blind_since: None,
            writer: None,
            provenance: kubectl_diag::model::Provenance::Recorded,
            observation: Box::new(ObjectObservation {
                object: ObjectRef {
                    api_version: "v1".into(),
                    kind: "Pod".into(),
                    namespace: "shop".into(),
                    name: name.into(),
                    uid: format!("uid-{name}"),
                    field_path: String::new(),
                },
                state,
                ..ObjectObservation::default()
            }),
        })
    };
    let crashing = ObjectState {
        containers: vec![ContainerState {
            name: "app".into(),
            state: "waiting".into(),
            reason: "CrashLoopBackOff".into(),
            restarts: 7,
            last_reason: "OOMKilled".into(),
            last_exit_code: Some(137),
            ..ContainerState::default()
        }],
        ..ObjectState::default()
    };
    let stuck = ObjectState {
        deletion: Some(now - 600_000),
        finalizers: vec!["example.com/cleanup".into()],
        ..ObjectState::default()
    };
    let quick = ObjectState {
        deletion: Some(now - 120_000),
        ..ObjectState::default()
    };
    let mut b = w.begin().unwrap();
    b.apply_change(&pod("crashing", crashing, Seen::Added, now - 60_000))
        .unwrap();
    b.apply_change(&pod("stuck", stuck, Seen::Modified, now - 600_000))
        .unwrap();
    b.apply_change(&pod("quick", quick.clone(), Seen::Modified, now - 120_000))
        .unwrap();
    b.apply_change(&pod("quick", quick, Seen::Deleted, now - 90_000))
        .unwrap();
    b.commit().unwrap();
    drop(w);

    let restarts: serde_json::Value =
        serde_json::from_str(&diag(&db, &["query", "restarts-by-pod", "-o", "json"])).unwrap();
    assert_eq!(restarts.as_array().unwrap().len(), 1, "{restarts:#}");
    assert_eq!(restarts[0]["pod"], "crashing");
    assert_eq!(restarts[0]["restarts"], 7);
    assert_eq!(restarts[0]["last_reason"], "OOMKilled");
    assert_eq!(restarts[0]["last_exit_code"], 137);

    let deletions: serde_json::Value =
        serde_json::from_str(&diag(&db, &["query", "slowest-deletions", "-o", "json"])).unwrap();
    let rows = deletions.as_array().unwrap();
    assert_eq!(rows.len(), 2, "{deletions:#}");
    // Unfinished first, then the slowest finished.
    assert_eq!(rows[0]["name"], "stuck");
    assert_eq!(rows[0]["gone"], "not yet");
    assert_eq!(rows[0]["finalizers_waiting"], "example.com/cleanup");
    assert_eq!(rows[1]["name"], "quick");
    assert_eq!(rows[1]["seconds"], 30);
}

/// One broken file among the user's queries (no `-- name:` header, a directory
/// named `x.sql`) used to fail every `query`, built-ins and `--list` included.
#[test]
fn a_broken_user_query_file_breaks_no_other_query() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    recording(&db);
    let user = dir.path().join("kubectl-diag/queries");
    std::fs::create_dir_all(user.join("x.sql")).unwrap();
    std::fs::write(user.join("headless.sql"), "SELECT 1 AS one\n").unwrap();
    std::fs::write(
        user.join("mine.sql"),
        "-- name: pods\n-- description: pods seen\nSELECT COUNT(*) AS pods FROM objects\n",
    )
    .unwrap();
    for args in [
        &["query", "--list"][..],
        &["query", "warnings-by-reason", "-o", "csv"],
        &["query", "pods", "-o", "csv"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_kubectl-diag"))
            .env("KUBECTL_DIAG_DB", &db)
            .env("XDG_CONFIG_HOME", dir.path())
            .args(args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        for name in ["x.sql", "headless.sql"] {
            assert!(
                stderr
                    .lines()
                    .any(|l| l.starts_with("warning: skipping") && l.contains(name)),
                "{args:?}: {stderr}"
            );
        }
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(!stdout.contains("skipping"), "{args:?}: {stdout}");
        if args[1] == "--list" {
            assert!(stdout.contains("warnings-by-reason") && stdout.contains(" pods "));
        }
    }
}

/// `sql` held the whole result before printing: an endless `-o jsonl` result
/// read by `| head -1` never ended. Now rows stream and a closed pipe stops it
/// with exit 0.
#[test]
fn sql_stops_at_a_closed_pipe_instead_of_collecting_an_endless_result() {
    use std::io::BufRead;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    recording(&db);
    let endless = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT i FROM n";
    for format in ["jsonl", "csv", "json"] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_kubectl-diag"))
            .env("KUBECTL_DIAG_DB", &db)
            .args(["sql", endless, "-o", format])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        assert!(!first.is_empty(), "{format}: no first line");
        // The reader is gone; the statement must end within seconds, not grow forever.
        let started = std::time::Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if started.elapsed() > std::time::Duration::from_secs(20) {
                child.kill().unwrap();
                panic!("{format}: sql still running 20 s after its reader went away");
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
        assert_eq!(status.code(), Some(0), "{format}: {stderr}");
    }
}

/// `sql` had no limit: `--timeout` interrupts a statement that runs too long
/// and says which flag stopped it.
#[test]
fn sql_timeout_interrupts_a_long_statement() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    recording(&db);
    let endless =
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT COUNT(*) FROM n";
    let started = std::time::Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_kubectl-diag"))
        .env("KUBECTL_DIAG_DB", &db)
        .args(["sql", endless, "--timeout", "500ms"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("ran longer than --timeout 500ms") && stderr.contains("interrupt"),
        "{stderr}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(15));
    // A bad duration is named.
    let out = Command::new(env!("CARGO_BIN_EXE_kubectl-diag"))
        .env("KUBECTL_DIAG_DB", &db)
        .args(["sql", "SELECT 1", "--timeout", "soon"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--timeout") && stderr.contains("'soon'"),
        "{stderr}"
    );
    // A statement that ends in time is untouched by its timeout.
    assert_eq!(
        diag(
            &db,
            &["sql", "SELECT 1 AS one", "--timeout", "30s", "-o", "csv"]
        ),
        "one\n1\n"
    );
}
