//! Retention: by age (`--retain`) and by size (`--max-db-size`), oldest first,
//! then an incremental vacuum so the file shrinks.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension, named_params};

use crate::store::StoreError;

const SQL_DELETE_OCCURRENCES: &str =
    include_str!("../../queries/store/retention_delete_occurrences.sql");
const SQL_DELETE_EVENTS: &str = include_str!("../../queries/store/retention_delete_events.sql");
const SQL_DELETE_GAPS: &str = include_str!("../../queries/store/retention_delete_gaps.sql");
const SQL_DELETE_VERSIONS: &str = include_str!("../../queries/store/retention_delete_versions.sql");
const SQL_DELETE_COUNTS: &str = include_str!("../../queries/store/retention_delete_counts.sql");
const SQL_DELETE_RELATIONS: &str =
    include_str!("../../queries/store/retention_delete_relations.sql");
const SQL_DELETE_OBJECTS: &str = include_str!("../../queries/store/retention_delete_objects.sql");
const SQL_DELETE_STRINGS: &str = include_str!("../../queries/store/retention_delete_strings.sql");
const SQL_CUTOFF_FOR_FRACTION: &str =
    include_str!("../../queries/store/retention_cutoff_for_fraction.sql");

/// What to keep; 0 means no limit.
#[derive(Debug, Clone, Copy, Default)]
pub struct Retention {
    pub max_age_ms: i64,
    pub max_bytes: u64,
    /// `--retain-all`: the limits apply to every cluster in the file, not
    /// only to the one this recorder records.
    pub all_clusters: bool,
}

/// Pages the WAL may grow to before a checkpoint folds it back, for a
/// recording of `page_size`-byte pages kept under `max_bytes` (0: no limit):
/// a quarter of the limit, so that the WAL cannot take more room than the
/// limit leaves, within the 1,000–40,000 pages that keep batches fast
/// (docs/performance.md). NB: recordings keep the page size they were made
/// with: 4 KiB before session 3 and since issue 33, 8 KiB in between.
pub fn wal_pages(max_bytes: u64, page_size: u64) -> i64 {
    match max_bytes {
        0 => 40_000,
        max => (max / 4 / page_size.max(512)).clamp(1_000, 40_000) as i64,
    }
}

fn size(path: &Path) -> u64 {
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

/// The size of the recording's WAL (0 when there is none).
pub fn wal_bytes(path: &Path) -> u64 {
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    size(Path::new(&wal))
}

/// The recording's size on disk: the file and its WAL.
pub fn db_bytes(path: &Path) -> u64 {
    size(path) + wal_bytes(path)
}

fn delete_before(
    conn: &Connection,
    path: &Path,
    cluster: Option<i64>,
    cutoff: i64,
) -> Result<(), StoreError> {
    let q = |e| StoreError::query("retention", path, e);
    crate::store::in_transaction(conn, q, |tx| {
        for sql in [
            SQL_DELETE_OCCURRENCES,
            SQL_DELETE_EVENTS,
            SQL_DELETE_GAPS,
            SQL_DELETE_VERSIONS,
            SQL_DELETE_COUNTS,
            SQL_DELETE_RELATIONS,
        ] {
            tx.prepare_cached(sql)
                .and_then(|mut st| {
                    st.execute(named_params! {":cutoff": cutoff, ":cluster": cluster})
                })
                .map_err(q)?;
        }
        // What only the deleted rows referred to goes too; messages are most of a recording.
        tx.prepare_cached(SQL_DELETE_OBJECTS)
            .and_then(|mut st| st.execute(named_params! {":cluster": cluster}))
            .map_err(q)?;
        // NB: strings are shared by every cluster; only those nothing refers to go.
        tx.prepare_cached(SQL_DELETE_STRINGS)
            .and_then(|mut st| st.execute([]))
            .map_err(q)?;
        Ok(())
    })?;
    // Give freed pages back to the file system, a bounded amount at a time.
    // NB: incremental_vacuum frees one page per step; it must be stepped to the end.
    let mut vacuum = conn
        .prepare("PRAGMA incremental_vacuum(20000)")
        .map_err(q)?;
    let mut rows = vacuum.query([]).map_err(q)?;
    while rows.next().map_err(q)?.is_some() {}
    drop(rows);
    let _ = conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)");
    Ok(())
}

/// The bytes the recording's pages in use take, with its WAL: what
/// [`db_bytes`] comes down to once the incremental vacuum has given every free
/// page back. NB: size retention measures this, not the file: the vacuum gives
/// back a bounded amount at a time (and nothing in a file made without
/// auto_vacuum), and a file that had not shrunk yet made it drop another
/// tenth, and another, of a history that already fitted.
pub fn used_bytes(conn: &Connection, path: &Path) -> u64 {
    let pragma = |name: &str| -> u64 {
        conn.pragma_query_value(None, name, |r| r.get::<_, i64>(0))
            .map_or(0, i64::unsigned_abs)
    };
    let pages = pragma("page_count").saturating_sub(pragma("freelist_count"));
    match pages {
        // NB: a connection that cannot say: the file as it is.
        0 => db_bytes(path),
        pages => pages * pragma("page_size") + wal_bytes(path),
    }
}

/// What retention left: `over`, when the recording is still larger than
/// `--max-db-size` with nothing left that the limits may drop.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Outcome {
    /// The recording's size in use, in bytes, when it is over the limit and
    /// what is left is what retention keeps: each object's latest version,
    /// and what it does not drop (other clusters without `--retain-all`;
    /// touches, refusals and audit ids of imports).
    pub over: Option<u64>,
}

/// What to tell the user of a recording left over its size limit.
pub fn over_limit_warning(path: &Path, used: u64, r: &Retention) -> String {
    let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
    let others = if r.all_clusters {
        ""
    } else {
        "; other clusters in the file (imports, other recorders) are not dropped without --retain-all"
    };
    format!(
        "warning: {} holds {:.1} MiB, over --max-db-size ({:.1} MiB), and retention has nothing more to drop: \
         what is left is each object's latest version and what retention keeps of imports (touches, refusals, audit ids){others}",
        path.display(),
        mib(used),
        mib(r.max_bytes)
    )
}

/// Drops what is older than the age limit, then the oldest tenth at a time
/// while the file is over the size limit: of cluster `cluster`, the one the
/// recorder records, unless `r.all_clusters`. Other clusters in the file
/// (imports, other recorders) are not the business of this recorder's limits.
/// The tenth is counted over every table retention drops rows of, each by its
/// own time (`retention_cutoff_for_fraction.sql`).
///
/// NB: this deletes interned strings and objects that a
/// [`crate::store::writer::Writer`]'s caches may name: the recorder runs it
/// through [`crate::store::writer::Writer::delete_with`], which drops them.
pub fn apply(
    conn: &Connection,
    path: &Path,
    r: &Retention,
    cluster: i64,
    now: i64,
) -> Result<Outcome, StoreError> {
    let cluster = (!r.all_clusters).then_some(cluster);
    if r.max_age_ms > 0 {
        delete_before(conn, path, cluster, now - r.max_age_ms)?;
    }
    let mut outcome = Outcome::default();
    if r.max_bytes > 0 {
        for _ in 0..10 {
            let _ = conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)");
            let used = used_bytes(conn, path);
            if used <= r.max_bytes {
                break;
            }
            let cutoff: Option<i64> = conn
                .prepare_cached(SQL_CUTOFF_FOR_FRACTION)
                .and_then(|mut st| {
                    st.query_row(
                        named_params! {":fraction": 0.1, ":cluster": cluster},
                        |row| row.get(0),
                    )
                    .optional()
                })
                .map_err(|e| StoreError::query("retention", path, e))?;
            match cutoff {
                Some(cutoff) => delete_before(conn, path, cluster, cutoff + 1)?,
                None => {
                    outcome.over = Some(used);
                    break;
                }
            }
        }
    }
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{EventChange, EventObservation, ObjectRef};
    use crate::store::Mode;
    use crate::store::writer::Writer;

    #[test]
    fn the_wal_stays_within_a_quarter_of_a_small_size_limit() {
        assert_eq!(wal_pages(0, 8192), 40_000);
        assert_eq!(wal_pages(4 << 30, 8192), 40_000);
        assert_eq!(wal_pages(400 << 20, 8192), 12_800);
        assert_eq!(wal_pages(400 << 20, 4096), 25_600);
        assert_eq!(wal_pages(1 << 20, 8192), 1_000);
    }

    fn filled(n: i64) -> (tempfile::TempDir, std::path::PathBuf, Writer) {
        let (dir, mut w) = crate::store::testing::recording();
        let path = w.recording().path().to_path_buf();
        let mut b = w.begin().unwrap();
        for i in 0..n {
            let o = EventObservation {
                uid: format!("u{i}"),
                name: format!("e{i}"),
                involved: ObjectRef {
                    kind: "Pod".into(),
                    name: format!("p{i}"),
                    ..Default::default()
                },
                message: format!("{i} {}", "m".repeat(500)),
                first: i * 1_000,
                last: i * 1_000,
                count: 1,
                ..Default::default()
            };
            b.apply(&EventChange::Upsert(Box::new(o))).unwrap();
        }
        b.commit().unwrap();
        (dir, path, w)
    }

    fn count(w: &Writer, table: &str) -> i64 {
        let sql = match table {
            "events" => "SELECT COUNT(*) FROM events",
            _ => "SELECT COUNT(*) FROM occurrences",
        };
        w.connection().query_row(sql, [], |r| r.get(0)).unwrap()
    }

    #[test]
    fn age_retention_drops_what_is_older_and_keeps_the_rest() {
        let (_d, path, w) = filled(100);
        let r = Retention {
            max_age_ms: 40_000,
            ..Retention::default()
        };
        apply(w.connection(), &path, &r, w.cluster(), 100_000).unwrap();
        // Occurrences last seen before 60 s are gone, with their Events.
        assert_eq!(count(&w, "occurrences"), 40);
        assert_eq!(count(&w, "events"), 40);
        let oldest: i64 = w
            .connection()
            .query_row("SELECT MIN(last) FROM occurrences", [], |r| r.get(0))
            .unwrap();
        assert_eq!(oldest, 60_000);
    }

    #[test]
    fn size_retention_drops_the_oldest_until_the_file_fits() {
        let (_d, path, w) = filled(4_000);
        let before = db_bytes(&path);
        let r = Retention {
            max_bytes: before / 2,
            ..Retention::default()
        };
        apply(w.connection(), &path, &r, w.cluster(), 0).unwrap();
        assert!(
            db_bytes(&path) <= before / 2,
            "{} > {}",
            db_bytes(&path),
            before / 2
        );
        let left = count(&w, "occurrences");
        assert!(left > 0 && left < 4_000, "{left}");
        // What is left is the newest.
        let newest: i64 = w
            .connection()
            .query_row("SELECT MAX(last) FROM occurrences", [], |r| r.get(0))
            .unwrap();
        assert_eq!(newest, 3_999_000);
    }

    fn object_change(
        uid: &str,
        phase: &str,
        seen: crate::model::Seen,
        at: i64,
    ) -> crate::model::Change {
        use crate::model::{Change, ObjectChange, ObjectObservation, ObjectState};
        Change::Object(ObjectChange {
            seen,
            at,
            blind_since: None,
            writer: None,
            provenance: crate::model::Provenance::Recorded,
            observation: Box::new(ObjectObservation {
                object: ObjectRef {
                    api_version: "v1".into(),
                    kind: "Pod".into(),
                    namespace: "ns".into(),
                    name: uid.into(),
                    uid: uid.into(),
                    field_path: String::new(),
                },
                state: ObjectState {
                    phase: phase.into(),
                    ..ObjectState::default()
                },
                ..ObjectObservation::default()
            }),
        })
    }

    /// Regression: retention once dropped every watched object (and the
    /// strings of its states), because only Events counted as references.
    #[test]
    fn retention_keeps_live_objects_latest_state_and_drops_old_deleted_ones() {
        use crate::model::Seen;
        let (_d, path, mut w) = filled(0);
        let mut b = w.begin().unwrap();
        for (uid, phase, seen, at) in [
            ("live", "Pending", Seen::Added, 1_000),
            ("live", "Running", Seen::Modified, 2_000),
            ("gone", "Running", Seen::Added, 1_000),
            ("gone", "Running", Seen::Deleted, 3_000),
        ] {
            b.apply_change(&object_change(uid, phase, seen, at))
                .unwrap();
        }
        b.commit().unwrap();
        let r = Retention {
            max_age_ms: 10_000,
            ..Retention::default()
        };
        apply(w.connection(), &path, &r, w.cluster(), 20_000).unwrap();
        let conn = w.connection();
        let states = w.recording().states_at(w.cluster(), 30_000).unwrap();
        assert_eq!(states.len(), 1, "{states:?}");
        assert_eq!(states[0].object.name, "live");
        assert_eq!(states[0].state.phase, "Running");
        let objects: i64 = conn
            .query_row("SELECT COUNT(*) FROM objects", [], |r| r.get(0))
            .unwrap();
        assert_eq!(objects, 1, "the old deleted Pod is gone");
    }

    /// Regression: `import` of Events two months old, then `record` on the
    /// same file: the recorder's default `--retain 30d` deleted the imported
    /// cluster's occurrences (18 to 0).
    #[test]
    fn import_then_record_keeps_the_imported_cluster() {
        let (_d, path, w) = filled(10);
        let imported = {
            w.recording()
                .register_cluster("ticket", "ticket", "", 0)
                .unwrap()
        };
        let mut import = Writer::new(
            crate::store::Recording::open(&path, Mode::Write).unwrap(),
            imported,
        );
        let mut batch = import.begin().unwrap();
        for i in 0..18 {
            let o = EventObservation {
                uid: format!("i{i}"),
                name: format!("i{i}"),
                involved: ObjectRef {
                    kind: "Pod".into(),
                    name: "old".into(),
                    ..Default::default()
                },
                message: "imported".into(),
                first: i * 1_000,
                last: i * 1_000,
                count: 1,
                ..Default::default()
            };
            batch.apply(&EventChange::Upsert(Box::new(o))).unwrap();
        }
        batch.commit().unwrap();
        let of = |cluster: i64| -> i64 {
            w.connection()
                .query_row(
                    "SELECT COUNT(*) FROM occurrences o JOIN events e ON e.id = o.event_id
                     WHERE e.cluster_id = ?1",
                    [cluster],
                    |r| r.get(0),
                )
                .unwrap()
        };
        let age = Retention {
            max_age_ms: 1_000,
            ..Retention::default()
        };
        apply(w.connection(), &path, &age, w.cluster(), 1_000_000).unwrap();
        assert_eq!((of(w.cluster()), of(imported)), (0, 18));
        // Size retention too leaves it alone, however large the file.
        let size = Retention {
            max_bytes: 1,
            ..Retention::default()
        };
        apply(w.connection(), &path, &size, w.cluster(), 1_000_000).unwrap();
        assert_eq!(of(imported), 18);
        let strings: i64 = w
            .connection()
            .query_row(
                "SELECT COUNT(*) FROM strings WHERE s = 'imported'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(strings, 1, "the imported messages stay");
        // --retain-all: every cluster.
        let all = Retention {
            all_clusters: true,
            ..age
        };
        apply(w.connection(), &path, &all, w.cluster(), 1_000_000).unwrap();
        assert_eq!(of(imported), 0);
    }
}
