//! The command line itself: completions, what happens when the reader of stdout
//! goes away, and errors that need no cluster.

use std::process::Command;

#[test]
fn completion_scripts_name_the_subcommands_and_survive_a_closed_pipe() {
    for shell in ["bash", "zsh", "fish"] {
        let out = Command::new(env!("CARGO_BIN_EXE_kubectl-diag"))
            .args(["completion", shell])
            .output()
            .unwrap();
        assert!(out.status.success(), "{shell}");
        let script = String::from_utf8(out.stdout).unwrap();
        for sub in ["record", "export", "import", "query", "sql"] {
            assert!(script.contains(sub), "{shell} completion lacks {sub}");
        }
    }
    // `| head -1`: the reader goes away; that is not an error.
    let mut child = Command::new(env!("CARGO_BIN_EXE_kubectl-diag"))
        .args(["completion", "bash"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A recording with the given clusters (uid, context label) and nothing else.
fn recording_of(path: &std::path::Path, clusters: &[(&str, &str)]) {
    use kubectl_diag::store::{self, Mode, session};
    let conn = store::open(path, Mode::Write).unwrap();
    for (uid, label) in clusters {
        session::register_cluster(&conn, path, uid, label, "", 0).unwrap();
    }
}

/// `check` against `db`: (exit code, stderr).
fn check(db: &std::path::Path, args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kubectl-diag"))
        .arg("check")
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

#[test]
fn check_over_a_recording_names_the_cluster_to_choose_and_takes_one_namespace() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.db");
    recording_of(&empty, &[]);
    let (code, err) = check(&empty, &[]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("holds no cluster yet"), "{err}");

    let two = dir.path().join("two.db");
    recording_of(&two, &[("uid-a", "prod"), ("uid-b", "staging")]);
    let (code, err) = check(&two, &[]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("several clusters; choose one with --cluster")
            && err.contains("prod (uid-a)")
            && err.contains("staging (uid-b)"),
        "{err}"
    );
    let (code, err) = check(&two, &["--cluster", "dev"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("--cluster dev: not in the recording; it holds: prod (uid-a)"),
        "{err}"
    );
    let (code, err) = check(&two, &["-n", "a,b"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("-n a,b: check takes one namespace (or -A for all)"),
        "{err}"
    );
}

#[test]
fn version_names_the_package_version_the_commit_and_the_build_date() {
    let out = Command::new(env!("CARGO_BIN_EXE_kubectl-diag"))
        .arg("--version")
        .output()
        .unwrap();
    assert!(out.status.success());
    let line = String::from_utf8(out.stdout).unwrap();
    let want = format!("kubectl-diag {}\n", kubectl_diag::build_info::VERSION);
    assert_eq!(line, want);
    // "kubectl-diag 0.1.0 (commit 0123456789ab, built 2026-11-30T12:00:00Z)"
    let rest = line
        .strip_prefix(&format!(
            "kubectl-diag {} (commit ",
            env!("CARGO_PKG_VERSION")
        ))
        .unwrap_or_else(|| panic!("{line}"));
    let (commit, date) = rest
        .split_once(", built ")
        .unwrap_or_else(|| panic!("{line}"));
    assert!(
        commit == "unknown"
            || (commit.len() == 12 && commit.bytes().all(|b| b.is_ascii_hexdigit())),
        "{line}"
    );
    let date = date.strip_suffix(")\n").unwrap_or_else(|| panic!("{line}"));
    assert!(chrono::DateTime::parse_from_rfc3339(date).is_ok(), "{line}");
}
