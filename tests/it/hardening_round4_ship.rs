//! Issue 44's findings about shipping and the ClickHouse store that need no
//! cluster and no server (items 3, 5 and 10), run as a user would run the
//! binary: each test is named after what broke.

use std::path::Path;
use std::process::Command;

use crate::support::cli;
use cli::{offline, run};

/// `kubectl-diag` with no recording and no cluster at hand.
fn bare(dir: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kubectl-diag"));
    cmd.env("NO_COLOR", "1")
        .env("KUBECONFIG", dir.join("no-kubeconfig"))
        .env_remove("KUBECTL_DIAG_CLICKHOUSE_PASSWORD");
    cmd
}

/// Every URL of the issue, whatever its scheme or typo.
const LEAKY: &[&str] = &[
    "clickhouse://diag:s3cr/etPW@h:18999/diag?secure=yes",
    "clickhouse:/diag:s3cretPW@h:18999/diag",
    "Clickhouse://diag:s3cretPW@h:18999/diag",
    "https://diag:s3cretPW@h:18999/diag",
    "otlp://u:s3cretPW@h:4318",
    "otlp+https://collector/v1/logs?api_key=s3cretPW",
    "otlp+http://u:s3cretPW@collector:4318",
    "clickhouse://h/diag?password=s3cretPW",
    "clickhouse://diag:s3cretPW/diag",
];

/// 44.3: a `/` in the password, a scheme typo or another scheme printed the
/// whole URL with its password (and an OTLP URL its `api_key=`) on stderr.
#[test]
fn a_password_in_a_bad_url_is_never_printed_by_ship_to_store_or_record_ship() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("none.db");
    for url in LEAKY {
        let runs: [(&str, Command); 4] = [
            ("--to", {
                let mut c = bare(dir.path());
                c.arg("--db").arg(&db).args(["ship", "--to", url]);
                c
            }),
            ("--store", {
                let mut c = bare(dir.path());
                c.args(["changes", "--store", url]);
                c
            }),
            ("--store", {
                let mut c = bare(dir.path());
                c.args(["sql", "--store", url, "SELECT 1"]);
                c
            }),
            ("--ship", {
                let mut c = offline(&db);
                c.args(["record", "--once", "--ship", url]);
                c
            }),
        ];
        for (flag, mut cmd) in runs {
            let (code, _, err) = run(&mut cmd);
            if code == Some(0) {
                // NB: a URL that parses (none of these should) would have gone on.
                panic!("{url}: ran: {err}");
            }
            assert_eq!(code, Some(2), "{url} {flag}: {err}");
            assert!(!err.contains("s3cr"), "{url} {flag}: {err}");
            assert!(!err.contains("etPW"), "{url} {flag}: {err}");
            assert!(
                err.contains(&format!("error: {flag} ")),
                "{url} {flag}: {err}"
            );
            assert!(
                err.contains("write ")
                    || err.contains("give ")
                    || err.contains("leave ")
                    || err.contains("the only option")
                    || err.contains("the scheme is")
                    || err.contains(" takes ")
                    || err.contains("otlp+http://"),
                "{url} {flag}: no fix said: {err}"
            );
        }
    }
}

/// 44.3: `--ship-header 'api-key s3cretTOKEN: x'` (a space for the colon) printed the token.
#[test]
fn a_malformed_ship_header_never_prints_its_value() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("none.db");
    let (code, _, err) = run(offline(&db).args([
        "record",
        "--once",
        "--ship",
        "otlp+http://127.0.0.1:9/v1/logs",
        "--ship-header",
        "api-key s3cretTOKEN: x",
    ]));
    assert_eq!(code, Some(2), "{err}");
    assert!(!err.contains("s3cret"), "{err}");
    assert!(err.contains("--ship-header #1"), "{err}");
    let (code, _, err) = run(bare(dir.path()).arg("--db").arg(&db).args([
        "ship",
        "--to",
        "otlp+http://127.0.0.1:9/v1/logs",
        "--header",
        "Authorization Bearer s3cretTOKEN",
    ]));
    assert_eq!(code, Some(2), "{err}");
    assert!(!err.contains("s3cret"), "{err}");
}

/// 44.5: `/* /* */ SELECT */ INSERT …` passed the guard (ClickHouse nests
/// comments), `INTO OUTFILE` wrote a file on the server, a `FORMAT` broke the
/// reader. All are refused before anything is sent: the URL names a port
/// nobody listens on, so a statement that got through would fail differently.
#[test]
fn a_nested_comment_into_outfile_format_and_settings_are_refused_by_sql_store() {
    let dir = tempfile::tempdir().unwrap();
    let store = "clickhouse://diag:pw@127.0.0.1:9/diag";
    for (statement, says) in [
        (
            "/* /* */ SELECT */ INSERT INTO occurrences SELECT * FROM occurrences",
            "starts with INSERT",
        ),
        ("SELECT 1 INTO OUTFILE '/tmp/x'", "INTO OUTFILE"),
        ("SELECT 1 FORMAT TSV", "FORMAT clause"),
        ("SELECT 1 SETTINGS readonly = 0", "SETTINGS clause"),
    ] {
        let (code, out, err) = run(bare(dir.path()).args(["sql", "--store", store, statement]));
        assert_eq!(code, Some(2), "{statement}: {err}");
        assert!(out.is_empty(), "{statement}: {out}");
        assert!(
            err.contains("is read-only") && err.contains(says),
            "{statement}: {err}"
        );
        assert!(!err.contains("does not answer"), "{statement}: sent: {err}");
    }
}
