//! How much a hot loop costs the recording: one object rewritten 300 times a
//! minute for an hour (18,000 updates), through the writer's own code, one
//! commit per update as at that rate in the recorder. Two shapes:
//! - `label`: two managers flip a label (no meaningful change: counters only);
//! - `spec`: two managers flip a spec field (every update a new version; the
//!   two states are interned, so each version row is small), with spec diffs
//!   on: each version's diff names the field, old and new value, and its
//!   writer (the two diffs are interned too).
//!
//!   cargo bench --bench history_hotloop -- [--minutes 60] [--per-minute 300]

use kubectl_diag::model::{
    Change, ManagerEntry, ObjectChange, ObjectObservation, ObjectRef, ObjectState, Seen,
};
use kubectl_diag::store::writer::Writer;
use kubectl_diag::store::{Mode, Recording};

mod support;
use support::flag;

fn file_bytes(path: &std::path::Path) -> u64 {
    let wal = path.with_extension("db-wal");
    std::fs::metadata(path).map_or(0, |m| m.len()) + std::fs::metadata(wal).map_or(0, |m| m.len())
}

fn observation(i: u64, at: i64, spec_fight: bool) -> Change {
    let (manager, other) = if i.is_multiple_of(2) {
        ("fighter-a", "fighter-b")
    } else {
        ("fighter-b", "fighter-a")
    };
    let state = ObjectState {
        generation: if spec_fight { 1 + i as i64 } else { 1 },
        observed_generation: Some(if spec_fight { 1 + i as i64 } else { 1 }),
        spec_digest: if spec_fight && i.is_multiple_of(2) {
            "aaaaaaaaaaaaaaaa".into()
        } else {
            "bbbbbbbbbbbbbbbb".into()
        },
        replicas: [
            ("replicas".to_string(), 3),
            ("readyReplicas".to_string(), 3),
        ]
        .into(),
        ..ObjectState::default()
    };
    Change::Object(ObjectChange {
        seen: Seen::Modified,
        at,
        blind_since: None,
        writer: None,
        provenance: kubectl_diag::model::Provenance::Recorded,
        observation: Box::new(ObjectObservation {
            object: ObjectRef {
                api_version: "apps/v1".into(),
                kind: "Deployment".into(),
                namespace: "shop".into(),
                name: "web".into(),
                uid: "0b5b7c1e-5f5e-4c39-9d3c-2f4f1d7a9e01".into(),
                field_path: String::new(),
            },
            resource_version: (1000 + i).to_string(),
            created: Some(0),
            state,
            // The fought-over field: `replicas` 2 or 3, owned by whoever wrote last.
            diff_doc: Some(if spec_fight && i.is_multiple_of(2) {
                r#"{"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"web","image":"web:1"}]}}}}"#.to_string()
            } else {
                r#"{"spec":{"replicas":3,"template":{"spec":{"containers":[{"name":"web","image":"web:1"}]}}}}"#.to_string()
            }),
            managers: vec![
                ManagerEntry {
                    manager: manager.into(),
                    operation: "Update".into(),
                    subresource: String::new(),
                    time: Some(at / 1000 * 1000),
                    fields: 4,
                    fields_v1: r#"{"f:spec":{"f:replicas":{}}}"#.into(),
                },
                ManagerEntry {
                    manager: other.into(),
                    operation: "Update".into(),
                    subresource: String::new(),
                    time: Some((at - 200) / 1000 * 1000),
                    fields: 3,
                    fields_v1: r#"{"f:metadata":{"f:labels":{"f:x":{}}}}"#.into(),
                },
            ],
        }),
    })
}

fn run(shape: &str, minutes: u64, per_minute: u64) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hot.db");
    let conn = Recording::open(&path, Mode::Write).unwrap();
    let cluster = conn.register_cluster("uid", "ctx", "", 0).unwrap();
    let mut w = Writer::new(conn, cluster);
    let t0 = 1_795_900_000_000i64;
    let mut b = w.begin().unwrap();
    b.apply_change(&observation(0, t0, shape == "spec"))
        .unwrap();
    b.commit().unwrap();
    w.connection()
        .execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
        .unwrap();
    let before = file_bytes(&path);
    let total = minutes * per_minute;
    let step = 60_000 / per_minute as i64;
    let start = std::time::Instant::now();
    for i in 1..=total {
        let mut b = w.begin().unwrap();
        b.apply_change(&observation(i, t0 + i as i64 * step, shape == "spec"))
            .unwrap();
        b.commit().unwrap();
    }
    let elapsed = start.elapsed();
    w.connection()
        .execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
        .unwrap();
    let after = file_bytes(&path);
    let count = |sql: &str| -> i64 { w.connection().query_row(sql, [], |r| r.get(0)).unwrap() };
    println!(
        "{shape}: {total} updates over {minutes} min added {:.1} KiB ({} versions, {} counter rows) in {:.2}s",
        (after - before) as f64 / 1024.0,
        count("SELECT count(*) FROM versions"),
        count("SELECT count(*) FROM update_counts"),
        elapsed.as_secs_f64()
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let minutes = flag(&args, "--minutes", 60);
    let per_minute = flag(&args, "--per-minute", 300);
    run("label", minutes, per_minute);
    run("spec", minutes, per_minute);
}
