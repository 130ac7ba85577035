//! `kubectl diag record` against the real apiserver: every occurrence once,
//! across restarts, kill -9, 410 Gone; gaps recorded; clear refusals.

use crate::support;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use k8s_openapi::api::core::v1::Event;
use kube::Api;
use kube::api::{Patch, PatchParams, PostParams};
use serde_json::{Value, json};
use support::{Background, TestNamespace, diag, run_ok, viewer_kubeconfig, wait_until};

fn export(db: &Path) -> Vec<Value> {
    let out = run_ok(diag(db).arg("export"));
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// (event name, count) -> occurrences, for the lines of one namespace.
fn lines_by_event(lines: &[Value], ns: &str) -> BTreeMap<(String, i64), i64> {
    let mut out = BTreeMap::new();
    for l in lines.iter().filter(|l| l["event"]["namespace"] == ns) {
        let key = (
            l["event"]["name"].as_str().unwrap().to_string(),
            l["count"].as_i64().unwrap(),
        );
        assert!(
            out.insert(key.clone(), l["occurrences"].as_i64().unwrap())
                .is_none(),
            "duplicate line {key:?}"
        );
    }
    out
}

fn core_event(ns: &str, name: &str, count: i32, first: &str, last: &str) -> Event {
    serde_json::from_value(json!({
        "metadata": {"name": name},
        "involvedObject": {"kind": "Pod", "name": "web-1", "namespace": ns, "apiVersion": "v1", "uid": "11111111-2222-3333-4444-555555555555"},
        "reason": "BackOff", "type": "Warning",
        "message": "Back-off restarting failed container web in pod web-1",
        "count": count, "firstTimestamp": first, "lastTimestamp": last,
        "source": {"component": "kubelet", "host": "kwok-small"}
    }))
    .unwrap()
}

async fn bump(api: &Api<Event>, name: &str, count: i32, last: &str) {
    api.patch(
        name,
        &PatchParams::default(),
        &Patch::Merge(json!({"count": count, "lastTimestamp": last})),
    )
    .await
    .unwrap();
}

/// A singleton Event (count 1) about web-1.
async fn create_single(api: &Api<Event>, ns: &str, name: &str) {
    let first = "2026-11-29T03:00:00Z";
    api.create(
        &PostParams::default(),
        &core_event(ns, name, 1, first, first),
    )
    .await
    .unwrap();
}

fn record_once(db: &Path, ns: &str) {
    run_ok(diag(db).args(["record", "--once", "--quiet", "-n", ns]));
}

#[tokio::test]
async fn once_stores_each_occurrence_once_and_count_jumps_honestly() {
    let ns = TestNamespace::new("rec-once").await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    let events: Api<Event> = ns.api();

    create_single(&events, &ns.name, "single").await;
    create_single(&events, &ns.name, "repeated").await;
    // events.k8s.io/v1 with a series, as newer controllers write them.
    let new_api: Api<k8s_openapi::api::events::v1::Event> = ns.api();
    new_api
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({
                "metadata": {"name": "series"},
                "eventTime": "2026-11-29T03:00:00.000000Z",
                "series": {"count": 2, "lastObservedTime": "2026-11-29T03:01:00.000000Z"},
                "reportingController": "example.com/operator", "reportingInstance": "operator-0",
                "action": "Reconcile", "reason": "Retrying", "type": "Normal",
                "regarding": {"kind": "ConfigMap", "name": "cfg", "namespace": ns.name, "apiVersion": "v1"},
                "note": "retrying reconcile"
            }))
            .unwrap(),
        )
        .await
        .unwrap();
    record_once(&db, &ns.name);

    bump(&events, "repeated", 2, "2026-11-29T03:01:00Z").await;
    record_once(&db, &ns.name);
    bump(&events, "repeated", 3, "2026-11-29T03:02:00Z").await;
    bump(&events, "repeated", 7, "2026-11-29T03:06:00Z").await; // seen only as 3 -> 7
    new_api
        .patch(
            "series",
            &PatchParams::default(),
            &Patch::Merge(
                json!({"series": {"count": 3, "lastObservedTime": "2026-11-29T03:02:00.000000Z"}}),
            ),
        )
        .await
        .unwrap();
    record_once(&db, &ns.name);
    // Nothing changed: a further pass stores nothing.
    record_once(&db, &ns.name);

    let lines = export(&db);
    let got = lines_by_event(&lines, &ns.name);
    let want: BTreeMap<(String, i64), i64> = [
        (("repeated".to_string(), 1), 1),
        (("repeated".to_string(), 2), 1),
        (("repeated".to_string(), 7), 5),
        (("series".to_string(), 2), 2),
        (("series".to_string(), 3), 1),
        (("single".to_string(), 1), 1),
    ]
    .into_iter()
    .collect();
    assert_eq!(got, want);

    let jump = lines
        .iter()
        .find(|l| l["event"]["name"] == "repeated" && l["count"] == 7)
        .unwrap();
    // The jump's first time is the previous observation (count 2 at 03:01), not an invented one.
    assert_eq!(jump["first"], "2026-11-29T03:01:00Z");
    assert_eq!(jump["last"], "2026-11-29T03:06:00Z");
    assert_eq!(jump["object"]["kind"], "Pod");
    assert_eq!(jump["object"]["name"], "web-1");
    assert_eq!(jump["reporting_controller"], "kubelet");
    assert_eq!(jump["type"], "Warning");
    let series = lines
        .iter()
        .find(|l| l["event"]["name"] == "series" && l["count"] == 3)
        .unwrap();
    assert_eq!(series["reporting_controller"], "example.com/operator");
    assert_eq!(series["message"], "retrying reconcile");
    assert_eq!(series["object"]["kind"], "ConfigMap");
    // The cluster id is the kube-system namespace's uid.
    let ks: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(ns.client.clone());
    let uid = ks.get("kube-system").await.unwrap().metadata.uid.unwrap();
    assert_eq!(jump["cluster"], uid.as_str());
}

fn occurrences_of(db: &Path, reason: &str) -> i64 {
    rusqlite::Connection::open(db)
        .unwrap()
        .query_row(
            "SELECT COUNT(*) FROM occurrences o JOIN events e ON e.id = o.event_id \
             JOIN strings s ON s.id = e.reason WHERE s.s = ?1",
            [reason],
            |r| r.get(0),
        )
        .unwrap()
}

/// Regression (issue 44.1): `record --once` never applied `--retain` or
/// `--max-db-size`, so a file kept by `--once` runs (a CronJob) grew without
/// bound while a watching recorder's file kept its limits.
#[tokio::test]
async fn once_applies_retention_as_a_watching_recorder_does() {
    let ns = TestNamespace::new("rec-once-retain").await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    let old = (chrono::Utc::now() - chrono::Duration::days(3))
        .format("%Y-%m-%dT%H:%M:%SZ")
        .to_string();
    let file = dir.path().join("old-events.json");
    std::fs::write(
        &file,
        json!({"kind": "List", "items": [{
            "kind": "Event",
            "metadata": {"name": "p.old", "namespace": ns.name, "uid": "old-1"},
            "involvedObject": {"kind": "Pod", "namespace": ns.name, "name": "p"},
            "reason": "OldBackOff", "type": "Warning", "count": 1,
            "firstTimestamp": old, "lastTimestamp": old,
            "message": "Back-off restarting failed container"
        }]})
        .to_string(),
    )
    .unwrap();
    run_ok(diag(&db).arg("import").arg(&file));
    assert_eq!(occurrences_of(&db, "OldBackOff"), 1);
    let now = chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string();
    let mut fresh = core_event(&ns.name, "fresh", 1, &now, &now);
    fresh.reason = Some("FreshBackOff".into());
    let events: Api<Event> = ns.api();
    events.create(&PostParams::default(), &fresh).await.unwrap();

    // The default --retain (30d) keeps a 3-day-old occurrence.
    record_once(&db, &ns.name);
    assert_eq!(occurrences_of(&db, "OldBackOff"), 1, "kept under 30d");
    assert_eq!(occurrences_of(&db, "FreshBackOff"), 1);

    // --retain 1d drops it, as a watching recorder does at its start; the
    // Event just recorded stays.
    run_ok(diag(&db).args([
        "record",
        "--once",
        "--quiet",
        "--retain",
        "1d",
        "--retain-all",
        "-n",
        &ns.name,
    ]));
    assert_eq!(
        occurrences_of(&db, "OldBackOff"),
        0,
        "dropped by --retain 1d"
    );
    assert_eq!(
        occurrences_of(&db, "FreshBackOff"),
        1,
        "the recent Event stays"
    );
}

/// Starts `record -n NS` in the background and waits until its first list is committed.
async fn start_recorder(db: &Path, ns: &str) -> Background {
    let child = diag(db)
        .args(["record", "--quiet", "-n", ns])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let child = Background::new(child);
    let db = db.to_path_buf();
    let resource = format!("events/{ns}");
    wait_until(
        Duration::from_secs(30),
        "the recorder's first commit",
        || {
            let (db, resource) = (db.clone(), resource.clone());
            async move { position(&db, &resource).is_some() }
        },
    )
    .await;
    child
}

fn position(db: &Path, resource: &str) -> Option<String> {
    kubectl_diag::store::ask::ask_to_commit(db);
    let conn =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .ok()?;
    conn.query_row(
        "SELECT resource_version FROM watch_positions WHERE resource = ?1",
        [resource],
        |r| r.get(0),
    )
    .ok()
}

fn gaps(db: &Path) -> Vec<(String, i64, i64, String)> {
    kubectl_diag::store::ask::ask_to_commit(db);
    let conn =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let mut st = conn
        .prepare("SELECT reason, start, finish, detail FROM gaps ORDER BY id")
        .unwrap();
    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

fn stop(child: Background) -> std::process::ExitStatus {
    child.terminate()
}

fn total_occurrences(lines: &[Value], ns: &str) -> BTreeMap<String, i64> {
    let mut out = BTreeMap::new();
    for l in lines.iter().filter(|l| l["event"]["namespace"] == ns) {
        *out.entry(l["event"]["name"].as_str().unwrap().to_string())
            .or_default() += l["occurrences"].as_i64().unwrap();
    }
    out
}

#[tokio::test]
async fn kill_9_mid_burst_then_restart_is_still_exactly_once_with_a_gap() {
    let ns = TestNamespace::new("rec-kill").await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    let events: Api<Event> = ns.api();
    let mut child = Some(start_recorder(&db, &ns.name).await);

    let mut expected = BTreeMap::new();
    for i in 0..60 {
        let name = format!("burst-{i}");
        create_single(&events, &ns.name, &name).await;
        expected.insert(name, 1);
        if i == 30 {
            child.take().unwrap().kill_9(); // no flush, no session stop
        }
    }
    for i in 0..20 {
        let name = format!("burst-{i}");
        bump(&events, &name, 2, "2026-11-29T03:01:00Z").await;
        expected.insert(name, 2);
    }
    let child = start_recorder(&db, &ns.name).await;
    let want = expected.clone();
    wait_until(Duration::from_secs(30), "every burst occurrence", || {
        let (db, ns, want) = (db.clone(), ns.name.clone(), want.clone());
        async move { total_occurrences(&export(&db), &ns) == want }
    })
    .await;
    assert!(stop(child).success());
    // Exactly once: no (event, count) twice, and the totals match the counts.
    let lines = export(&db);
    lines_by_event(&lines, &ns.name);
    assert_eq!(total_occurrences(&lines, &ns.name), expected);
    let gaps = gaps(&db);
    assert!(
        gaps.iter().any(|g| g.0 == "not-running" && g.1 < g.2),
        "no not-running gap in {gaps:?}"
    );
}

/// Occurrences committed to the recording, read without asking the recorder
/// to commit (a plain read-only connection, not a kubectl-diag reader).
fn committed_occurrences(db: &Path) -> i64 {
    let conn =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    conn.query_row("SELECT COALESCE(SUM(n), 0) FROM occurrences", [], |r| {
        r.get(0)
    })
    .unwrap()
}

/// Feeds `rate` changes a second for `seconds` (3 in 4 create an Event, 1 in 4
/// bumps one created half a second before to count 2), kills the recorder with SIGKILL
/// `kill_after` into the feed, inside its commit window (issue 33: a
/// transaction stays open for up to --commit-every, a minute by default; at
/// 200/s it commits at 2,000 changes, 10 s in), goes on
/// feeding, and restarts it: every occurrence is stored, once.
async fn kill_9_inside_the_commit_window(prefix: &str, rate: u64, seconds: u64, kill_after: u64) {
    use futures::StreamExt;
    let ns = TestNamespace::new(prefix).await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    let events: Api<Event> = ns.api();
    let child = start_recorder(&db, &ns.name).await;
    let committed_before = committed_occurrences(&db);
    assert_eq!(committed_before, 0);

    let total = rate * seconds;
    let start = tokio::time::Instant::now();
    let name = |i: u64| format!("win-{i}");
    let feed = |range: std::ops::Range<u64>| {
        let (events, ns) = (events.clone(), ns.name.clone());
        futures::stream::iter(range)
            .map(move |i| {
                let (events, ns) = (events.clone(), ns.clone());
                async move {
                    let due = start + Duration::from_secs_f64(i as f64 / rate as f64);
                    tokio::time::sleep_until(due).await;
                    // NB: half a second's changes back, not the one before: up to
                    // 64 requests are in flight, so that one may not exist yet.
                    let back = 3 + 4 * (rate / 8).max(1);
                    if i % 4 == 3 && i >= back {
                        let target = i - back;
                        bump(&events, &name(target), 2, "2026-11-29T03:01:00Z").await;
                        (name(target), 2)
                    } else {
                        create_single(&events, &ns, &name(i)).await;
                        (name(i), 1)
                    }
                }
            })
            .buffered(64)
            .collect::<Vec<_>>()
    };
    let killed_at = kill_after * rate;
    let before_kill = feed(0..killed_at).await;
    // Inside the window: the feed's first change opened a transaction that
    // has not committed yet, so the kill throws away what the recorder held.
    let committed_at_kill = committed_occurrences(&db);
    child.kill_9();
    let after_kill = feed(killed_at..total).await;
    assert!(
        committed_at_kill < before_kill.len() as i64,
        "the kill fell outside a commit window: {committed_at_kill} of {} committed",
        before_kill.len()
    );

    let mut expected = BTreeMap::new();
    for (event, count) in before_kill.into_iter().chain(after_kill) {
        let c = expected.entry(event).or_insert(0);
        *c = (*c).max(count);
    }
    let child = start_recorder(&db, &ns.name).await;
    let want = expected.clone();
    wait_until(Duration::from_secs(60), "every fed occurrence", || {
        let (db, ns, want) = (db.clone(), ns.name.clone(), want.clone());
        async move { total_occurrences(&export(&db), &ns) == want }
    })
    .await;
    assert!(stop(child).success());
    let lines = export(&db);
    lines_by_event(&lines, &ns.name);
    assert_eq!(total_occurrences(&lines, &ns.name), expected);
    let stored: i64 = expected.values().sum();
    assert_eq!(committed_occurrences(&db), stored);
}

#[tokio::test]
async fn kill_9_inside_the_commit_window_at_10_per_second_loses_nothing() {
    kill_9_inside_the_commit_window("rec-kill10", 10, 8, 3).await;
}

#[tokio::test]
async fn kill_9_inside_the_commit_window_at_200_per_second_loses_nothing() {
    kill_9_inside_the_commit_window("rec-kill200", 200, 8, 3).await;
}

/// One value of the recorder's Prometheus /metrics on `addr` (0 when it does not answer).
fn metric(addr: &str, name: &str) -> u64 {
    use std::io::{Read, Write};
    let Ok(mut s) = std::net::TcpStream::connect(addr) else {
        return 0;
    };
    let _ = write!(s, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
    let mut body = String::new();
    let _ = s.read_to_string(&mut body);
    body.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

/// Issue 33: the recorder commits at the latest --commit-every after a change,
/// but a reader asks it to commit first (`store::ask`), so it sees every
/// change the recorder has received, however long the window.
#[tokio::test]
async fn a_reader_sees_what_the_recorder_received_before_it_commits_on_its_own() {
    let ns = TestNamespace::new("rec-fresh").await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    let events: Api<Event> = ns.api();
    let addr = support::free_local_addr();
    let child = support::start_recorder(
        &db,
        &ns.name,
        &["--events-only", "--commit-every", "20s", "--listen", &addr],
        &format!("events/{}", ns.name),
    )
    .await;
    let received = metric(&addr, "kubectl_diag_changes_total");
    create_single(&events, &ns.name, "fresh").await;
    wait_until(
        Duration::from_secs(10),
        "the recorder to receive it",
        || {
            let addr = addr.clone();
            async move { metric(&addr, "kubectl_diag_changes_total") > received }
        },
    )
    .await;
    // Received, not committed: the transaction waits for more.
    assert_eq!(committed_occurrences(&db), 0);
    let out = run_ok(diag(&db).args(["sql", "SELECT count(*) AS n FROM occurrences", "-o", "csv"]));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "n\n1\n");
    assert_eq!(committed_occurrences(&db), 1);
    assert!(stop(child).success());
    // A clean stop takes the socket away with it.
    let mut socket = db.as_os_str().to_owned();
    socket.push("-commit.sock");
    assert!(!Path::new(&socket).exists());
}

#[tokio::test]
async fn a_resume_position_too_old_gets_410_and_relists_without_loss_or_duplicates() {
    let ns = TestNamespace::new("rec-gone").await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    let events: Api<Event> = ns.api();
    create_single(&events, &ns.name, "before").await;
    let child = start_recorder(&db, &ns.name).await;
    assert!(stop(child).success());
    create_single(&events, &ns.name, "while-down").await;
    bump(&events, "before", 3, "2026-11-29T03:03:00Z").await;
    // Hold the watch far behind: resourceVersion 1 was compacted long ago.
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute("UPDATE watch_positions SET resource_version = '1'", [])
        .unwrap();
    drop(conn);

    let child = start_recorder(&db, &ns.name).await;
    let want: BTreeMap<String, i64> = [("before".to_string(), 3), ("while-down".to_string(), 1)]
        .into_iter()
        .collect();
    wait_until(Duration::from_secs(30), "the relisted events", || {
        let (db, ns, want) = (db.clone(), ns.name.clone(), want.clone());
        async move { total_occurrences(&export(&db), &ns) == want }
    })
    .await;
    assert!(stop(child).success());
    let lines = export(&db);
    let got = lines_by_event(&lines, &ns.name);
    assert_eq!(
        got.get(&("before".to_string(), 3)),
        Some(&2),
        "3 after 1 is one row of 2: {got:?}"
    );
    let gaps = gaps(&db);
    assert!(
        gaps.iter()
            .any(|g| g.0 == "not-running" && g.3.contains("relisted")),
        "the blind interval must say it was relisted: {gaps:?}"
    );
}

#[tokio::test]
async fn viewer_without_rbac_gets_a_clear_error_naming_verb_and_resource() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    let out = diag(&db)
        .env("KUBECONFIG", viewer_kubeconfig())
        .args(["record", "--once"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("forbidden"), "{err}");
    assert!(err.contains("`get` on namespaces"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[tokio::test]
async fn a_second_recorder_on_the_same_db_refuses() {
    let ns = TestNamespace::new("rec-two").await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    let first = start_recorder(&db, &ns.name).await;
    let out = diag(&db)
        .args(["record", "--quiet", "-n", &ns.name])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("another recorder"), "{err}");
    assert!(stop(first).success());
}

/// Two clusters into one file: the other cluster's recorder holds its write
/// transaction for up to a minute and answers the file's socket. Stands in
/// for it here: a connection that holds the lock and commits only when asked.
/// Regression: the second recorder failed with "database is locked".
#[tokio::test]
async fn a_recorder_sharing_its_file_asks_the_other_recorder_for_the_lock() {
    use kubectl_diag::store::ask::{ANSWER, REQUEST, socket_path};
    use std::io::{Read, Write};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

    let ns = TestNamespace::new("rec-share").await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    record_once(&db, &ns.name);
    let (stopping, asks) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicU64::new(0)),
    );
    let listener = std::os::unix::net::UnixListener::bind(socket_path(&db)).unwrap();
    listener.set_nonblocking(true).unwrap();
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.busy_timeout(Duration::from_secs(10)).unwrap();
    conn.execute_batch("BEGIN IMMEDIATE").unwrap();
    let other = {
        let (stopping, asks) = (stopping.clone(), asks.clone());
        std::thread::spawn(move || {
            while !stopping.load(Ordering::Relaxed) {
                let Ok((mut s, _)) = listener.accept() else {
                    std::thread::sleep(Duration::from_millis(10));
                    continue;
                };
                s.set_nonblocking(false).unwrap();
                s.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
                let mut request = [0u8; REQUEST.len()];
                if s.read_exact(&mut request).is_err() || request != REQUEST {
                    continue;
                }
                conn.execute_batch("COMMIT").unwrap();
                let _ = s.write_all(ANSWER);
                asks.fetch_add(1, Ordering::Relaxed);
                // Like a recorder, it opens its next transaction when its next change comes.
                std::thread::sleep(Duration::from_millis(50));
                conn.execute_batch("BEGIN IMMEDIATE").unwrap();
            }
            conn.execute_batch("COMMIT").unwrap();
        })
    };
    let recorder = start_recorder(&db, &ns.name).await;
    let api: Api<Event> = Api::namespaced(ns.client.clone(), &ns.name);
    create_single(&api, &ns.name, "shared-file").await;
    wait_until(
        Duration::from_secs(30),
        "the Event committed by the recorder sharing the file",
        || {
            let db = db.clone();
            async move { committed_occurrences(&db) >= 1 }
        },
    )
    .await;
    // Regression: the first idle heartbeat's WAL truncation set a busy
    // timeout, which replaced the handler that asks the other recorder; the
    // recorder's next write (its stop) then failed "database is locked".
    tokio::time::sleep(Duration::from_secs(7)).await;
    assert!(stop(recorder).success());
    stopping.store(true, Ordering::Relaxed);
    other.join().unwrap();
    assert!(asks.load(Ordering::Relaxed) > 0, "the recorder never asked");
    let lines = export(&db);
    assert_eq!(
        total_occurrences(&lines, &ns.name),
        BTreeMap::from([("shared-file".to_string(), 1)])
    );
}

#[tokio::test]
async fn unknown_context_and_unwritable_db_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("diag.db");
    let out = diag(&db)
        .args(["record", "--once", "--context", "no-such-context"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no-such-context") && err.contains("known:"),
        "{err}"
    );

    let out = diag(Path::new("/proc/diag.db"))
        .args(["record", "--once"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("/proc/diag.db"), "{err}");

    // A --kinds the cluster does not serve: named, and nothing written.
    let out = diag(&db)
        .args(["record", "--once", "--kinds", "widgetz"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--kinds widgetz") && err.contains("api-resources"),
        "{err}"
    );
    assert!(!db.exists(), "a bad --kinds creates no recording");
}
