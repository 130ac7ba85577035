//! `kubectl diag import` of kubectl's text: describe output and `get events`
//! tables captured from the local cluster with kubectl 1.37 (the `-v1.37`
//! fixtures), and older layouts written by hand from kubectl's printers of
//! the release each file names. Each fixture's `.taken-at` says when it was
//! taken, so the stored times are the same on every run. No cluster needed.
//! `UPDATE_GOLDEN=1` rewrites the golden exports after a deliberate change.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/import")
        .join(name)
}

fn taken_at(name: &str) -> String {
    std::fs::read_to_string(fixture(&format!("{name}.taken-at")))
        .unwrap()
        .trim()
        .to_string()
}

fn diag(db: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kubectl-diag"));
    cmd.env("KUBECTL_DIAG_DB", db).env("NO_COLOR", "1");
    cmd
}

fn ok(cmd: &mut Command) -> Output {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Imports one fixture as the user would: its capture time, and for tables
/// without a NAMESPACE column the namespace it was taken in.
fn import(db: &Path, name: &str) -> Output {
    let mut cmd = diag(db);
    cmd.args(["import", "--cluster", "c"]);
    if name.ends_with(".txt") {
        cmd.args(["--taken-at", &taken_at(name)]);
        let namespace = if name.contains("v1.37") {
            "imp-capture"
        } else {
            "prod"
        };
        cmd.args(["-n", namespace]);
    }
    ok(cmd.arg(fixture(name)))
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn export(db: &Path) -> Vec<serde_json::Value> {
    stdout(&ok(diag(db).args(["export", "--cluster", "c"])))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

const CAPTURED: &[&str] = &[
    "describe-pod-v1.37.txt",
    "describe-deploy-v1.37.txt",
    "describe-node-v1.37.txt",
    "describe-event-v1.37.txt",
    "get-events-v1.37.txt",
    "get-events-wide-v1.37.txt",
    "get-events-all-namespaces-v1.37.txt",
];

const OLDER: &[&str] = &[
    "get-events-v1.7.txt",
    "get-events-v1.8.txt",
    "get-events-all-namespaces-v1.11.txt",
    "describe-pod-v1.9.txt",
    "describe-pod-v1.12.txt",
    // What people paste alone (issue 30): an Events: table with no object above
    // it, `get events` rows without their header, 1.6 describe rows without
    // theirs (single tabs, and the runs of tabs a terminal's tab stops leave).
    "fragment-events-alone-v1.20.txt",
    "fragment-get-events-rows-v1.20.txt",
    "fragment-describe-rows-v1.6.txt",
    "fragment-describe-rows-tab-stops-v1.6.txt",
];

#[test]
fn every_layout_imports_as_its_golden_export() {
    for name in CAPTURED.iter().chain(OLDER) {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("diag.db");
        import(&db, name);
        let got: String = export(&db).iter().map(|v| format!("{v}\n")).collect();
        let golden = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/golden/import")
            .join(format!("{name}.jsonl"));
        if std::env::var_os("UPDATE_GOLDEN").is_some() {
            std::fs::create_dir_all(golden.parent().unwrap()).unwrap();
            std::fs::write(&golden, &got).unwrap();
        }
        let want = std::fs::read_to_string(&golden)
            .unwrap_or_else(|_| panic!("{} missing: run with UPDATE_GOLDEN=1", golden.display()));
        assert_eq!(got, want, "{name} differs from its golden export");
    }
}

#[test]
fn the_same_text_twice_adds_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    for name in CAPTURED.iter().chain(OLDER) {
        import(&db, name);
    }
    let before = export(&db);
    for name in CAPTURED.iter().chain(OLDER) {
        let out = stdout(&import(&db, name));
        assert!(out.contains(", 0 new occurrence(s)"), "{name}: {out}");
    }
    assert_eq!(export(&db), before);
}

/// The events of one namespace, as (Event uid, count, occurrences) sorted.
fn counted(rows: &[serde_json::Value]) -> Vec<(String, i64, i64)> {
    let mut v: Vec<_> = rows
        .iter()
        .filter(|r| r["object"]["namespace"] == "imp-capture")
        .map(|r| {
            (
                r["event_uid"].as_str().unwrap().to_string(),
                r["count"].as_i64().unwrap(),
                r["occurrences"].as_i64().unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn text_and_json_of_the_same_events_count_once_in_either_order() {
    let only_json = {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("diag.db");
        import(&db, "get-events-v1.37.json");
        counted(&export(&db))
    };
    let dump: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("get-events-v1.37.json")).unwrap())
            .unwrap();
    let counts: i64 = dump["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["count"].as_i64().unwrap_or(1).max(1))
        .sum();
    assert_eq!(only_json.iter().map(|r| r.2).sum::<i64>(), counts);

    // Text first: the JSON, which has uids and exact times, replaces every
    // Event the text gave, and nothing is counted twice.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    for name in CAPTURED {
        import(&db, name);
    }
    import(&db, "get-events-v1.37.json");
    assert_eq!(counted(&export(&db)), only_json);

    // JSON first: the text adds nothing to the namespace the dump covers (the
    // Node's Events, in describe node and -A, are not in it).
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    import(&db, "get-events-v1.37.json");
    for name in CAPTURED {
        let out = stdout(&import(&db, name));
        if !name.contains("node") && !name.contains("all-namespaces") {
            assert!(out.contains(", 0 new occurrence(s)"), "{name}: {out}");
        }
    }
    assert_eq!(counted(&export(&db)), only_json);
}

#[test]
fn check_and_timeline_read_text_imports() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    import(&db, "get-events-v1.37.txt");
    // Exit 1: findings.
    let check = diag(&db)
        .args(["check", "scheduling", "--cluster", "c", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert_eq!(check.status.code(), Some(1), "{check:?}");
    let check = stdout(&check);
    assert!(check.contains("Pod/too-big"), "{check}");
    assert!(check.contains("Insufficient cpu"), "{check}");
    let timeline = stdout(&ok(diag(&db)
        .args([
            "timeline",
            "pod/too-big",
            "-n",
            "imp-capture",
            "--cluster",
            "c",
            "--db",
        ])
        .arg(&db)));
    assert!(timeline.contains("FailedScheduling"), "{timeline}");
    assert!(timeline.contains("Unhealthy"), "{timeline}");
}

#[test]
fn a_file_that_is_neither_is_refused_naming_what_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    let out = diag(&db)
        .args(["import", "--cluster", "c"])
        .arg(fixture("neither.txt"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    for format in [
        "`kubectl get events` tables",
        "`kubectl describe`",
        "-o json|yaml",
        "JSON Lines",
    ] {
        assert!(err.contains(format), "{err}");
    }
    assert!(err.contains("nothing of it was stored"), "{err}");
    assert!(export(&db).is_empty());
}

#[test]
fn without_taken_at_the_mtime_is_used_and_said() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    let out = ok(diag(&db)
        .args(["import", "--cluster", "c", "-n", "imp-capture"])
        .arg(fixture("get-events-v1.37.txt")));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("its modification time"), "{err}");
    assert!(err.contains("--taken-at"), "{err}");
}

/// A fragment's object, when the text does not say it, comes from
/// `--object`; without it the Events are stored with no object, and said so.
#[test]
fn a_fragment_without_its_object_takes_it_from_object() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    let name = "fragment-describe-rows-v1.6.txt";
    let out = diag(&db)
        .args([
            "import",
            "--cluster",
            "c",
            "-n",
            "prod",
            "--taken-at",
            &taken_at(name),
        ])
        .arg(fixture(name))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("pass --object KIND/NAME"), "{err}");
    let db2 = dir.path().join("named.db");
    ok(diag(&db2)
        .args([
            "import",
            "--cluster",
            "c",
            "-n",
            "prod",
            "--object",
            "pod/web-3384719452-x2k8q",
        ])
        .args(["--taken-at", &taken_at(name)])
        .arg(fixture(name)));
    let rows = export(&db2);
    assert_eq!(rows.len(), 5, "{rows:?}");
    for r in &rows {
        assert_eq!(r["object"]["kind"], "Pod", "{r}");
        assert_eq!(r["object"]["name"], "web-3384719452-x2k8q", "{r}");
        assert_eq!(r["object"]["namespace"], "prod", "{r}");
    }
    let bad = diag(&db2)
        .args(["import", "--object", "web"])
        .arg(fixture(name))
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("is not KIND/NAME"));
}

/// Issue 48: the modern `kubectl events` table pasted after a prompt and
/// before the next one, with a `get events --watch` and another watch's
/// stray lines after it: each row its own Event, with its series' count;
/// nothing glued into a message.
#[test]
fn a_kubectl_events_paste_among_prompts_is_one_event_per_row() {
    let paste = "\
$ kubectl events -n shop
LAST SEEN               TYPE      REASON             OBJECT                          MESSAGE
58m                     Normal    Scheduled          Pod/web-7d4b9c5f8-abcde         Successfully assigned shop/web-7d4b9c5f8-abcde to node-1
3m30s (x256 over 58m)   Warning   BackOff            Pod/web-7d4b9c5f8-abcde         Back-off restarting failed container web in pod web-7d4b9c5f8-abcde_shop(1b2c)
52s                     Normal    ScalingReplicaSet  Deployment/web                  Scaled up replica set web-7d4b9c5f8 from 0 to 1
12s (x3 over 40s)       Warning   FailedScheduling   Pod/web-7d4b9c5f8-zzzzz         0/3 nodes are available: 3 Insufficient cpu.
$ kubectl get pods -w
NAME                    AGE
web-7d4b9c5f8-abcde     5s
";
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("paste.txt");
    std::fs::write(&file, paste).unwrap();
    let db = dir.path().join("r.db");
    let out = ok(diag(&db).args([
        "import",
        "--taken-at",
        "2026-11-29T04:00:00Z",
        "-n",
        "shop",
        file.to_str().unwrap(),
    ]));
    assert!(stdout(&out).contains("4 Event(s)"), "{}", stdout(&out));
    let rows = stdout(&ok(diag(&db).args([
        "sql",
        "-o",
        "csv",
        "SELECT r.s AS reason, (SELECT m.s FROM occurrences o JOIN strings m ON m.id = o.message WHERE o.event_id = e.id ORDER BY o.count DESC LIMIT 1) AS message, e.count FROM events e JOIN strings r ON r.id = e.reason ORDER BY r.s",
    ])));
    let lines: Vec<&str> = rows.lines().skip(1).collect();
    assert_eq!(lines.len(), 4, "{rows}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("BackOff,") && l.ends_with(",256")),
        "{rows}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("FailedScheduling,") && l.ends_with(",3")),
        "{rows}"
    );
    assert!(
        !rows.contains("NAME") && !rows.contains("kubectl get pods"),
        "glued: {rows}"
    );
}

/// Regression (a `kubectl events` table pasted from an incident, in the
/// layout of kubectl 1.26+, written for this test): the Deployment's
/// timeline showed only its own Event, since nothing known from Events has
/// an owner reference; a kubelet's three `Failed` Events of one Pod
/// (ErrImagePull ×4, ImagePullBackOff ×42) were counted as one series, 42
/// stored as 38; and `check` said "No findings", leaving a Pod's Warnings to
/// an R001 that Events alone cannot give. Now its ReplicaSet and Pod are tied
/// to it by name, and said to be; each Event keeps its own count; the Pod's
/// back-off is an R004; and the story reads in causal order.
#[test]
fn a_pasted_kubectl_events_table_tells_the_deployments_story_tied_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    let out = stdout(&import(&db, "events-image-pull-paste.txt"));
    assert!(
        out.contains("8 Event(s), 96 new occurrence(s)"),
        "each Event keeps its own count: {out}"
    );
    let timeline = stdout(&ok(diag(&db)
        .args([
            "timeline",
            "deploy/web",
            "-n",
            "prod",
            "--cluster",
            "c",
            "--db",
        ])
        .arg(&db)));
    let screen: Vec<&str> = timeline.lines().take(25).collect();
    assert!(
        screen[0].contains(
            "known from Events only, with ReplicaSet web-7d9c6b5f4, Pod web-7d9c6b5f4-2xkqp tied to it by name"
        ),
        "{timeline}"
    );
    let at = |words: &str| {
        screen
            .iter()
            .position(|l| l.contains(words))
            .unwrap_or_else(|| panic!("{words:?} not on the first screen:\n{timeline}"))
    };
    let order = [
        at("Scaled up replica set web-7d9c6b5f4"),
        at("Created pod: web-7d9c6b5f4-2xkqp"),
        at("Successfully assigned prod/web-7d9c6b5f4-2xkqp"),
        at("×4 over 2m (until 2026-12-04 03:04:00): Error: ErrImagePull"),
        at("×42 over 11m (until 2026-12-04 03:13:00): Error: ImagePullBackOff"),
    ];
    assert!(
        order.windows(2).all(|w| w[0] < w[1]),
        "out of order:\n{timeline}"
    );
    assert!(!timeline.contains("×38"), "{timeline}");
    let check = diag(&db)
        .args(["check", "-n", "prod", "--cluster", "c", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert_eq!(check.status.code(), Some(1), "{check:?}");
    let check = stdout(&check);
    assert!(
        check.contains("R004") && check.contains("Pod/web-7d9c6b5f4-2xkqp"),
        "{check}"
    );
    assert!(check.contains("Failed ×42"), "{check}");
}

/// Regression: a plain `kubectl get events` table (no COUNT column) of a
/// storm was stored as one occurrence per row, and `import` said nothing:
/// read later, the storm was "×1". Now `import` says how many rows show no
/// count and which commands print it; a layout with counts says nothing.
#[test]
fn a_table_without_counts_says_how_often_is_unknown() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    let plain = import(&db, "get-events-v1.37.txt");
    let rows = std::fs::read_to_string(fixture("get-events-v1.37.txt"))
        .unwrap()
        .lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .count();
    let stderr = String::from_utf8_lossy(&plain.stderr).into_owned();
    assert!(
        stderr.contains(&format!("{rows} row(s) show no count")),
        "{stderr}"
    );
    assert!(stderr.contains("kubectl get events -o wide"), "{stderr}");
    let wide = import(&db, "get-events-wide-v1.37.txt");
    let stderr = String::from_utf8_lossy(&wide.stderr).into_owned();
    assert!(!stderr.contains("show no count"), "{stderr}");
}
