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
use super::tables::TABLES;
use super::url::ClickHouseUrl;
use crate::store::{Mode, Recording};

const SQL_STAGE: &str = include_str!("../../queries/clickhouse/stage.sql");
const SQL_LOAD: &str = include_str!("../../queries/clickhouse/load.sql");

/// Which clusters a command reads.
#[derive(Debug, Clone)]
pub enum Which {
    /// `--cluster` (uid or label), or the only one there is.
    One(Option<String>),
    /// `--all-clusters`.
    All,
}

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
    let listed = || {
        held.iter()
            .map(|(u, l)| format!("{l} ({u})"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match which {
        Which::All if held.is_empty() => {
            anyhow::bail!(
                "{} holds no recording yet: ship one with `kubectl diag record --ship` or `kubectl diag ship`",
                url.shown()
            )
        }
        Which::All => Ok(held.to_vec()),
        Which::One(Some(name)) => {
            let found: Vec<_> = held
                .iter()
                .filter(|(u, l)| u == name || l == name)
                .cloned()
                .collect();
            match found.len() {
                0 if held.is_empty() => anyhow::bail!(
                    "{} holds no recording yet: ship one with `kubectl diag record --ship` or `kubectl diag ship`",
                    url.shown()
                ),
                0 => anyhow::bail!(
                    "--cluster {name}: {} holds no such cluster; it holds {}",
                    url.shown(),
                    listed()
                ),
                1 => Ok(found),
                _ => anyhow::bail!(
                    "--cluster {name}: several clusters have that label in {}: name one by its uid ({})",
                    url.shown(),
                    listed()
                ),
            }
        }
        Which::One(None) => match held.len() {
            0 => anyhow::bail!(
                "{} holds no recording yet: ship one with `kubectl diag record --ship` or `kubectl diag ship`",
                url.shown()
            ),
            1 => Ok(held.to_vec()),
            _ => anyhow::bail!(
                "{} holds {} clusters: choose one with --cluster NAME|UID ({})",
                url.shown(),
                held.len(),
                listed()
            ),
        },
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
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let ch = ClickHouse::new(url);
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
    conn.execute_batch(SQL_STAGE)?;
    let tx = conn.unchecked_transaction()?;
    for table in TABLES {
        let bytes = runtime.block_on(ch.read(table, &uids, namespaces))?;
        let mut st = tx.prepare_cached(table.stage)?;
        let mut at = 0usize;
        let mut row: Vec<Value> = Vec::with_capacity(table.columns.len());
        while at < bytes.len() {
            row.clear();
            for (name, ty) in table.columns {
                row.push(
                    rowbinary::read(&bytes, &mut at, name, *ty)
                        .with_context(|| format!("reading {} from {}", table.name, url.shown()))?,
                );
            }
            st.execute(rusqlite::params_from_iter(row.iter()))?;
        }
    }
    tx.execute_batch(SQL_LOAD)
        .context("building the recording pulled from ClickHouse")?;
    tx.commit()?;
    drop(rec);
    Ok(pulled)
}

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
