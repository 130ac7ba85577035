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
    use kubectl_diag::store::{self, Mode};
    let conn = store::Recording::open(path, Mode::Write).unwrap();
    for (uid, label) in clusters {
        conn.register_cluster(uid, label, "", 0).unwrap();
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

/// Each subcommand: what it needs on its line to parse, the connection,
/// namespace and `--db` flags it uses, and the `-o` formats it prints.
/// A new subcommand must be added here (the walk below fails until it is).
/// (name, required arguments, flags used, `-o` values).
type Subcommand = (
    &'static str,
    &'static [&'static str],
    &'static [&'static str],
    &'static [&'static str],
);

const SUBCOMMANDS: &[Subcommand] = &[
    (
        "record",
        &[],
        &["--kubeconfig", "--context", "-n", "-A", "--db"],
        &[],
    ),
    ("export", &[], &["-n", "-A", "--db"], &[]),
    (
        "timeline",
        &["deploy/web"],
        &["--kubeconfig", "--context", "-n", "--db"],
        &["table", "wide", "json", "html"],
    ),
    (
        "changes",
        &[],
        &["-n", "-A", "--db"],
        &["table", "wide", "json"],
    ),
    (
        "check",
        &[],
        &["--kubeconfig", "--context", "-n", "-A", "--db"],
        &["table", "wide", "json", "openmetrics"],
    ),
    (
        "query",
        &["warnings-by-reason"],
        &["--db"],
        &["table", "json", "jsonl", "csv"],
    ),
    (
        "sql",
        &["SELECT 1"],
        &["--db"],
        &["table", "json", "jsonl", "csv"],
    ),
    ("completion", &["bash"], &[], &[]),
    ("import", &["events.json"], &["-n", "--db"], &[]),
    ("ship", &["--to", "clickhouse://ch/diag"], &["--db"], &[]),
    ("mcp", &[], &["--kubeconfig", "--context", "--db"], &[]),
];

/// kubectl's global flags (short or long as the tables above name them, long, a value)
/// and `--db`; `-l` and `-o` are here because kubectl users type them anywhere.
const GLOBAL: &[(&str, &str, Option<&str>)] = &[
    ("--kubeconfig", "--kubeconfig", Some("/tmp/kubeconfig")),
    ("--context", "--context", Some("prod")),
    ("-n", "--namespace", Some("shop")),
    ("-A", "--all-namespaces", None),
    ("-l", "--selector", Some("app=web")),
    ("-o", "--output", Some("json")),
    ("--db", "--db", Some("/tmp/diag.db")),
];

/// Every value any subcommand's `-o` ever took.
const FORMATS: &[&str] = &[
    "table",
    "wide",
    "json",
    "jsonl",
    "csv",
    "html",
    "openmetrics",
];

fn parses(args: &[&str]) -> bool {
    kubectl_diag::cli::Cli::try_parse_args_from(
        std::iter::once("kubectl-diag").chain(args.iter().copied()),
    )
    .is_ok()
}

fn help(sub: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_kubectl-diag"))
        .args([sub, "--help"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{sub} --help");
    String::from_utf8(out.stdout).unwrap()
}

/// A flag a subcommand accepts must be one it uses: its help lists it, and
/// clap refuses every other one, after the subcommand or before it.
#[test]
fn no_subcommand_accepts_a_flag_it_ignores() {
    use clap::CommandFactory;
    let cli = kubectl_diag::cli::Cli::command();
    let names: Vec<&str> = cli
        .get_subcommands()
        .map(|c| c.get_name())
        .filter(|n| *n != "help")
        .collect();
    assert_eq!(
        names.len(),
        SUBCOMMANDS.len(),
        "subcommands {names:?}: add each to SUBCOMMANDS"
    );
    for name in names {
        let &(_, required, uses, formats) = SUBCOMMANDS
            .iter()
            .find(|s| s.0 == name)
            .unwrap_or_else(|| panic!("{name}: add it to SUBCOMMANDS in tests/it/cli.rs"));
        let text = help(name);
        let bare: Vec<&str> = std::iter::once(name)
            .chain(required.iter().copied())
            .collect();
        assert!(parses(&bare), "{name} {required:?} must parse");
        for &(flag, long, value) in GLOBAL {
            let value = match (flag, formats.first()) {
                ("-o", Some(f)) => Some(*f),
                _ => value,
            };
            let used = uses.contains(&flag) || (flag == "-o" && !formats.is_empty());
            for form in [flag, long] {
                let mut after = bare.clone();
                after.push(form);
                after.extend(value);
                assert_eq!(parses(&after), used, "{after:?}: accepted must mean used");
                let mut before = vec![form];
                before.extend(value);
                before.extend(bare.iter().copied());
                let root = !matches!(flag, "-o" | "-l");
                assert_eq!(
                    parses(&before),
                    used && root,
                    "{before:?}: a flag before the subcommand is taken only if the subcommand uses it"
                );
            }
            assert_eq!(
                text.contains(&format!("{long} ")) || text.contains(&format!("{long}\n")),
                used,
                "{name} --help and {long}:\n{text}"
            );
        }
        for format in FORMATS {
            let mut args = bare.clone();
            args.extend(["-o", format]);
            assert_eq!(
                parses(&args),
                formats.contains(format),
                "{name} -o {format}: accepted must mean printed"
            );
        }
        let listed: Vec<String> = cli
            .find_subcommand(name)
            .unwrap()
            .get_arguments()
            .find(|a| a.get_id() == "output")
            .map(|a| {
                a.get_possible_values()
                    .iter()
                    .map(|v| v.get_name().to_string())
                    .collect()
            })
            .unwrap_or_default();
        assert_eq!(listed, formats, "{name} --help lists its -o values");
    }
}

fn diag(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kubectl-diag"))
        .args(args)
        .env("KUBECTL_DIAG_DB", "/nonexistent/diag.db")
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

#[test]
fn refused_flags_and_bad_values_are_usage_errors_that_name_the_flag() {
    let cases: &[(&[&str], &[&str])] = &[
        (&["export", "-o", "csv"], &["unexpected argument '-o'"]),
        (
            &["check", "-o", "csv"],
            &["'csv'", "--output", "table, wide, json"],
        ),
        (&["sql", "SELECT 1", "-o", "html"], &["'html'", "--output"]),
        (&["check", "-l", "app=web"], &["unexpected argument '-l'"]),
        (
            &["query", "--list", "-n", "shop"],
            &["unexpected argument '-n'"],
        ),
        (
            &["--db", "/tmp/x.db", "completion", "bash"],
            &["`kubectl diag completion` does not use --db: remove it"],
        ),
        (
            &["check", "--window", "10x"],
            &["--window", "'10x' is not a duration"],
        ),
        (&["check", "--rate", "0"], &["--rate", "a number above 0"]),
        (&["check", "--at", "yesterday"], &["--at", "RFC 3339"]),
        (
            &["record", "--max-db-size", "lots"],
            &["--max-db-size", "not a size"],
        ),
        (
            &["record", "--retain", "30"],
            &["--retain", "not a duration"],
        ),
        (
            &["record", "--commit-every", "6m"],
            &["--commit-every", "'6m' is too long: at most 5m"],
        ),
        // Issue 45: findings on /metrics need /metrics; a cap of no series is none.
        (
            &["record", "--check-every", "1m"],
            &["--listen <ADDR>", "required"],
        ),
        (
            &["record", "--listen", ":0", "--check-every", "0s"],
            &["--check-every", "not an interval"],
        ),
        (
            &["record", "--listen", ":0", "--metrics-max-series", "0"],
            &["--metrics-max-series", "give 1 or more"],
        ),
        (&["sql", "SELECT 1", "--timeout", "soon"], &["--timeout"]),
        (&["export", "--since", "then"], &["--since"]),
        (
            &["timeline", "deploy/web", "--until", "later"],
            &["--until"],
        ),
        (
            &["import", "x.json", "--taken-at", "5m"],
            &["--taken-at", "not an RFC 3339 time"],
        ),
    ];
    for (args, wanted) in cases {
        let (code, _, err) = diag(args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        for w in *wanted {
            assert!(err.contains(w), "{args:?}: {w:?} not in {err}");
        }
    }
}

#[test]
fn export_keeps_the_rows_of_the_namespace_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    let file = dir.path().join("events.jsonl");
    let event = |ns: &str, kind: &str, object_ns: &str, name: &str| {
        serde_json::json!({
            "apiVersion": "v1", "kind": "Event", "type": "Warning", "reason": "Test",
            "message": format!("about {name}"),
            "metadata": {"name": format!("{name}.1"), "namespace": ns, "uid": format!("uid-{name}"),
                         "creationTimestamp": "2026-11-30T12:00:00Z"},
            "involvedObject": {"apiVersion": "v1", "kind": kind, "namespace": object_ns, "name": name, "uid": format!("o-{name}")},
            "firstTimestamp": "2026-11-30T12:00:00Z", "lastTimestamp": "2026-11-30T12:00:00Z", "count": 1,
            "source": {"component": "test"},
        })
        .to_string()
    };
    std::fs::write(
        &file,
        [
            event("shop", "Pod", "shop", "web"),
            event("pay", "Pod", "pay", "api"),
            event("default", "Node", "", "node-1"),
        ]
        .join("\n"),
    )
    .unwrap();
    let db_arg = db.to_str().unwrap();
    let (code, _, err) = diag(&["import", "--db", db_arg, file.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    let names = |args: &[&str]| -> Vec<String> {
        let mut all = vec!["export", "--db", db_arg];
        all.extend(args);
        let (code, out, err) = diag(&all);
        assert_eq!(code, Some(0), "{args:?}: {err}");
        let mut names: Vec<String> = out
            .lines()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                v["object"]["name"].as_str().unwrap().to_string()
            })
            .collect();
        names.sort();
        names
    };
    assert_eq!(names(&[]), ["api", "node-1", "web"]);
    assert_eq!(names(&["-n", "shop"]), ["web"]);
    assert_eq!(
        names(&["--namespace", "default"]),
        ["node-1"],
        "a Node's Events"
    );
    assert!(names(&["-n", "nosuchns"]).is_empty());
    assert_eq!(names(&["-n", "shop", "-A"]), ["api", "node-1", "web"]);
    let (code, _, err) = diag(&["export", "--db", db_arg, "-n", "a,b"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("-n a,b: export takes one namespace"), "{err}");
}

/// Every test that needs the control plane (it uses `support` itself, not
/// only its `cli`, `golden_file` or `timeline_recordings`) is behind the
/// `cluster-tests` feature, so a plain `cargo test` needs no cluster, and
/// `scripts/test` (which always enables it) skips none; and every test file
/// is a module of its crate, so none is silently left out of both.
#[test]
fn every_cluster_test_is_behind_the_cluster_tests_feature() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    assert!(
        manifest.contains(
            "[[test]]\nname = \"exclusive\"\npath = \"tests/exclusive/main.rs\"\nrequired-features = [\"cluster-tests\"]\n"
        ),
        "tests/exclusive only stops and restarts the cluster: it needs the feature"
    );
    let mut cluster_tests = 0;
    for krate in ["it", "exclusive"] {
        let dir = root.join("tests").join(krate);
        let main = std::fs::read_to_string(dir.join("main.rs")).unwrap();
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            if path.extension().is_none_or(|e| e != "rs") || name == "main" {
                continue;
            }
            let declared = format!("\nmod {name};\n");
            assert!(
                main.contains(&declared),
                "tests/{krate}/{name}.rs is not a module of tests/{krate}/main.rs: add `mod {name};`"
            );
            let uses_cluster = std::fs::read_to_string(&path)
                .unwrap()
                .lines()
                .any(|l| l == "use crate::support;");
            if uses_cluster && krate == "it" {
                cluster_tests += 1;
                let gated = format!("\n#[cfg(feature = \"cluster-tests\")]\nmod {name};\n");
                assert!(
                    main.contains(&gated),
                    "tests/it/{name}.rs uses the cluster: put #[cfg(feature = \"cluster-tests\")] above its `mod`"
                );
            }
        }
    }
    assert!(cluster_tests > 0);
    let script = std::fs::read_to_string(root.join("scripts/test")).unwrap();
    assert!(
        script.contains("cargo test --features cluster-tests"),
        "scripts/test must enable the cluster tests"
    );
}
