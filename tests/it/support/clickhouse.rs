//! A ClickHouse engine for a test of its own (chdb-core behind
//! scripts/clickhouse-front.py; docs/testing.md): its own port and data, so
//! one can be killed. Installed by scripts/test and .ci/run.

use std::path::Path;
use std::process::{Command, Output};

use super::diag;

pub const PASSWORD: &str = "diag-test-password";

/// A ClickHouse front of this test's own; stopped when dropped.
pub struct Front {
    pub dir: tempfile::TempDir,
    pub port: u16,
}

impl Front {
    pub fn start() -> Front {
        let port = super::free_local_addr()
            .rsplit_once(':')
            .unwrap()
            .1
            .parse()
            .unwrap();
        let front = Front {
            dir: tempfile::tempdir().unwrap(),
            port,
        };
        front.script("up");
        front
    }

    pub fn script(&self, verb: &str) -> Output {
        self.script_with(&[verb])
    }

    pub fn script_with(&self, args: &[&str]) -> Output {
        let verb = args.join(" ");
        let out = Command::new(super::repo_root().join("scripts/clickhouse"))
            .args(args)
            .env("DIAG_CLICKHOUSE_DIR", self.dir.path())
            .env("DIAG_CLICKHOUSE_PORT", self.port.to_string())
            .env("DIAG_CLICKHOUSE_USER", "diag")
            .env("DIAG_CLICKHOUSE_PASSWORD", PASSWORD)
            .output()
            .expect("running scripts/clickhouse");
        assert!(
            out.status.success(),
            "scripts/clickhouse {verb} failed (the engine is installed by scripts/test and .ci/run; \
             tests never skip themselves):\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    /// The URL without its password (given through the environment).
    pub fn url(&self) -> String {
        format!("clickhouse://diag@127.0.0.1:{}/diag", self.port)
    }

    /// One statement over HTTP, its TSV answer, or why it failed.
    pub fn try_sql(&self, statement: &str) -> Result<String, String> {
        let out = Command::new("curl")
            .args([
                "-sS",
                "-u",
                &format!("diag:{PASSWORD}"),
                "-w",
                "\n%{http_code}",
            ])
            .arg(format!("http://127.0.0.1:{}/?database=diag", self.port))
            .args(["--data-binary", statement])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let (body, code) = text.rsplit_once('\n').unwrap_or((&text, ""));
        if out.status.success() && code == "200" {
            Ok(body.to_string())
        } else {
            Err(format!(
                "{code} {body}{}",
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    }

    pub fn sql(&self, statement: &str) -> String {
        self.try_sql(statement)
            .unwrap_or_else(|e| panic!("{statement}: {e}"))
    }

    pub fn count(&self, statement: &str) -> i64 {
        self.sql(statement).trim().parse().unwrap()
    }

    /// A count, or -1 while the tables are not there yet.
    pub fn count_or_none(&self, statement: &str) -> i64 {
        self.try_sql(statement)
            .ok()
            .and_then(|t| t.trim().parse().ok())
            .unwrap_or(-1)
    }
}

impl Drop for Front {
    fn drop(&mut self) {
        let _ = Command::new(super::repo_root().join("scripts/clickhouse"))
            .arg("down")
            .env("DIAG_CLICKHOUSE_DIR", self.dir.path())
            .env("DIAG_CLICKHOUSE_PORT", self.port.to_string())
            .output();
    }
}

/// `kubectl-diag` with the ClickHouse password in its environment.
pub fn diag_ch(db: &Path) -> Command {
    let mut cmd = diag(db);
    cmd.env("KUBECTL_DIAG_CLICKHOUSE_PASSWORD", PASSWORD);
    cmd
}
