//! Issue 44.1: size retention of a file of imported history. No cluster: the
//! file is made by `kubectl-diag import` of an audit log generated here (and
//! of one recent Event), then the recorder's retention runs on it as
//! `record --retain 0 --max-db-size … --retain-all` runs it.

use std::path::Path;

use kubectl_diag::record::retention::{self, Retention};
use kubectl_diag::store::{Mode, Recording};

use crate::support::cli;
use cli::{offline, run, write};

const OBJECTS: usize = 50;
const WRITES: usize = 120;

fn rfc3339(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .unwrap()
        .to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}

/// A RequestResponse audit log: `OBJECTS` Deployments created, then given a
/// new image, `WRITES` writes each, one a second from ten days ago.
fn audit_log(start: i64) -> String {
    let mut out = String::new();
    let mut rv = 1_000;
    for w in 0..WRITES {
        for o in 0..OBJECTS {
            rv += 1;
            let at = rfc3339(start + (w * OBJECTS + o) as i64 * 1_000);
            let (verb, code, uri) = match w {
                0 => (
                    "create",
                    201,
                    "/apis/apps/v1/namespaces/shop/deployments".to_string(),
                ),
                _ => (
                    "update",
                    200,
                    format!("/apis/apps/v1/namespaces/shop/deployments/web-{o}"),
                ),
            };
            let name = format!("web-{o}");
            let object = serde_json::json!({
                "kind": "Deployment", "apiVersion": "apps/v1",
                "metadata": {
                    "name": name, "namespace": "shop",
                    "uid": format!("00000000-0000-4000-8000-{o:012}"),
                    "resourceVersion": rv.to_string(), "generation": w + 1,
                    "creationTimestamp": rfc3339(start),
                },
                "spec": {
                    "replicas": 1,
                    "selector": {"matchLabels": {"app": name}},
                    "template": {
                        "metadata": {"labels": {"app": name}},
                        "spec": {"containers": [{
                            "name": "web",
                            "image": format!("registry.example.com/shop/web:{w}-{}", "x".repeat(200)),
                        }]},
                    },
                },
            });
            let entry = serde_json::json!({
                "kind": "Event", "apiVersion": "audit.k8s.io/v1", "level": "RequestResponse",
                "auditID": format!("a-{w}-{o}"), "stage": "ResponseComplete",
                "requestURI": uri, "verb": verb,
                "user": {"username": "alice", "groups": ["system:authenticated"]},
                "userAgent": "kubectl/v1.33.0 (linux/amd64) kubernetes/abc",
                "objectRef": {"resource": "deployments", "namespace": "shop", "name": name, "apiGroup": "apps", "apiVersion": "v1"},
                "responseStatus": {"metadata": {}, "code": code},
                "requestObject": object, "responseObject": object,
                "requestReceivedTimestamp": at, "stageTimestamp": at,
            });
            out.push_str(&entry.to_string());
            out.push('\n');
        }
    }
    out
}

fn count(db: &Path, sql: &str) -> i64 {
    rusqlite::Connection::open(db)
        .unwrap()
        .query_row(sql, [], |r| r.get(0))
        .unwrap()
}

/// A file of imported object versions and one recent Event.
fn imported(dir: &Path, now: i64) -> std::path::PathBuf {
    let db = dir.join("r.db");
    let log = write(dir, "audit.jsonl", &audit_log(now - 10 * 86_400_000));
    let (code, _, err) = run(offline(&db).arg("import").arg(&log));
    assert_eq!(code, Some(0), "{err}");
    let event = format!(
        r#"{{"kind":"List","items":[{{"kind":"Event","metadata":{{"name":"p.1","namespace":"shop","uid":"e1"}},"involvedObject":{{"kind":"Pod","namespace":"shop","name":"p"}},"reason":"BackOff","count":1,"firstTimestamp":"{at}","lastTimestamp":"{at}","message":"Back-off restarting failed container"}}]}}"#,
        at = rfc3339(now - 60_000)
    );
    let events = write(dir, "events.json", &event);
    let (code, _, err) = run(offline(&db).arg("import").arg(&events));
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(count(&db, "SELECT COUNT(*) FROM occurrences"), 1);
    db
}

/// 44.1: one recent Event made "now" the size cutoff, computed from
/// occurrences alone: a file of imported versions a little over the limit
/// lost every version but each object's latest in one pass.
#[test]
fn size_retention_of_imported_versions_drops_the_oldest_tenth_not_all_but_the_latest() {
    let dir = tempfile::tempdir().unwrap();
    let now = chrono::Utc::now().timestamp_millis();
    let db = imported(dir.path(), now);
    let before = count(&db, "SELECT COUNT(*) FROM versions");
    assert_eq!(before, (OBJECTS * WRITES) as i64);
    let recording = Recording::open(&db, Mode::Write).unwrap();
    let conn = recording.connection();
    let used = retention::used_bytes(conn, &db);
    let limit = Retention {
        max_age_ms: 0,
        max_bytes: used * 9 / 10,
        all_clusters: true,
    };
    let outcome = retention::apply(conn, &db, &limit, 0, now).unwrap();
    assert_eq!(outcome.over, None);
    assert!(
        retention::used_bytes(conn, &db) <= limit.max_bytes,
        "it fits"
    );
    let left = count(&db, "SELECT COUNT(*) FROM versions");
    assert!(
        left >= before * 6 / 10 && left < before,
        "{left} of {before} versions left"
    );
    // The oldest went, the newest stayed: the recent Event with them.
    let oldest = count(&db, "SELECT MIN(at) FROM versions");
    assert!(oldest > now - 10 * 86_400_000, "{oldest}");
    assert_eq!(
        count(
            &db,
            "SELECT COUNT(*) FROM versions WHERE at = (SELECT MAX(at) FROM versions)"
        ),
        1
    );
    assert_eq!(count(&db, "SELECT COUNT(*) FROM occurrences"), 1);
}

/// 44.1: a file that imports keep over the limit: retention drops all it may,
/// keeps each object's latest version, and says the file is left over.
#[test]
fn a_file_left_over_the_size_limit_by_imports_keeps_each_latest_version_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let now = chrono::Utc::now().timestamp_millis();
    let db = imported(dir.path(), now);
    let recording = Recording::open(&db, Mode::Write).unwrap();
    let conn = recording.connection();
    let limit = Retention {
        max_age_ms: 0,
        max_bytes: 64 * 1024,
        all_clusters: true,
    };
    // Ten tenths at most a pass: passes until nothing is left to drop.
    let mut outcome = retention::apply(conn, &db, &limit, 0, now).unwrap();
    for _ in 0..30 {
        if outcome.over.is_some() {
            break;
        }
        outcome = retention::apply(conn, &db, &limit, 0, now).unwrap();
    }
    let used = outcome.over.expect("left over the limit");
    assert!(used > limit.max_bytes, "{used}");
    assert_eq!(
        count(&db, "SELECT COUNT(*) FROM versions"),
        OBJECTS as i64,
        "each object's latest version is kept"
    );
    assert_eq!(
        count(
            &db,
            "SELECT COUNT(*) FROM versions v WHERE at = (SELECT MAX(at) FROM versions WHERE object_id = v.object_id)"
        ),
        OBJECTS as i64
    );
    let warning = retention::over_limit_warning(&db, used, &limit);
    assert!(
        warning.starts_with("warning: ")
            && warning.contains("over --max-db-size")
            && warning.contains("latest version"),
        "{warning}"
    );
}
