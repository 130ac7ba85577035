//! Issue 27's findings that need no cluster, run as a user would run the
//! binary: each test is named after what broke.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::cli;
use cli::{diag, run};

/// Runs `cmd`, killing it after `limit`: Err when it had to be killed.
fn run_within(cmd: &mut Command, limit: Duration) -> Result<(Option<i32>, String), String> {
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            use std::io::Read;
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut err)
                .unwrap();
            return Ok((status.code(), err));
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("still running after {limit:?}"));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Imports one Warning Event about Pod ns/p into `db`.
fn one_event_recording(dir: &Path, db: &Path) {
    let dump = r#"{"kind":"List","items":[{"apiVersion":"v1","kind":"Event","metadata":{"name":"p.1","namespace":"ns","uid":"e1"},
"involvedObject":{"kind":"Pod","namespace":"ns","name":"p","uid":"p1"},"reason":"BackOff","type":"Warning",
"count":1,"firstTimestamp":"2026-11-29T03:00:00Z","lastTimestamp":"2026-11-29T03:00:00Z","message":"m"}]}"#;
    let file = dir.join("e.json");
    std::fs::write(&file, dump).unwrap();
    let (code, _, err) = run(diag(db).args(["import", "--cluster", "x"]).arg(&file));
    assert_eq!(code, Some(0), "{err}");
}

/// 27.8: a kind read from a file cleared the screen and wrote an OSC 52
/// clipboard sequence through the error message.
#[test]
fn control_characters_from_an_imported_file_reach_stderr_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("x.json");
    std::fs::write(
        &file,
        "{\"apiVersion\":\"v1\",\"kind\":\"\\u001b[2J\\u001b]52;c;SGVsbG8=\\u0007\"}",
    )
    .unwrap();
    let (code, _, err) = run(diag(&dir.path().join("e.db")).arg("import").arg(&file));
    assert_eq!(code, Some(2), "{err}");
    assert!(!err.contains('\u{1b}') && !err.contains('\u{7}'), "{err:?}");
    assert!(err.contains("\\x1b[2J"), "{err:?}");

    let (code, _, err) = run(diag(&dir.path().join("e.db")).args([
        "import",
        "--cluster",
        "x\u{1b}y",
        "/nonexistent/events.json",
    ]));
    assert_eq!(code, Some(2), "{err}");
    assert!(!err.contains('\u{1b}'), "{err:?}");
}

/// 27.10: a FIFO in the queries folder blocked every `query`.
#[test]
fn a_fifo_in_the_queries_folder_is_skipped_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let queries = dir.path().join("config/kubectl-diag/queries");
    std::fs::create_dir_all(&queries).unwrap();
    let fifo = queries.join("fifo.sql");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let (code, err) = run_within(
        diag(&dir.path().join("diag.db"))
            .args(["query", "--list"])
            .env("XDG_CONFIG_HOME", dir.path().join("config")),
        Duration::from_secs(20),
    )
    .expect("query --list returns although a FIFO sits in the folder");
    assert_eq!(code, Some(0), "{err}");
}

/// 27.11: `timeline --depth 99999999` spun a CPU for ~18 minutes.
#[test]
fn a_huge_depth_is_bounded_by_what_exists() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    one_event_recording(dir.path(), &db);
    let (code, err) = run_within(
        diag(&db).args(["timeline", "pod/p", "-n", "ns", "--depth", "99999999"]),
        Duration::from_secs(60),
    )
    .expect("the walk ends where the objects end");
    assert_eq!(code, Some(0), "{err}");
}

/// 27.1: on a machine without Chromium, `scripts/test` built everything and
/// then failed three screenshot tests; it must name the package first.
#[test]
fn scripts_test_names_a_missing_chromium_before_building_anything() {
    let out = Command::new("bash")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/test"))
        .env("DIAG_CHROMIUM", "/nonexistent/chromium")
        .env("DIAG_NO_INSTALL", "1")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("missing chromium (at /nonexistent/chromium)")
            && err.contains("apt-get install -y chromium"),
        "{err}"
    );
    assert!(
        !err.contains("cluster:") && !err.contains("Compiling"),
        "{err}"
    );
}

/// 27.17: a recording copied with its `-wal` (and no `-shm`) into a folder
/// the reader may not write could not be read by another user ("unable to
/// open database file"); as root it worked, which is why tests missed it.
/// Run as the unprivileged user `nobody` (setpriv) when the tests run as root.
#[test]
fn a_copied_recording_with_its_wal_reads_in_a_read_only_folder_as_another_user() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    one_event_recording(dir.path(), &db);
    // A write that stays in the WAL, as a recorder killed before its checkpoint leaves it.
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.pragma_update(None, "wal_autocheckpoint", 0).unwrap();
    conn.execute("UPDATE clusters SET label = 'only-in-the-wal'", [])
        .unwrap();
    let copy = dir.path().join("copy");
    std::fs::create_dir(&copy).unwrap();
    std::fs::copy(&db, copy.join("diag.db")).unwrap();
    std::fs::copy(dir.path().join("diag.db-wal"), copy.join("diag.db-wal")).unwrap();
    drop(conn);
    for f in ["diag.db", "diag.db-wal"] {
        std::fs::set_permissions(copy.join(f), std::fs::Permissions::from_mode(0o444)).unwrap();
    }
    std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o555)).unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let root = Command::new("id").arg("-u").output().unwrap().stdout == b"0\n";
    let mut cmd = if root {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(env!("CARGO_BIN_EXE_kubectl-diag"));
        c
    } else {
        Command::new(env!("CARGO_BIN_EXE_kubectl-diag"))
    };
    let (code, out, err) = run(cmd.arg("--db").arg(copy.join("diag.db")).args([
        "sql",
        "-o",
        "csv",
        "SELECT label FROM clusters",
    ]));
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("only-in-the-wal"),
        "the WAL's write is read: {out}"
    );
    let left: Vec<_> = std::fs::read_dir(&copy)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left.len(), 2, "nothing left beside it: {left:?}");
}
