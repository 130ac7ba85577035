//! The command line itself: completions, and what happens when the reader of stdout goes away.

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
