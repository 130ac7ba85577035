//! Clusters, recorder sessions, gaps and watch positions: the bookkeeping that
//! lets a reader tell "nothing happened" from "nobody was watching".

use rusqlite::{OptionalExtension, named_params};

use super::{Recording, StoreError};

const SQL_CLUSTER_UPSERT: &str = include_str!("../../queries/store/cluster_upsert.sql");
const SQL_SESSION_START: &str = include_str!("../../queries/store/session_start.sql");
const SQL_SESSION_HEARTBEAT: &str = include_str!("../../queries/store/session_heartbeat.sql");
const SQL_SESSION_WINDOW: &str = include_str!("../../queries/store/session_window.sql");
const SQL_SESSION_STOP: &str = include_str!("../../queries/store/session_stop.sql");
const SQL_SESSION_OPEN: &str = include_str!("../../queries/store/session_open.sql");
const SQL_SESSION_OPEN_OF_UID: &str = include_str!("../../queries/store/session_open_of_uid.sql");
const SQL_SESSION_CLOSE_DEAD: &str = include_str!("../../queries/store/session_close_dead.sql");
const SQL_SESSION_PREVIOUS_END: &str = include_str!("../../queries/store/session_previous_end.sql");
const SQL_GAP_INSERT: &str = include_str!("../../queries/store/gap_insert.sql");
const SQL_POSITION_LOAD: &str = include_str!("../../queries/store/position_load.sql");
const SQL_OCCURRENCES_OF_CLUSTER: &str =
    include_str!("../../queries/store/occurrences_of_cluster.sql");

/// A session on another host counts as alive while its heartbeat is younger
/// than this plus the window it declared: a heartbeat lands with the
/// transaction it joins, so it can be a window (and a heartbeat) old.
pub const REMOTE_SESSION_TIMEOUT_MS: i64 = 30_000;

/// Whether a session on another host whose last committed heartbeat is
/// `heartbeat`, and which commits at the latest `commit_every_ms` after a
/// change, still runs at `now`.
pub fn remote_session_alive(now: i64, heartbeat: i64, commit_every_ms: i64) -> bool {
    now - heartbeat < REMOTE_SESSION_TIMEOUT_MS + commit_every_ms.max(0)
}

pub use crate::model::Gap;

const SQL_CLUSTER_CLAIMS: &str = include_str!("../../queries/store/cluster_claims.sql");

/// A recorded cluster that `import --cluster NAME` would have merged into.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claimed {
    pub uid: String,
    pub label: String,
}

const SQL_RESOURCE_TYPE_UPSERT: &str = include_str!("../../queries/store/resource_type_upsert.sql");

/// This machine's name, as recorded with each session.
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .or_else(|_| std::env::var("HOSTNAME"))
        .unwrap_or_else(|_| "unknown".into())
}

/// Whether a process with this pid runs here and is a kubectl-diag.
fn local_recorder_alive(pid: i64) -> bool {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|cmd| String::from_utf8_lossy(&cmd).contains("kubectl-diag"))
        .unwrap_or(false)
}

/// Whether an unstopped session of `other_pid` on `other_host` still runs,
/// judged from this process (`pid` on `host`) at `now`.
fn session_alive(
    now: i64,
    host: &str,
    pid: i64,
    other_host: &str,
    other_pid: i64,
    heartbeat: i64,
    window: i64,
) -> bool {
    if other_host == host {
        other_pid != pid && local_recorder_alive(other_pid)
    } else {
        remote_session_alive(now, heartbeat, window)
    }
}

/// The start of a session, and what it found about its predecessors.
#[derive(Debug, Clone)]
pub struct SessionStart {
    pub id: i64,
    /// When the previous session of this cluster stopped watching, if there was one.
    pub previous_end: Option<i64>,
}

impl Recording {
    /// The recorded cluster (not one made by `import`) whose uid or label is
    /// `name`, if there is one: an import under that name would mix its Events
    /// into the recorder's and overwrite its label.
    pub fn recorded_cluster_named(&self, name: &str) -> Result<Option<Claimed>, StoreError> {
        let rows: Vec<(String, String, bool)> = self
            .conn
            .prepare_cached(SQL_CLUSTER_CLAIMS)
            .and_then(|mut st| {
                st.query_map(named_params! {":cluster": name}, |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                })?
                .collect()
            })
            .map_err(self.q("cluster lookup"))?;
        Ok(rows
            .into_iter()
            .find(|(_, _, recorded)| *recorded)
            .map(|(uid, label, _)| Claimed { uid, label }))
    }

    /// Registers the cluster (by kube-system uid) and returns its id.
    pub fn register_cluster(
        &self,
        uid: &str,
        label: &str,
        server: &str,
        now: i64,
    ) -> Result<i64, StoreError> {
        self.conn
            .prepare_cached(SQL_CLUSTER_UPSERT)
            .and_then(|mut st| {
                st.query_row(
                    named_params! {":uid": uid, ":label": label, ":server": server, ":now": now},
                    |r| r.get(0),
                )
            })
            .map_err(self.q("cluster registration"))
    }

    /// Remembers the resource types the cluster serves, for resolving names offline.
    pub fn save_resource_types(
        &self,
        cluster: i64,
        types: &[crate::model::ResourceType],
    ) -> Result<(), StoreError> {
        for t in types {
            self.conn
                .prepare_cached(SQL_RESOURCE_TYPE_UPSERT)
                .and_then(|mut st| {
                    st.execute(named_params! {
                        ":cluster": cluster, ":api_version": t.api_version(), ":plural": t.plural,
                        ":kind": t.kind, ":singular": t.singular,
                        ":short_names": t.short_names.join(","), ":namespaced": t.namespaced,
                    })
                })
                .map_err(self.q("saving resource types"))?;
        }
        Ok(())
    }

    /// Refuses, with [`StoreError::Busy`], when a live recorder already
    /// records the cluster `cluster_uid` into this file; reads only.
    ///
    /// NB: a recorder holds its write transaction for up to --commit-every (a
    /// minute by default). [`Recording::start_session`] decides the same under
    /// the write lock, but a second recorder would wait for that lock longer
    /// than SQLite's busy timeout and fail with "database is locked" instead
    /// of naming the recorder in its way.
    pub fn refuse_if_recorded(&self, cluster_uid: &str, now: i64) -> Result<(), StoreError> {
        let host = hostname();
        let pid = i64::from(std::process::id());
        let open: Vec<(i64, String, i64, i64, i64)> = self
            .conn
            .prepare_cached(SQL_SESSION_OPEN_OF_UID)
            .and_then(|mut st| {
                st.query_map(named_params! {":uid": cluster_uid}, |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
                })?
                .collect()
            })
            .map_err(self.q("session lookup"))?;
        for (_, other_host, other_pid, heartbeat, window) in open {
            if session_alive(now, &host, pid, &other_host, other_pid, heartbeat, window) {
                return Err(self.busy(cluster_uid, other_host, other_pid, now - heartbeat));
            }
        }
        Ok(())
    }

    /// The refusal naming the live recorder `pid` on `host`, last seen `age_ms` ago.
    fn busy(&self, cluster_uid: &str, host: String, pid: i64, age_ms: i64) -> StoreError {
        StoreError::Busy {
            path: self.path.clone(),
            cluster: cluster_uid.to_string(),
            host,
            pid,
            age_s: age_ms / 1000,
        }
    }

    /// Starts a session, refusing when another live recorder writes the same
    /// cluster into this file. A session left open by a recorder that died is
    /// closed at its last heartbeat.
    pub fn start_session(
        &self,
        cluster: i64,
        cluster_uid: &str,
        mode: &str,
        now: i64,
    ) -> Result<SessionStart, StoreError> {
        let host = hostname();
        let pid = i64::from(std::process::id());
        super::in_transaction(&self.conn, self.q("session start"), |conn| {
            let open: Vec<(i64, String, i64, i64, i64)> = conn
                .prepare_cached(SQL_SESSION_OPEN)
                .and_then(|mut st| {
                    st.query_map(named_params! {":cluster": cluster, ":own": -1}, |r| {
                        Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
                    })?
                    .collect()
                })
                .map_err(self.q("session lookup"))?;
            for (id, other_host, other_pid, heartbeat, window) in open {
                if session_alive(now, &host, pid, &other_host, other_pid, heartbeat, window) {
                    return Err(self.busy(cluster_uid, other_host, other_pid, now - heartbeat));
                }
                conn.prepare_cached(SQL_SESSION_CLOSE_DEAD)
                    .and_then(|mut st| st.execute(named_params! {":id": id}))
                    .map_err(self.q("closing a dead session"))?;
            }
            let previous_end: Option<i64> = conn
                .prepare_cached(SQL_SESSION_PREVIOUS_END)
                .and_then(|mut st| {
                    st.query_row(named_params! {":cluster": cluster, ":own": -1}, |r| {
                        r.get(0)
                    })
                })
                .map_err(self.q("previous session"))?;
            conn.prepare_cached(SQL_SESSION_START)
                .and_then(|mut st| {
                    st.execute(named_params! {
                        ":cluster": cluster, ":host": host, ":pid": pid,
                        ":version": crate::build_info::VERSION, ":now": now, ":mode": mode,
                    })
                })
                .map_err(self.q("session start"))?;
            Ok(SessionStart {
                id: conn.last_insert_rowid(),
                previous_end,
            })
        })
    }

    /// Records how long the session's transactions may stay open
    /// (`record --commit-every`), so that its heartbeat is judged by it.
    pub fn declare_window(&self, session: i64, commit_every_ms: i64) -> Result<(), StoreError> {
        self.conn
            .prepare_cached(SQL_SESSION_WINDOW)
            .and_then(|mut st| {
                st.execute(named_params! {":id": session, ":commit_every_ms": commit_every_ms})
            })
            .map_err(self.q("session window"))?;
        Ok(())
    }

    pub fn heartbeat(&self, session: i64, now: i64) -> Result<(), StoreError> {
        self.conn
            .prepare_cached(SQL_SESSION_HEARTBEAT)
            .and_then(|mut st| st.execute(named_params! {":id": session, ":now": now}))
            .map_err(self.q("heartbeat"))?;
        Ok(())
    }

    pub fn stop_session(&self, session: i64, now: i64) -> Result<(), StoreError> {
        self.conn
            .prepare_cached(SQL_SESSION_STOP)
            .and_then(|mut st| st.execute(named_params! {":id": session, ":now": now}))
            .map_err(self.q("session stop"))?;
        Ok(())
    }

    pub fn record_gap(&self, cluster: i64, gap: &Gap) -> Result<(), StoreError> {
        let mut st = self
            .conn
            .prepare_cached(SQL_GAP_INSERT)
            .map_err(self.q("gap"))?;
        // NB: a row per resource, as readers merge them again (`timeline::merge_gaps`).
        for resource in &gap.resources {
            st.execute(named_params! {
                ":cluster": cluster, ":resource": resource, ":start": gap.start,
                ":finish": gap.finish, ":reason": gap.reason.as_str(), ":detail": gap.detail,
            })
            .map_err(self.q("gap"))?;
        }
        Ok(())
    }

    /// How many Event occurrences of `cluster` the recording holds, every session's.
    pub fn occurrences_stored(&self, cluster: i64) -> Result<u64, StoreError> {
        self.conn
            .prepare_cached(SQL_OCCURRENCES_OF_CLUSTER)
            .and_then(|mut st| {
                st.query_row(named_params! {":cluster": cluster}, |r| r.get::<_, i64>(0))
            })
            .map(i64::unsigned_abs)
            .map_err(self.q("occurrence count"))
    }

    /// The resourceVersion the watch of `resource` last committed, if any.
    pub fn load_position(
        &self,
        cluster: i64,
        resource: &str,
    ) -> Result<Option<String>, StoreError> {
        self.conn
            .prepare_cached(SQL_POSITION_LOAD)
            .and_then(|mut st| {
                st.query_row(
                    named_params! {":cluster": cluster, ":resource": resource},
                    |r| r.get(0),
                )
                .optional()
            })
            .map_err(self.q("watch position"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_live_recorder_is_refused_and_a_dead_one_is_closed() {
        let (_dir, w) = crate::store::testing::recording();
        let (rec, conn, cluster) = (w.recording(), w.connection(), w.cluster());
        // A session of a process that is not running here: it died.
        conn.execute(
            "INSERT INTO recorder_sessions (cluster_id, host, pid, version, started, heartbeat, mode)
             VALUES (?1, ?2, 999999999, 'x', 0, 5000, 'watch')",
            rusqlite::params![cluster, hostname()],
        )
        .unwrap();
        let first = rec.start_session(cluster, "uid", "watch", 10_000).unwrap();
        assert_eq!(first.previous_end, Some(5_000));
        // A session on another host with a fresh heartbeat: alive.
        conn.execute(
            "INSERT INTO recorder_sessions (cluster_id, host, pid, version, started, heartbeat, mode)
             VALUES (?1, 'elsewhere', 1, 'x', 0, 9000, 'watch')",
            rusqlite::params![cluster],
        )
        .unwrap();
        let err = rec
            .start_session(cluster, "uid", "watch", 10_000)
            .unwrap_err();
        assert!(matches!(err, StoreError::Busy { .. }), "{err}");
        assert!(err.to_string().contains("elsewhere"));
    }

    /// Regression: a second recorder failed with "database is locked" while
    /// the first held its minute-long transaction, instead of naming it.
    #[test]
    fn a_second_recorder_is_named_while_the_first_holds_the_write_lock() {
        let (_dir, w) = crate::store::testing::recording();
        let (rec, conn, cluster) = (w.recording(), w.connection(), w.cluster());
        conn.execute(
            "INSERT INTO recorder_sessions (cluster_id, host, pid, version, started, heartbeat, mode)
             VALUES (?1, 'elsewhere', 7, 'x', 0, 9000, 'watch')",
            rusqlite::params![cluster],
        )
        .unwrap();
        conn.execute_batch("BEGIN IMMEDIATE").unwrap();
        let second = Recording::open(rec.path(), crate::store::Mode::Write).unwrap();
        let err = second.refuse_if_recorded("uid", 10_000).unwrap_err();
        assert!(matches!(err, StoreError::Busy { pid: 7, .. }), "{err}");
        // Another cluster's uid, or a stopped session: nothing in the way.
        second.refuse_if_recorded("other-uid", 10_000).unwrap();
        conn.execute_batch("UPDATE recorder_sessions SET stopped = 9500; COMMIT")
            .unwrap();
        second.refuse_if_recorded("uid", 10_000).unwrap();
    }

    #[test]
    fn a_remote_session_is_judged_by_the_window_it_declared() {
        // A minute's window: a heartbeat 80 s old may still be in an open transaction.
        assert!(remote_session_alive(100_000, 20_000, 60_000));
        assert!(!remote_session_alive(100_000, 5_000, 60_000));
        // Sessions recorded before windows were declared (0): 30 s.
        assert!(remote_session_alive(100_000, 75_000, 0));
        assert!(!remote_session_alive(100_000, 65_000, 0));

        let (_dir, w) = crate::store::testing::recording();
        let (rec, conn, cluster) = (w.recording(), w.connection(), w.cluster());
        conn.execute(
            "INSERT INTO recorder_sessions (cluster_id, host, pid, version, started, heartbeat, mode)
             VALUES (?1, 'elsewhere', 1, 'x', 0, 20000, 'watch')",
            rusqlite::params![cluster],
        )
        .unwrap();
        let other = conn.last_insert_rowid();
        // 80 s of silence with no declared window: dead, closed at its heartbeat.
        rec.declare_window(other, 0).unwrap();
        let first = rec.start_session(cluster, "uid", "watch", 100_000).unwrap();
        assert_eq!(first.previous_end, Some(20_000));
        rec.stop_session(first.id, 100_001).unwrap();
        // The same silence from a session that declared a minute: alive.
        conn.execute(
            "INSERT INTO recorder_sessions (cluster_id, host, pid, version, started, heartbeat, mode)
             VALUES (?1, 'elsewhere', 2, 'x', 0, 120000, 'watch')",
            rusqlite::params![cluster],
        )
        .unwrap();
        rec.declare_window(conn.last_insert_rowid(), 60_000)
            .unwrap();
        let err = rec
            .start_session(cluster, "uid", "watch", 200_000)
            .unwrap_err();
        assert!(matches!(err, StoreError::Busy { .. }), "{err}");
    }

    #[test]
    fn a_session_records_the_full_build_version() {
        let (_dir, w) = crate::store::testing::recording();
        let (rec, conn, cluster) = (w.recording(), w.connection(), w.cluster());
        let start = rec.start_session(cluster, "uid", "once", 1_000).unwrap();
        let version: String = conn
            .query_row(
                "SELECT version FROM recorder_sessions WHERE id = ?1",
                [start.id],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(version, crate::build_info::VERSION);
        assert!(
            version.contains(&format!("(commit {}, built ", crate::build_info::COMMIT)),
            "{version}"
        );
    }
}
