//! `--store clickhouse://…`: the readers' rules live once, over the SQLite
//! recording, so a command against ClickHouse pulls the clusters it reads
//! into a new recording in a private temporary folder and runs on that
//! (removed when the command ends). docs/performance.md measures it.

use std::path::PathBuf;

use anyhow::Context as _;
use rusqlite::functions::FunctionFlags;
use rusqlite::types::Value;

use super::clickhouse::ClickHouse;
use super::rowbinary;
use super::tables::{TABLES, Table, Ty};
use super::url::ClickHouseUrl;
use crate::store::{Mode, Recording};

const SQL_LOAD: &str = include_str!("../../queries/clickhouse/load.sql");
const SQL_LOAD_EVENTS: &str = include_str!("../../queries/clickhouse/load_events.sql");
const SQL_STRUCTURE: &str = include_str!("../../queries/clickhouse/timeline/structure.sql");
const SQL_EVENTS_OF: &str = include_str!("../../queries/clickhouse/timeline/events.sql");
const SQL_WARNINGS: &str = include_str!("../../queries/clickhouse/timeline/warnings.sql");

pub use crate::model::Which;
use crate::model::cluster::NoChoice;

/// A recording pulled from ClickHouse; its folder goes when this is dropped.
#[derive(Debug)]
pub struct Pulled {
    dir: PathBuf,
    pub path: PathBuf,
    /// The clusters pulled: (uid, label).
    pub clusters: Vec<(String, String)>,
}

impl Drop for Pulled {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A folder only this user can read, for the pulled recording.
fn private_dir() -> anyhow::Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let dir = std::env::temp_dir().join(format!(
        "kubectl-diag-store-{}-{nanos:x}",
        std::process::id()
    ));
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&dir)
        .with_context(|| format!("creating {}", dir.display()))?;
    Ok(dir)
}

/// Chooses the clusters of `which` among those the store holds.
pub fn choose(
    url: &ClickHouseUrl,
    held: &[(String, String)],
    which: &Which,
) -> anyhow::Result<Vec<(String, String)>> {
    let listed = || crate::model::cluster::listed(held);
    match which.choose(held) {
        Ok(chosen) => Ok(chosen.into_iter().cloned().collect()),
        Err(NoChoice::Empty) => anyhow::bail!(
            "{} holds no recording yet: ship one with `kubectl diag record --ship` or `kubectl diag ship`",
            url.shown()
        ),
        Err(NoChoice::NoSuch(name)) => anyhow::bail!(
            "--cluster {name}: {} holds no such cluster; it holds {}",
            url.shown(),
            listed()
        ),
        Err(NoChoice::Ambiguous(name)) => anyhow::bail!(
            "--cluster {name}: several clusters have that label in {}: name one by its uid ({})",
            url.shown(),
            listed()
        ),
        Err(NoChoice::Several) => anyhow::bail!(
            "{} holds {} clusters: choose one with --cluster NAME|UID ({})",
            url.shown(),
            held.len(),
            listed()
        ),
    }
}

/// Pulls the clusters of `which` into a new recording: all of their rows, or
/// with `namespaces` only the rows of those namespaces (cluster-scoped
/// objects, whose namespace is "", always come along).
pub fn pull(
    url: &ClickHouseUrl,
    which: &Which,
    namespaces: Option<&[String]>,
) -> anyhow::Result<Pulled> {
    let puller = Puller::start(url, which, namespaces)?;
    puller.begin()?;
    for table in TABLES {
        let bytes = puller
            .runtime
            .block_on(puller.ch.read(table, &puller.uids, namespaces))?;
        puller.stage(table, &bytes)?;
    }
    puller.load(SQL_LOAD)?;
    Ok(puller.finish())
}

/// A pull under way: the recording is open for writing, the staging tables
/// are there. `pull` stages every table at once; `timeline --store` reads in
/// steps, each chosen from what the recording already holds.
pub struct Puller {
    runtime: tokio::runtime::Runtime,
    ch: ClickHouse,
    url: ClickHouseUrl,
    uids: Vec<String>,
    namespaces: Option<Vec<String>>,
    rec: Recording,
    pulled: Pulled,
}

impl Puller {
    /// Chooses the clusters, makes the private folder and the empty recording.
    pub fn start(
        url: &ClickHouseUrl,
        which: &Which,
        namespaces: Option<&[String]>,
    ) -> anyhow::Result<Puller> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("starting the async runtime")?;
        let ch = ClickHouse::with_limits(url, super::clickhouse::STORE_LIMITS, None);
        let held = runtime.block_on(ch.clusters())?;
        let chosen = choose(url, &held, which)?;
        let uids: Vec<String> = chosen.iter().map(|(u, _)| u.clone()).collect();
        let dir = private_dir()?;
        let pulled = Pulled {
            path: dir.join("diag.db"),
            dir,
            clusters: chosen,
        };
        let rec = Recording::open(&pulled.path, Mode::Write)?;
        let conn = rec.connection();
        // NB: a throwaway file, removed when the command ends: nothing to make durable.
        conn.pragma_update(None, "synchronous", "OFF")?;
        conn.pragma_update(None, "journal_mode", "MEMORY")?;
        conn.pragma_update(None, "temp_store", "MEMORY")?;
        register_functions(conn)?;
        // A table per ClickHouse table, in the temporary schema; load.sql turns
        // them into the recording's own tables.
        for t in TABLES.iter().chain([&EVENT_OBJECTS]) {
            conn.execute(t.stage_table, [])?;
        }
        Ok(Puller {
            runtime,
            ch,
            url: url.clone(),
            uids,
            namespaces: namespaces.map(<[String]>::to_vec),
            rec,
            pulled,
        })
    }

    /// The recording as pulled so far.
    pub fn recording(&self) -> &Recording {
        &self.rec
    }

    fn begin(&self) -> rusqlite::Result<()> {
        self.rec.connection().execute_batch("BEGIN")
    }

    /// Runs a load statement over what is staged, and commits.
    fn load(&self, sql: &str) -> anyhow::Result<()> {
        self.rec
            .connection()
            .execute_batch(sql)
            .context("building the recording pulled from ClickHouse")?;
        self.rec.connection().execute_batch("COMMIT")?;
        Ok(())
    }

    /// Stages the RowBinary rows of one table.
    fn stage(&self, table: &Table, bytes: &[u8]) -> anyhow::Result<()> {
        let mut st = self.rec.connection().prepare_cached(table.stage)?;
        let mut at = 0usize;
        let mut row: Vec<Value> = Vec::with_capacity(table.columns.len());
        while at < bytes.len() {
            row.clear();
            for (name, ty) in table.columns {
                row.push(rowbinary::read(bytes, &mut at, name, *ty).with_context(|| {
                    format!("reading {} from {}", table.name, self.url.shown())
                })?);
            }
            st.execute(rusqlite::params_from_iter(row.iter()))?;
        }
        Ok(())
    }

    /// Stages the rows of a combined read (queries/clickhouse/timeline/):
    /// (table, order key, the row as RowBinary).
    fn stage_combined(&self, bytes: &[u8]) -> anyhow::Result<()> {
        let mut at = 0usize;
        while at < bytes.len() {
            let name = rowbinary::read_bytes(bytes, &mut at, "t")?;
            let _key = rowbinary::read(bytes, &mut at, "k", Ty::Int)?;
            let row = rowbinary::read_bytes(bytes, &mut at, "r")?;
            let name = String::from_utf8_lossy(name);
            match TABLES.iter().find(|t| t.name == name) {
                Some(table) => self.stage(table, row)?,
                None if name == EVENT_OBJECTS.name => self.stage(&EVENT_OBJECTS, row)?,
                None => anyhow::bail!(
                    "reading from {}: rows of an unknown table {name}",
                    self.url.shown()
                ),
            }
        }
        Ok(())
    }

    /// One combined read: the slice's binds, then `more`.
    fn read_combined(
        &self,
        sql: &str,
        more: impl FnOnce(clickhouse::query::Query) -> clickhouse::query::Query,
    ) -> anyhow::Result<()> {
        let q = self
            .ch
            .query(sql)
            .bind(&self.uids)
            .bind(self.namespaces.is_none())
            .bind(self.namespaces.as_deref().unwrap_or_default());
        let bytes = self
            .runtime
            .block_on(ClickHouse::fetch(&self.ch, more(q)))?;
        self.begin()?;
        self.stage_combined(&bytes)
    }

    /// The slice's every table but its Events and occurrences (and the objects
    /// its Events name), one request; then the recording is built.
    pub fn structure(&mut self) -> anyhow::Result<()> {
        self.read_combined(SQL_STRUCTURE, |q| q)?;
        self.load(SQL_LOAD)
    }

    /// The slice's Events about these objects ("Kind/namespace/name"), with
    /// their occurrences, one request.
    pub fn events_of(&mut self, objects: &[String]) -> anyhow::Result<()> {
        self.read_combined(SQL_EVENTS_OF, |q| q.bind(objects))?;
        self.load(SQL_LOAD_EVENTS)
    }

    /// The slice's Events a check may read about objects in `spaces`: every
    /// one since `from`, and the scheduling ones
    /// (queries/clickhouse/timeline/warnings.sql), one request.
    pub fn warnings(&mut self, spaces: &[String], from: i64) -> anyhow::Result<()> {
        self.read_combined(SQL_WARNINGS, |q| {
            q.bind(spaces)
                .bind(crate::model::event::SCHEDULING.as_slice())
                .bind(from)
        })?;
        self.load(SQL_LOAD_EVENTS)
    }

    /// The slice's every Event and occurrence, as `pull` reads them.
    pub fn all_events(&mut self) -> anyhow::Result<()> {
        self.begin()?;
        for table in TABLES
            .iter()
            .filter(|t| matches!(t.name, "events" | "occurrences"))
        {
            let bytes = self.runtime.block_on(self.ch.read(
                table,
                &self.uids,
                self.namespaces.as_deref(),
            ))?;
            self.stage(table, &bytes)?;
        }
        self.load(SQL_LOAD_EVENTS)
    }

    /// The recording, closed; its folder goes when the result is dropped.
    pub fn finish(self) -> Pulled {
        drop(self.rec);
        self.pulled
    }
}

/// The rows structure.sql reads of the objects the slice's Events name.
const EVENT_OBJECTS: Table = super::tables::shipped!(
    staged "event_objects",
    [
        "cluster": Str,
        "kind": Str,
        "namespace": Str,
        "name": Str,
        "uid": Str,
        "api_version": Str,
    ]
);

/// The functions load.sql calls.
fn register_functions(conn: &rusqlite::Connection) -> rusqlite::Result<()> {
    let flags = FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC;
    conn.create_scalar_function("fnv1a", 1, flags, |ctx| {
        let s: String = ctx.get(0)?;
        Ok(crate::units::fnv1a(&s))
    })?;
    conn.create_scalar_function("uid_key", 1, flags, |ctx| {
        let s: String = ctx.get(0)?;
        Ok(match crate::store::uid_key(&s) {
            crate::store::UidKey::Uuid(b) => Value::Blob(b.to_vec()),
            crate::store::UidKey::Text(t) => Value::Text(t),
        })
    })?;
    conn.create_scalar_function("event_name", 2, flags, |ctx| {
        let (name, object): (String, String) = (ctx.get(0)?, ctx.get(1)?);
        Ok(crate::store::compact_event_name(&name, &object))
    })?;
    Ok(())
}
