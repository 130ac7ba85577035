//! Issue 44's findings about the HTTP clients (items 6 and 7), run as a user
//! would run the binary against servers written here: one that accepts and
//! never answers, one that sends a reply's head and then trickles its body
//! (or sends none), and one that streams an endless body. Each test is named
//! after what broke. No cluster, no ClickHouse, no collector.
//!
//! Each run is bounded ([`bounded`]): a command still running past its bound
//! is killed and the test fails as a hang. The bounds are far above the
//! limits under test: they say "returns", not "returns fast".

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::cli;
use cli::{diag, write};

// ---------------------------------------------------------------- the servers

/// Listens on a free port of 127.0.0.1 and hands each connection to `serve`
/// on a thread of its own; the threads end with the test process.
fn server(serve: fn(TcpStream)) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || serve(stream));
        }
    });
    port
}

/// Accepts and never answers (nor reads).
fn black_hole() -> u16 {
    server(|stream| {
        std::thread::sleep(Duration::from_secs(3600));
        drop(stream);
    })
}

/// Reads a request's head (and whatever follows it at once).
fn read_head(stream: &mut TcpStream) {
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => seen.extend_from_slice(&buf[..n]),
        }
    }
}

/// Answers a 200's head, a body of a megabyte announced, and then no byte of it.
fn head_and_no_body() -> u16 {
    server(|mut stream| {
        read_head(&mut stream);
        let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n");
        std::thread::sleep(Duration::from_secs(3600));
    })
}

/// Answers a 200's head, then a byte of its body every half second: never idle, never done.
fn head_and_trickle() -> u16 {
    server(|mut stream| {
        read_head(&mut stream);
        let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n");
        while stream.write_all(b"x").is_ok() {
            std::thread::sleep(Duration::from_millis(500));
        }
    })
}

/// Answers with `status` and a chunked body that never ends, as fast as it is read.
fn endless(status: &'static str) -> impl Fn() -> u16 {
    move || {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            for mut stream in listener.incoming().flatten() {
                std::thread::spawn(move || {
                    read_head(&mut stream);
                    let head = format!(
                        "HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n"
                    );
                    if stream.write_all(head.as_bytes()).is_err() {
                        return;
                    }
                    let mut chunk = format!("{:x}\r\n", 64 * 1024).into_bytes();
                    chunk.extend(std::iter::repeat_n(b'x', 64 * 1024));
                    chunk.extend_from_slice(b"\r\n");
                    while stream.write_all(&chunk).is_ok() {}
                });
            }
        });
        port
    }
}

// ---------------------------------------------------------------- running

/// What a bounded run gave.
struct Ran {
    code: Option<i32>,
    err: String,
    took: Duration,
    /// The largest resident set seen while it ran, in KiB.
    peak_rss_kib: u64,
}

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

/// Runs `cmd`, killed (and the test failed as a hang) if it is still running after `bound`.
fn bounded(cmd: &mut Command, bound: Duration) -> Ran {
    let started = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let mut peak = 0;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        peak = peak.max(rss_kib(child.id()));
        if started.elapsed() > bound {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "still running after {} s: it hangs; stderr: {}",
                bound.as_secs(),
                reader.join().unwrap()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Ran {
        code: status.code(),
        err: reader.join().unwrap(),
        took: started.elapsed(),
        peak_rss_kib: peak,
    }
}

/// `kubectl-diag` with no kubeconfig and no password from the environment.
fn bare(dir: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kubectl-diag"));
    cmd.env("NO_COLOR", "1")
        .env("KUBECONFIG", dir.join("no-kubeconfig"))
        .env_remove("KUBECTL_DIAG_CLICKHOUSE_PASSWORD");
    cmd
}

/// A recording of one imported Event, to ship.
fn recording(dir: &Path) -> std::path::PathBuf {
    let events = write(
        dir,
        "events.json",
        r#"{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Event",
        "metadata":{"name":"web.1","namespace":"default","uid":"e1"},
        "involvedObject":{"kind":"Pod","name":"web","namespace":"default","uid":"p1"},
        "reason":"BackOff","message":"Back-off restarting failed container","type":"Warning",
        "count":1,"firstTimestamp":"2026-01-01T00:00:00Z","lastTimestamp":"2026-01-01T00:00:00Z",
        "source":{"component":"kubelet"}}]}"#,
    );
    let db = dir.join("diag.db");
    let out = diag(&db).arg("import").arg(&events).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    db
}

/// Runs `f` on every case at once (each waits for its own limits), failing as the first that fails.
fn each<T: Send>(cases: Vec<T>, f: impl Fn(T) + Sync) {
    std::thread::scope(|scope| {
        let running: Vec<_> = cases
            .into_iter()
            .map(|case| scope.spawn(|| f(case)))
            .collect();
        for r in running {
            if let Err(panic) = r.join() {
                std::panic::resume_unwind(panic);
            }
        }
    });
}

/// The three servers that do not answer, by name: their ports.
fn unanswering() -> Vec<(&'static str, u16)> {
    vec![
        ("black hole", black_hole()),
        ("head, no body", head_and_no_body()),
        ("head, trickled body", head_and_trickle()),
    ]
}

/// Far above every limit under test (10 s probes, 30 s requests): only a hang reaches it.
const BOUND: Duration = Duration::from_secs(120);

/// A run that failed as a server that does not answer is said to.
fn assert_unanswered(what: &str, ran: &Ran) {
    assert_eq!(ran.code, Some(2), "{what}: {}", ran.err);
    assert!(
        ran.err.contains("does not answer") && ran.err.contains(" s"),
        "{what}: {}",
        ran.err
    );
}

// ---------------------------------------------------------------- 44.6

/// 44.6: `sql --store … --timeout 3s` against a ClickHouse that accepts and
/// never answers (or answers a head and no body) hung past 300 s: the client
/// had no timeout and `--timeout` was only sent to the server.
#[test]
fn sql_store_timeout_is_honoured_when_clickhouse_never_answers() {
    let dir = tempfile::tempdir().unwrap();
    each(unanswering(), |(server, port)| {
        let ran = bounded(
            bare(dir.path()).args([
                "sql",
                "--store",
                &format!("clickhouse://127.0.0.1:{port}/diag"),
                "--timeout",
                "3s",
                "SELECT 1",
            ]),
            BOUND,
        );
        assert_unanswered(server, &ran);
        assert!(
            ran.err.contains("past --timeout 3s"),
            "{server}: {}",
            ran.err
        );
        // NB: --timeout and a few seconds for the server to say it stopped the statement.
        assert!(
            ran.took < Duration::from_secs(60),
            "{server}: {:?}",
            ran.took
        );
    });
}

/// 44.6: `ship --to clickhouse://…` against a ClickHouse that never answers
/// hung past 300 s in its start probe.
#[test]
fn ship_to_a_clickhouse_that_never_answers_fails_instead_of_hanging() {
    let dir = tempfile::tempdir().unwrap();
    let db = recording(dir.path());
    let cases = unanswering()
        .into_iter()
        .flat_map(|(server, port)| [(server, port, false), (server, port, true)])
        .collect();
    each(cases, |(server, port, create)| {
        let mut cmd = bare(dir.path());
        cmd.arg("--db").arg(&db).args([
            "ship",
            "--to",
            &format!("clickhouse://127.0.0.1:{port}/diag"),
        ]);
        if create {
            cmd.arg("--create-schema");
        }
        let ran = bounded(&mut cmd, BOUND);
        assert_unanswered(&format!("{server} create={create}"), &ran);
    });
}

/// 44.6: `ship --to otlp+http://…` against a collector that never answers hung.
#[test]
fn ship_to_an_otlp_endpoint_that_never_answers_fails_instead_of_hanging() {
    let dir = tempfile::tempdir().unwrap();
    let db = recording(dir.path());
    each(unanswering(), |(server, port)| {
        let ran = bounded(
            bare(dir.path()).arg("--db").arg(&db).args([
                "ship",
                "--to",
                &format!("otlp+http://127.0.0.1:{port}/v1/logs"),
            ]),
            BOUND,
        );
        assert_unanswered(server, &ran);
    });
}

/// 44.6: `export --store` against a ClickHouse that never answers hung past 25 s.
#[test]
fn export_store_against_a_clickhouse_that_never_answers_fails_instead_of_hanging() {
    let dir = tempfile::tempdir().unwrap();
    each(unanswering(), |(server, port)| {
        let ran = bounded(
            bare(dir.path()).args([
                "export",
                "--store",
                &format!("clickhouse://127.0.0.1:{port}/diag"),
            ]),
            BOUND,
        );
        assert_unanswered(server, &ran);
    });
}

// ---------------------------------------------------------------- 44.7

/// The most a command may grow to while a server streams at it: the
/// recorder reached 6.5 GB in 8 s before the cap; a capped read stays far
/// below this (not a measure of the binary's size, only of "not unbounded").
const NOT_UNBOUNDED_KIB: u64 = 512 * 1024;

/// 44.7: an OTLP endpoint streaming a 200 OK body endlessly grew the
/// recorder to 6.5 GB RSS in 8 s: the whole body was read into memory.
#[test]
fn an_otlp_endpoint_streaming_an_endless_200_body_is_read_only_a_few_kib() {
    let dir = tempfile::tempdir().unwrap();
    let db = recording(dir.path());
    for status in ["200 OK", "500 Internal Server Error", "400 Bad Request"] {
        let port = endless(status)();
        let ran = bounded(
            bare(dir.path()).arg("--db").arg(&db).args([
                "ship",
                "--to",
                &format!("otlp+http://127.0.0.1:{port}/v1/logs"),
            ]),
            BOUND,
        );
        assert_eq!(ran.code, Some(2), "{status}: {}", ran.err);
        assert!(
            ran.err
                .contains("the answer's body is over 16 KiB: not read past that"),
            "{status}: {}",
            ran.err
        );
        assert!(
            ran.peak_rss_kib < NOT_UNBOUNDED_KIB,
            "{status}: {} KiB",
            ran.peak_rss_kib
        );
    }
}

/// 44.7: a ClickHouse error's body is read whole by the client crate: one
/// that never ends grew the process without bound.
#[test]
fn a_clickhouse_error_streamed_endlessly_is_cut_and_said_so() {
    let dir = tempfile::tempdir().unwrap();
    let db = recording(dir.path());
    let port = endless("500 Internal Server Error")();
    let url = format!("clickhouse://127.0.0.1:{port}/diag");
    for (what, mut cmd) in [
        ("ship", {
            let mut c = bare(dir.path());
            c.arg("--db").arg(&db).args(["ship", "--to", &url]);
            c
        }),
        ("sql --store", {
            let mut c = bare(dir.path());
            c.args(["sql", "--store", &url, "SELECT 1"]);
            c
        }),
        ("export --store", {
            let mut c = bare(dir.path());
            c.args(["export", "--store", &url]);
            c
        }),
    ] {
        let ran = bounded(&mut cmd, BOUND);
        assert_eq!(ran.code, Some(2), "{what}: {}", ran.err);
        assert!(
            ran.err.contains("is over 32 KiB: not read past that"),
            "{what}: {}",
            ran.err
        );
        assert!(
            ran.peak_rss_kib < NOT_UNBOUNDED_KIB,
            "{what}: {} KiB",
            ran.peak_rss_kib
        );
    }
}

/// 44.7: a "ClickHouse" that answers the start probe with a 200 and an
/// endless body: the probe's reply is a few bytes, and no more is read.
#[test]
fn a_clickhouse_probe_answered_with_an_endless_200_body_is_cut_and_said_so() {
    let dir = tempfile::tempdir().unwrap();
    let db = recording(dir.path());
    let port = endless("200 OK")();
    let ran = bounded(
        bare(dir.path()).arg("--db").arg(&db).args([
            "ship",
            "--to",
            &format!("clickhouse://127.0.0.1:{port}/diag"),
        ]),
        BOUND,
    );
    assert_eq!(ran.code, Some(2), "{}", ran.err);
    assert!(
        ran.err
            .contains("the reply is over 16 KiB: not read past that"),
        "{}",
        ran.err
    );
    assert!(
        ran.peak_rss_kib < NOT_UNBOUNDED_KIB,
        "{} KiB",
        ran.peak_rss_kib
    );
}
