//! Driving `kubectl diag mcp` with MCP's official Python client (PyPI `mcp`,
//! tests/mcp/client.py), from `scripts/mcp-python install` (scripts/test
//! exports it as `DIAG_MCP_PYTHON`).

use std::process::{Command, Stdio};

use serde_json::Value;

/// The client's python: from `scripts/mcp-python install` (scripts/test exports it).
pub fn python() -> String {
    std::env::var("DIAG_MCP_PYTHON").unwrap_or_else(|_| {
        let out = Command::new(super::repo_root().join("scripts/mcp-python"))
            .arg("install")
            .output()
            .expect("running scripts/mcp-python");
        assert!(
            out.status.success(),
            "scripts/mcp-python install failed (scripts/test and CI install the MCP client; tests never skip themselves): {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    })
}

/// Runs the server with `args` and `env`, makes `calls` through the client,
/// returns what the client saw.
pub fn converse(args: &[&str], env: &[(&str, &str)], calls: Value) -> Value {
    let mut cmd = Command::new(python());
    cmd.arg(super::repo_root().join("tests/mcp/client.py"))
        .arg(env!("CARGO_BIN_EXE_kubectl-diag"))
        .arg("mcp")
        .args(args)
        .env_remove("KUBECTL_DIAG_DB")
        .env("NO_COLOR", "1")
        .env(
            "DIAG_MCP_PASS_ENV",
            env.iter().map(|(k, _)| *k).collect::<Vec<_>>().join(","),
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    use std::io::Write as _;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(calls.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "the client failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}
