//! Stored text cannot drive the terminal: an Event is written by anyone who may
//! create Events, so every table that prints stored text makes its control
//! characters visible (`\x1b`), and JSON escapes them as JSON does. No cluster
//! needed: the Events come in through `import`.

use std::path::Path;
use std::process::{Command, Output};

/// OSC 0 (retitle the terminal) ended by BEL, cursor up, carriage return: the
/// sequence from issue 18.
const ATTACK: &str = "\u{1b}]0;x\u{7}\u{1b}[1A\r";

fn diag(db: &Path, args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_kubectl-diag"))
        .env("KUBECTL_DIAG_DB", db)
        .env("NO_COLOR", "1")
        .env("XDG_CONFIG_HOME", db.parent().unwrap())
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.code().is_some_and(|c| c < 2),
        "{args:?}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn event(name: &str, reason: &str, message: &str) -> serde_json::Value {
    serde_json::json!({
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": "shop", "uid": format!("uid-{name}")},
        "involvedObject": {"apiVersion": "v1", "kind": "Pod", "name": "evil", "namespace": "shop", "uid": "pod-evil"},
        "reason": reason,
        "message": message,
        "type": "Warning",
        "count": 2,
        "firstTimestamp": "2026-11-30T10:00:00Z",
        "lastTimestamp": "2026-11-30T10:01:00Z",
        "source": {"component": "kubelet"}
    })
}

/// A recording holding Events whose message and reason carry terminal controls.
fn recording(dir: &Path) -> std::path::PathBuf {
    let db = dir.join("diag.db");
    let list = serde_json::json!({
        "apiVersion": "v1",
        "kind": "List",
        "items": [
            event("evil.1", "BackOff", &format!("Back-off {ATTACK} restarting \u{9b}2J\u{202e}gpj.exe")),
            event("evil.2", "FailedScheduling", &format!("0/3 nodes are available: 3 Insufficient cpu{ATTACK}.")),
            event("evil.3", "Bad\u{1b}[2JReason", "plain"),
        ],
    });
    let file = dir.join("events.json");
    std::fs::write(&file, serde_json::to_vec_pretty(&list).unwrap()).unwrap();
    diag(&db, &["import", "--cluster", "c", file.to_str().unwrap()]);
    db
}

/// No terminal control character at all: C0 but the table's own newlines,
/// DEL, C1, and the bidi override.
fn assert_inert(what: &str, text: &str) {
    for (i, c) in text.chars().enumerate() {
        assert!(
            c == '\n' || !(c.is_control() || c == '\u{202e}'),
            "{what}: U+{:04X} at char {i} in:\n{text}",
            c as u32
        );
    }
}

#[test]
fn an_event_message_with_terminal_controls_prints_escaped_in_every_table() {
    let dir = tempfile::tempdir().unwrap();
    let db = recording(dir.path());
    let stdout = |args: &[&str]| String::from_utf8(diag(&db, args).stdout).unwrap();

    for args in [
        &["timeline", "pod/evil", "-n", "shop", "--cluster", "c"][..],
        &[
            "timeline",
            "pod/evil",
            "-n",
            "shop",
            "--cluster",
            "c",
            "-o",
            "wide",
        ],
        &["query", "object-events", "--param", "name=evil"],
        &["sql", "SELECT s AS text FROM strings"],
    ] {
        let out = stdout(args);
        assert_inert(&format!("{args:?}"), &out);
        assert!(
            out.contains(r"\x1b]0;x\x07\x1b[1A\r"),
            "{args:?} does not show the sequence escaped:\n{out}"
        );
        assert!(out.contains(r"\u{9b}2J\u{202e}gpj.exe"), "{args:?}:\n{out}");
    }
    // The reason too, where a table prints it.
    let out = stdout(&[
        "query",
        "warnings-by-reason",
        "--since",
        "2020-01-01T00:00:00Z",
    ]);
    assert_inert("query warnings-by-reason", &out);
    assert!(out.contains(r"Bad\x1b[2JReason"), "{out}");

    // `check` over the recording: whatever of the Events it prints is inert.
    let db_arg = db.to_str().unwrap();
    let out = stdout(&["check", "--cluster", "c", "--db", db_arg]);
    assert_inert("check", &out);
    let out = stdout(&["check", "--cluster", "c", "--db", db_arg, "-o", "wide"]);
    assert_inert("check -o wide", &out);

    // The HTML page: escaped for the terminal (it is read with cat and less
    // too) and for HTML.
    let html = stdout(&[
        "timeline",
        "pod/evil",
        "-n",
        "shop",
        "--cluster",
        "c",
        "-o",
        "html",
    ]);
    assert_inert("timeline -o html", &html);
    assert!(html.contains(r"\x1b]0;x\x07\x1b[1A\r"), "{html}");
}

#[test]
fn json_output_escapes_terminal_controls_as_json_does() {
    let dir = tempfile::tempdir().unwrap();
    let db = recording(dir.path());
    for args in [
        &[
            "timeline",
            "pod/evil",
            "-n",
            "shop",
            "--cluster",
            "c",
            "-o",
            "json",
        ][..],
        &[
            "query",
            "object-events",
            "--param",
            "name=evil",
            "-o",
            "json",
        ],
        &["sql", "SELECT s AS text FROM strings", "-o", "jsonl"],
        &["export", "--cluster", "c"],
    ] {
        let out = String::from_utf8(diag(&db, args).stdout).unwrap();
        // NB: serde_json escapes C0 (ESC, BEL, CR) but passes DEL, C1 and the
        // bidi override through as they are: valid JSON, and JSON is for programs.
        for c in out.chars() {
            assert!(
                c == '\n' || (c as u32) >= 0x20,
                "{args:?}: U+{:04X} raw in JSON:\n{out}",
                c as u32
            );
        }
        assert!(
            out.contains(r"\u001b]0;x\u0007\u001b[1A\r"),
            "{args:?}:\n{out}"
        );
        // And the JSON reads back as the very text that was stored.
        let docs: Vec<serde_json::Value> = match serde_json::from_str(&out) {
            Ok(doc) => vec![doc],
            Err(_) => out
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect(),
        };
        assert!(
            docs.iter().any(holds_attack),
            "{args:?}: no string holds the stored message:\n{out}"
        );
    }
}

fn holds_attack(v: &serde_json::Value) -> bool {
    match v {
        serde_json::Value::String(s) => s.contains(ATTACK),
        serde_json::Value::Array(a) => a.iter().any(holds_attack),
        serde_json::Value::Object(o) => o.values().any(holds_attack),
        _ => false,
    }
}

/// The error that lists the recorded names of a kind prints them escaped: an
/// imported Event can name any object, no apiserver validated it.
#[test]
fn the_names_an_error_lists_are_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    let mut e = event("odd.1", "BackOff", "x");
    e["involvedObject"]["name"] = "bad\u{1b}]0;owned\u{7}".into();
    let file = dir.path().join("odd.json");
    std::fs::write(&file, e.to_string()).unwrap();
    diag(&db, &["import", "--cluster", "c", file.to_str().unwrap()]);
    let out = Command::new(env!("CARGO_BIN_EXE_kubectl-diag"))
        .env("KUBECTL_DIAG_DB", &db)
        .env("KUBECONFIG", dir.path().join("none"))
        .args(["timeline", "pod/nope", "-n", "shop", "--cluster", "c"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_inert("timeline's error", &stderr);
    assert!(stderr.contains(r"bad\x1b]0;owned\x07"), "{stderr}");
}
