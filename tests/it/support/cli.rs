//! Support for the tests that run the built binary on temp files, with no
//! cluster (tests/hardening*.rs).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `kubectl-diag --db DB`, without colour.
pub fn diag(db: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kubectl-diag"));
    cmd.arg("--db").arg(db).env("NO_COLOR", "1");
    cmd
}

/// [`diag`] with a kubeconfig that does not exist: a command that tried to
/// connect would fail on it, not on what the test is about.
pub fn offline(db: &Path) -> Command {
    let mut cmd = diag(db);
    cmd.env("KUBECONFIG", db.with_extension("no-kubeconfig"));
    cmd
}

/// Runs `cmd`: (exit code, stdout, stderr).
pub fn run(cmd: &mut Command) -> (Option<i32>, String, String) {
    let out: Output = cmd.output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

/// Writes `text` to `dir/name`.
pub fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}
