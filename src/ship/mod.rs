//! Shipping a recording to stores a fleet already runs, and reading it back.
//!
//! The SQLite recording stays the durable source of truth: triggers fill an
//! outbox ([`outbox`]) while a destination exists, a shipper sends it in
//! batches (`record::shipping::Shipper`, inside the recorder) and the writer moves the destination's cursor only
//! when the destination confirmed. A batch sent twice changes nothing where
//! it lands (deduplication tokens, ReplacingMergeTree keys), so a crash
//! between a send and its confirmation costs a resend, never a loss or a
//! double. [`pull`] reads a store back into a recording for the readers.

pub mod clickhouse;
pub mod http;
pub mod otlp;
pub mod outbox;
pub mod pull;
pub mod rowbinary;
pub mod tables;
pub mod url;

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use self::clickhouse::{ChError, ClickHouse};
use self::outbox::{BATCH_KEYS, Batch, Registered};

const SQL_CURSOR: &str = include_str!("../../queries/ship/destination_cursor.sql");

/// What the shippers tell the status line and /metrics.
#[derive(Debug, Default)]
pub struct ShipStats {
    /// Destinations shipped to.
    pub destinations: AtomicU64,
    /// Rows the destinations confirmed, this session.
    pub rows: AtomicU64,
    /// Outbox keys not confirmed yet (the largest over destinations).
    pub backlog: AtomicU64,
    /// Failed sends, this session.
    pub errors: AtomicU64,
    /// Since when (epoch ms) something waits to be shipped; 0: caught up.
    behind_since: AtomicU64,
    /// The last failure, until a send succeeds.
    last_error: std::sync::Mutex<String>,
}

impl ShipStats {
    pub fn fail(&self, error: String) {
        self.errors.fetch_add(1, Ordering::Relaxed);
        self.behind();
        if let Ok(mut e) = self.last_error.lock() {
            *e = error;
        }
    }

    pub fn ok(&self) {
        if let Ok(mut e) = self.last_error.lock() {
            e.clear();
        }
    }

    /// Something waits to be sent.
    pub fn behind(&self) {
        let now = crate::units::now_ms().unsigned_abs();
        let _ = self
            .behind_since
            .compare_exchange(0, now, Ordering::Relaxed, Ordering::Relaxed);
    }

    pub fn caught_up(&self) {
        self.backlog.store(0, Ordering::Relaxed);
        self.behind_since.store(0, Ordering::Relaxed);
    }

    /// How long the oldest unshipped change has waited, in ms (0: none waits).
    pub fn behind_ms(&self) -> u64 {
        match self.behind_since.load(Ordering::Relaxed) {
            0 => 0,
            since => crate::units::now_ms().unsigned_abs().saturating_sub(since),
        }
    }

    /// The failure that stops shipping now, if any.
    pub fn last_error(&self) -> String {
        self.last_error
            .lock()
            .map(|e| e.clone())
            .unwrap_or_default()
    }
}

/// Whether the destination at `url` (as [`Destination::shown`] writes it) is
/// sent every table of the recording (ClickHouse), or only the three OTLP
/// reads ([`otlp::OTLP_TABLES`]): the outbox keeps the keys of the others only
/// while a destination that reads them exists (migration 10).
pub fn reads_every_table(url: &str) -> bool {
    !url.starts_with("otlp+")
}

/// A place to ship to.
pub enum Destination {
    ClickHouse(ClickHouse),
    /// OTLP/HTTP logs (`otlp+http://`, `otlp+https://`).
    Otlp(otlp::Otlp),
}

impl Destination {
    /// Parses `--ship`/`--to`: `clickhouse://…`, `otlp+http://…` or `otlp+https://…`;
    /// `headers` (`Name`, `value`) are sent with every OTLP request (ClickHouse has none:
    /// callers refuse headers when no destination is OTLP, [`Destination::takes_headers`]).
    pub fn parse(
        text: &str,
        password: Option<&str>,
        headers: &[(String, String)],
    ) -> Result<Destination, url::UrlError> {
        // NB: the same test as the outbox's (what an OTLP destination reads).
        if !reads_every_table(text) {
            return Ok(Destination::Otlp(otlp::Otlp::new(
                otlp::OtlpUrl::parse(text)?,
                headers,
            )?));
        }
        let env = std::env::var(url::PASSWORD_ENV).ok();
        let password = password.or(env.as_deref());
        let url = url::ClickHouseUrl::parse(text, password).map_err(|mut e| {
            if !text.contains("://") || text.starts_with("http") {
                e.why
                    .push_str("; or an OTLP collector: otlp+http://host:4318");
            }
            e
        })?;
        Ok(Destination::ClickHouse(ClickHouse::new(&url)))
    }

    /// Whether it sends `--ship-header`s.
    pub fn takes_headers(&self) -> bool {
        matches!(self, Destination::Otlp(_))
    }

    /// How it is shown and stored: never with a password or a header.
    pub fn shown(&self) -> String {
        match self {
            Destination::ClickHouse(c) => c.url().shown(),
            Destination::Otlp(o) => o.url().shown(),
        }
    }

    /// Before the first batch: the schema made (when asked) or checked.
    pub async fn prepare(
        &self,
        create_schema: bool,
        on_cluster: Option<&str>,
        ttl_secs: Option<i64>,
    ) -> Result<(), ChError> {
        match self {
            Destination::ClickHouse(c) => {
                if create_schema {
                    c.create_schema(on_cluster, ttl_secs).await
                } else {
                    c.probe().await
                }
            }
            // NB: OTLP has no schema: an empty request checks that it answers and takes our headers.
            Destination::Otlp(o) => o.probe().await,
        }
    }

    /// The next batch after `after` (at most `limit` outbox keys), read as
    /// this destination is sent it; None when the outbox holds nothing newer.
    pub fn take(
        &self,
        conn: &rusqlite::Connection,
        after: i64,
        limit: i64,
    ) -> Result<Option<Batch>, outbox::OutboxError> {
        match self {
            Destination::ClickHouse(c) => {
                // NB: a panic elsewhere that poisoned it leaves a usable cache.
                let mut strings = c.strings.lock().unwrap_or_else(|p| p.into_inner());
                outbox::take(conn, after, limit, tables::TABLES, &mut strings)
            }
            Destination::Otlp(o) => o.take(conn, after, limit),
        }
    }

    /// Sends one batch; Ok only once the destination has taken all of it.
    pub async fn send(&self, tag: &str, batch: &Batch) -> Result<(), ChError> {
        match self {
            Destination::ClickHouse(c) => c.send(tag, batch).await,
            Destination::Otlp(o) => o.send(batch).await,
        }
    }
}

/// A read-only connection to the recording for a shipper (its temp tables only are written).
pub fn reader(path: &Path) -> Result<Connection, rusqlite::Error> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(crate::store::BUSY_TIMEOUT)?;
    conn.pragma_update(None, "temp_store", "MEMORY")?;
    outbox::prepare(&conn)?;
    Ok(conn)
}

/// The wait before the n-th retry: 1 s doubling to 30 s.
pub fn backoff(failures: u32) -> Duration {
    Duration::from_secs((1u64 << failures.min(5)).min(30))
}

/// After the writer stopped: sends what is left in the outbox and records
/// the cursor itself, until done or `deadline`. Returns rows sent and what is left.
pub async fn drain(
    path: &Path,
    destination: &Destination,
    registered: &Registered,
    tag: &str,
    deadline: Duration,
) -> Result<(u64, i64), String> {
    let started = std::time::Instant::now();
    let conn = crate::store::open(path, crate::store::Mode::Write).map_err(|e| e.to_string())?;
    outbox::prepare(&conn).map_err(|e| e.to_string())?;
    let mut cursor: i64 = conn
        .query_row(
            SQL_CURSOR,
            rusqlite::named_params! {":id": registered.id},
            |r| r.get(0),
        )
        .map_err(|e| e.to_string())?;
    let mut sent = 0u64;
    loop {
        let Some(batch) = destination
            .take(&conn, cursor, BATCH_KEYS)
            .map_err(|e| e.to_string())?
        else {
            return Ok((sent, 0));
        };
        if started.elapsed() > deadline {
            let newest = outbox::newest(&conn).unwrap_or(cursor);
            return Ok((sent, newest - cursor));
        }
        destination
            .send(tag, &batch)
            .await
            .map_err(|e| e.to_string())?;
        let rows = batch.rows() as u64;
        outbox::confirm(
            &conn,
            registered.id,
            batch.last,
            rows,
            crate::units::now_ms(),
        )
        .map_err(|e| e.to_string())?;
        cursor = batch.last;
        sent += rows;
    }
}
