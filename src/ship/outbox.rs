//! The outbox in the recording: which rows changed since a destination last
//! confirmed, read as batches of rows per table ready to send.
//!
//! Triggers (migration 8) append a key per inserted or changed row while a
//! destination exists; each destination has a cursor, the last seq it
//! confirmed, moved by the writer thread in its own transaction
//! ([`confirm`]). `kubectl diag ship` uses a temporary outbox of its own
//! ([`open_one_off`]), so the file is only read.

use std::collections::HashMap;

use rusqlite::types::ValueRef;
use rusqlite::{CachedStatement, Connection, OptionalExtension, named_params};

use super::rowbinary;
use super::tables::{Table, Ty};
use crate::store::StoreError;

const SQL_TEMP: &str = include_str!("../../queries/ship/temp.sql");
const SQL_TEMP_OUTBOX: &str = include_str!("../../queries/ship/temp_outbox.sql");
const SQL_KEYS_ALL: &str = include_str!("../../queries/ship/keys_all.sql");
const SQL_RANGE: &str = include_str!("../../queries/ship/outbox_range.sql");
const SQL_KEYS_STAGE: &str = include_str!("../../queries/ship/keys_stage.sql");
const SQL_STRING: &str = include_str!("../../queries/ship/string.sql");
const SQL_STRING_EPOCH: &str = include_str!("../../queries/ship/string_epoch.sql");
const SQL_KEYS_CLEAR: &str = include_str!("../../queries/ship/keys_clear.sql");
const SQL_LAST: &str = include_str!("../../queries/ship/outbox_last.sql");
const SQL_FIND: &str = include_str!("../../queries/ship/destination_find.sql");
const SQL_ADD: &str = include_str!("../../queries/ship/destination_add.sql");
const SQL_ALL: &str = include_str!("../../queries/ship/destinations.sql");
const SQL_FORGET: &str = include_str!("../../queries/ship/destination_forget.sql");
const SQL_CONFIRM: &str = include_str!("../../queries/ship/destination_confirm.sql");
const SQL_TRIM: &str = include_str!("../../queries/ship/outbox_trim.sql");

/// How many outbox keys one batch takes at most.
pub const BATCH_KEYS: i64 = 20_000;

/// One table's part of a batch: its rows in RowBinary.
#[derive(Debug)]
pub struct Part {
    pub table: &'static Table,
    pub rows: usize,
    pub data: Vec<u8>,
}

/// What one batch sends: the outbox seqs it covers and the rows they name,
/// as the rows are now (a key whose row is gone, say by retention, sends nothing).
/// ClickHouse is sent `parts`, OTLP `bodies`.
#[derive(Debug, Default)]
pub struct Batch {
    pub first: i64,
    pub last: i64,
    pub parts: Vec<Part>,
    /// Request bodies (gzipped protobuf) and how many records each holds.
    pub bodies: Vec<(bytes::Bytes, usize)>,
}

impl Batch {
    pub fn rows(&self) -> usize {
        self.parts.iter().map(|p| p.rows).sum::<usize>()
            + self.bodies.iter().map(|b| b.1).sum::<usize>()
    }
}

/// Why reading the outbox failed.
#[derive(Debug, thiserror::Error)]
pub enum OutboxError {
    #[error("reading the outbox: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("a row of {table} cannot be sent: {source}")]
    Row {
        table: &'static str,
        source: rowbinary::RowBinaryError,
    },
    #[error("compressing a request: {0}")]
    Compress(#[from] std::io::Error),
}

/// Makes a connection able to take batches (its temporary key table).
pub fn prepare(conn: &Connection) -> Result<(), rusqlite::Error> {
    conn.execute_batch(SQL_TEMP)
}

/// `kubectl diag ship`: a temporary outbox holding every row of the file.
/// Returns the newest seq (0: nothing to send).
pub fn open_one_off(conn: &Connection) -> Result<i64, rusqlite::Error> {
    prepare(conn)?;
    conn.execute_batch(SQL_TEMP_OUTBOX)?;
    conn.execute(SQL_KEYS_ALL, [])?;
    conn.query_row(SQL_LAST, [], |r| r.get(0))
}

/// The next batch after `after` as RowBinary parts (ClickHouse), or None
/// when the outbox holds nothing newer.
pub fn take(
    conn: &Connection,
    after: i64,
    limit: i64,
    tables: &'static [Table],
    strings: &mut StringCache,
) -> Result<Option<Batch>, OutboxError> {
    let mut parts: Vec<Part> = Vec::new();
    let range = read(conn, after, limit, tables, strings, |table, values| {
        if parts.last().is_none_or(|p| !std::ptr::eq(p.table, table)) {
            parts.push(Part {
                table,
                rows: 0,
                data: Vec::new(),
            });
        }
        let Some(part) = parts.last_mut() else {
            return Ok(());
        };
        for ((name, ty), v) in table.columns.iter().zip(values) {
            rowbinary::write_ref(&mut part.data, name, ty.wire(), *v).map_err(|source| {
                OutboxError::Row {
                    table: table.name,
                    source,
                }
            })?;
        }
        part.rows += 1;
        Ok(())
    })?;
    Ok(range.map(|(first, last)| Batch {
        first,
        last,
        parts,
        bodies: Vec::new(),
    }))
}

/// Reads the next batch after `after`: calls `each` with every row its keys
/// name, table by table in the order of `tables` (each destination reads its
/// own: [`super::Destination::take`]), its values in the order of the table's
/// columns, ids and uids resolved ([`Ty::Id`], [`Ty::Uid`]). Returns the first
/// and last seq the batch covers, or None when the outbox holds nothing newer.
pub fn read(
    conn: &Connection,
    after: i64,
    limit: i64,
    tables: &'static [Table],
    strings: &mut StringCache,
    mut each: impl FnMut(&'static Table, &[ValueRef<'_>]) -> Result<(), OutboxError>,
) -> Result<Option<(i64, i64)>, OutboxError> {
    let range: (Option<i64>, Option<i64>) = conn
        .prepare_cached(SQL_RANGE)?
        .query_row(named_params! {":after": after, ":limit": limit}, |r| {
            Ok((r.get(0)?, r.get(1)?))
        })?;
    let (Some(first), Some(last)) = range else {
        return Ok(None);
    };
    let tx = conn.unchecked_transaction()?;
    // NB: only the keys of tables this destination reads (OTLP reads 3 of the 14;
    // an occurrence's Event key, one in two of the outbox, would be staged for nothing).
    let codes: Vec<i64> = tables.iter().map(|t| t.code).collect();
    let codes = serde_json::Value::from(codes).to_string();
    tx.prepare_cached(SQL_KEYS_STAGE)?
        .execute(named_params! {":first": first, ":last": last, ":codes": codes})?;
    strings.begin(&tx)?;
    let mut string = tx.prepare_cached(SQL_STRING)?;
    for table in tables {
        let mut uids: Vec<String> = vec![String::new(); table.columns.len()];
        let mut st = tx.prepare_cached(table.select)?;
        let mut rows = st.query([])?;
        while let Some(row) = rows.next()? {
            // NB: two passes over the values read once (a `get_ref` is a few
            // calls into SQLite): the first reads what the row names (strings,
            // uids), the second borrows it all at once. Text stays borrowed from SQLite.
            let mut values = Vec::with_capacity(table.columns.len());
            for (i, (_, ty)) in table.columns.iter().enumerate() {
                let v = row.get_ref(i)?;
                match (ty, v) {
                    (Ty::Id | Ty::NId, ValueRef::Integer(id)) => strings.load(&mut string, id)?,
                    (Ty::Uid, ValueRef::Blob(b)) => {
                        uids[i].clear();
                        uuid_text(b, &mut uids[i]);
                    }
                    _ => {}
                }
                values.push(v);
            }
            for (v, (i, (_, ty))) in values.iter_mut().zip(table.columns.iter().enumerate()) {
                match (ty, *v) {
                    (Ty::Id | Ty::NId, ValueRef::Integer(id)) => {
                        *v = ValueRef::Text(strings.get(id).as_bytes())
                    }
                    (Ty::Uid, ValueRef::Blob(_)) => *v = ValueRef::Text(uids[i].as_bytes()),
                    _ => {}
                }
            }
            each(table, &values)?;
        }
    }
    drop(string);
    tx.prepare_cached(SQL_KEYS_CLEAR)?.execute([])?;
    // NB: a read transaction on the file, rolled back: only temp rows changed.
    drop(tx);
    Ok(Some((first, last)))
}

/// The strings the shipper read, by id, kept from batch to batch: most rows
/// name strings an earlier batch named (kinds, reasons, the same objects'
/// names and messages), and reading each anew every batch was a fifth of
/// the shipper's reading (issue 32).
///
/// NB: `strings.id` is a rowid, so an id retention freed may be given to
/// another string. Every deletion of a string counts in `string_epoch`
/// (migration 11, by trigger, whichever process deletes); a batch whose
/// snapshot shows another count than the one the cache was filled under
/// starts it over. Within one read transaction an id names one string.
#[derive(Debug, Default)]
pub struct StringCache {
    /// The `string_epoch` the entries were read under; None: not known
    /// (a file before migration 11), and then nothing is kept past a batch.
    epoch: Option<i64>,
    /// Two generations bound the memory: when `new` holds more than
    /// [`StringCache::KEEP_BYTES`] at a batch's start it becomes `old`, and
    /// what a later batch still names moves back.
    new: HashMap<i64, Box<str>, foldhash::fast::RandomState>,
    old: HashMap<i64, Box<str>, foldhash::fast::RandomState>,
    /// The text bytes in `new`.
    bytes: usize,
}

impl StringCache {
    /// Text kept past a batch in each generation.
    const KEEP_BYTES: usize = 2 << 20;

    /// At the start of a batch's read transaction.
    fn begin(&mut self, tx: &Connection) -> Result<(), rusqlite::Error> {
        let epoch: Option<i64> = match tx.prepare_cached(SQL_STRING_EPOCH) {
            Ok(mut st) => st.query_row([], |r| r.get(0)).optional()?,
            // NB: a file not migrated to 11 (`ship --db` of an older one reads it as it is).
            Err(_) => None,
        };
        if epoch.is_none() || epoch != self.epoch {
            self.new.clear();
            self.old.clear();
            self.bytes = 0;
        } else if self.bytes > Self::KEEP_BYTES {
            self.old = std::mem::take(&mut self.new);
            self.bytes = 0;
        }
        self.epoch = epoch;
        Ok(())
    }

    /// Reads string `id` unless it is kept already.
    fn load(&mut self, st: &mut CachedStatement<'_>, id: i64) -> Result<(), rusqlite::Error> {
        if self.new.contains_key(&id) {
            return Ok(());
        }
        let s = match self.old.remove(&id) {
            Some(s) => s,
            // NB: an id no string has reads as "" (a join would have dropped
            // the row); retention deletes only strings no row names.
            None => st
                .query_row(named_params! {":id": id}, |r| {
                    let b = r.get_ref(0)?.as_bytes().unwrap_or_default();
                    Ok(Box::from(String::from_utf8_lossy(b).as_ref()))
                })
                .optional()?
                .unwrap_or_default(),
        };
        self.bytes += s.len();
        self.new.insert(id, s);
        Ok(())
    }

    /// String `id`, once [`StringCache::load`]ed.
    fn get(&self, id: i64) -> &str {
        self.new.get(&id).map_or("", |s| s)
    }
}

/// A uid the recording keeps as bytes, as the apiserver wrote it: 16 bytes
/// are a UUID, as [`crate::store::uid_key`] packed it.
fn uuid_text(bytes: &[u8], out: &mut String) {
    match <&[u8; 16]>::try_from(bytes) {
        Ok(b) => crate::store::push_uuid(b, out),
        Err(_) => out.push_str(&String::from_utf8_lossy(bytes)),
    }
}

/// The newest seq in the outbox.
pub fn newest(conn: &Connection) -> Result<i64, rusqlite::Error> {
    conn.prepare_cached(SQL_LAST)?.query_row([], |r| r.get(0))
}

/// A destination of this recording, as the recorder starts.
#[derive(Debug, Clone)]
pub struct Registered {
    pub id: i64,
    pub url: String,
    pub cursor: i64,
    /// It was new: everything already in the file was put in the outbox for it.
    pub new: bool,
}

/// The recorder's destinations (`urls`, without passwords): each found or
/// added (a new one gets every row already in the file); any other this
/// file had is forgotten, so that no outbox grows for a destination nobody
/// ships to (returned, to be told). One transaction.
pub fn register(
    conn: &Connection,
    urls: &[String],
    now: i64,
) -> Result<(Vec<Registered>, Vec<String>), StoreError> {
    let fail = |source| StoreError::Sqlite {
        path: std::path::PathBuf::from("the recording's outbox"),
        source,
    };
    crate::store::in_transaction(conn, fail, |tx| {
        let existing: Vec<(i64, String, i64)> = {
            let mut st = tx.prepare(SQL_ALL).map_err(fail)?;
            st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                .and_then(Iterator::collect)
                .map_err(fail)?
        };
        let mut forgotten = Vec::new();
        for (id, url, _) in &existing {
            if !urls.contains(url) {
                tx.execute(SQL_FORGET, named_params! {":id": id})
                    .map_err(fail)?;
                forgotten.push(url.clone());
            }
        }
        let mut out = Vec::new();
        for url in urls {
            let found: Option<(i64, i64)> = tx
                .query_row(SQL_FIND, named_params! {":url": url}, |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })
                .map(Some)
                .or_else(|e| match e {
                    rusqlite::Error::QueryReturnedNoRows => Ok(None),
                    e => Err(e),
                })
                .map_err(fail)?;
            match found {
                Some((id, cursor)) => out.push(Registered {
                    id,
                    url: url.clone(),
                    cursor,
                    new: false,
                }),
                None => {
                    let cursor: i64 = tx.query_row(SQL_LAST, [], |r| r.get(0)).map_err(fail)?;
                    let id: i64 = tx
                        .query_row(
                            SQL_ADD,
                            named_params! {
                                ":url": url,
                                ":cursor": cursor,
                                ":now": now,
                                ":every_table": super::reads_every_table(url),
                            },
                            |r| r.get(0),
                        )
                        .map_err(fail)?;
                    // NB: after the row above, so the triggers see a destination;
                    // the keys land after `cursor`, so only the new one is sent them
                    // (the others too, which changes nothing where they go).
                    tx.execute(SQL_KEYS_ALL, []).map_err(fail)?;
                    out.push(Registered {
                        id,
                        url: url.clone(),
                        cursor,
                        new: true,
                    });
                }
            }
        }
        tx.execute(SQL_TRIM, []).map_err(fail)?;
        Ok((out, forgotten))
    })
}

/// A destination confirmed everything up to `cursor` (`rows` rows): its
/// cursor moves, and what all destinations have leaves the outbox. Called by
/// the writer, inside its transaction.
pub fn confirm(
    conn: &Connection,
    id: i64,
    cursor: i64,
    rows: u64,
    now: i64,
) -> Result<(), rusqlite::Error> {
    conn.prepare_cached(SQL_CONFIRM)?
        .execute(named_params! {":id": id, ":cursor": cursor, ":rows": rows as i64, ":now": now})?;
    conn.prepare_cached(SQL_TRIM)?.execute([])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ship::tables;
    use crate::store::{Mode, Recording};

    /// The next batch, read with a cache of its own.
    fn take_fresh(conn: &Connection, after: i64, tables: &'static [Table]) -> Option<Batch> {
        take(conn, after, BATCH_KEYS, tables, &mut StringCache::default()).unwrap()
    }

    fn file() -> (tempfile::TempDir, Recording) {
        let dir = tempfile::tempdir().unwrap();
        let rec = Recording::open(&dir.path().join("diag.db"), Mode::Write).unwrap();
        (dir, rec)
    }

    /// String `id` as a batch of `cache` reads it.
    fn read_string(conn: &Connection, cache: &mut StringCache, id: i64) -> String {
        let tx = conn.unchecked_transaction().unwrap();
        cache.begin(&tx).unwrap();
        let mut st = tx.prepare_cached(SQL_STRING).unwrap();
        cache.load(&mut st, id).unwrap();
        cache.get(id).to_string()
    }

    #[test]
    fn strings_are_read_once_across_batches_until_one_is_deleted() {
        let (_d, rec) = file();
        let conn = rec.connection();
        conn.execute("INSERT INTO strings (id, h, s) VALUES (7, 0, 'first')", [])
            .unwrap();
        let mut cache = StringCache::default();
        assert_eq!(read_string(conn, &mut cache, 7), "first");
        // Kept: the next batch does not read it again (strings never change in place;
        // this one does only to show it is not read).
        conn.execute("UPDATE strings SET s = 'changed' WHERE id = 7", [])
            .unwrap();
        assert_eq!(read_string(conn, &mut cache, 7), "first");
        // Retention frees the id and a new string is given it: read anew.
        conn.execute("DELETE FROM strings WHERE id = 7", [])
            .unwrap();
        conn.execute("INSERT INTO strings (id, h, s) VALUES (7, 0, 'second')", [])
            .unwrap();
        assert_eq!(read_string(conn, &mut cache, 7), "second");
    }

    #[test]
    fn the_string_cache_keeps_what_batches_still_name_within_its_bound() {
        let (_d, rec) = file();
        let conn = rec.connection();
        let big = "x".repeat(StringCache::KEEP_BYTES + 1);
        conn.execute("INSERT INTO strings (id, h, s) VALUES (1, 0, ?1)", [&big])
            .unwrap();
        conn.execute("INSERT INTO strings (id, h, s) VALUES (2, 0, 'small')", [])
            .unwrap();
        let mut cache = StringCache::default();
        assert_eq!(read_string(conn, &mut cache, 1), big);
        // (Changed in place only to show whether it is read again.)
        conn.execute("UPDATE strings SET s = 'changed' WHERE id = 1", [])
            .unwrap();
        // Over the bound: the next batch starts a new generation, the old one aside.
        assert_eq!(read_string(conn, &mut cache, 2), "small");
        assert!(cache.old.contains_key(&1) && !cache.new.contains_key(&1));
        assert_eq!(cache.bytes, "small".len());
        // What a later batch names again moves back, not read again.
        assert_eq!(read_string(conn, &mut cache, 1), big);
        assert!(cache.new.contains_key(&1) && !cache.old.contains_key(&1));
        // Over the bound again: what the next batch does not name stays aside,
        // and goes when the generation after it starts.
        read_string(conn, &mut cache, 2);
        assert!(cache.old.contains_key(&1) && !cache.new.contains_key(&1));
        assert!(cache.new.contains_key(&2));
    }

    #[test]
    fn a_file_before_migration_11_keeps_no_string_past_a_batch() {
        let (_d, rec) = file();
        let conn = rec.connection();
        conn.execute("INSERT INTO strings (id, h, s) VALUES (7, 0, 'first')", [])
            .unwrap();
        conn.execute_batch("DROP TRIGGER strings_deleted; DROP TABLE string_epoch")
            .unwrap();
        let mut cache = StringCache::default();
        assert_eq!(read_string(conn, &mut cache, 7), "first");
        conn.execute("UPDATE strings SET s = 'changed' WHERE id = 7", [])
            .unwrap();
        assert_eq!(read_string(conn, &mut cache, 7), "changed");
    }

    #[test]
    fn nothing_enters_the_outbox_while_no_destination_exists() {
        let (_d, rec) = file();
        rec.register_cluster("uid-1", "ctx", "", 1).unwrap();
        assert_eq!(newest(rec.connection()).unwrap(), 0);
    }

    #[test]
    fn keys_a_destination_does_not_read_move_its_cursor_and_send_nothing() {
        let (_d, rec) = file();
        let conn = rec.connection();
        let urls = [
            "otlp+http://h:4318/v1/logs".into(),
            "clickhouse://h:1/db".into(),
        ];
        let (reg, _) = register(conn, &urls, 1).unwrap();
        // A cluster row: ClickHouse reads it, OTLP does not.
        rec.register_cluster("uid-1", "ctx", "", 2).unwrap();
        prepare(conn).unwrap();
        let batch = take_fresh(conn, reg[0].cursor, crate::ship::otlp::OTLP_TABLES).unwrap();
        assert_eq!(batch.rows(), 0);
        assert_eq!(batch.last, newest(conn).unwrap());
        // ClickHouse reads it from the same keys.
        let all = take_fresh(conn, reg[1].cursor, tables::TABLES).unwrap();
        assert_eq!((all.rows(), all.last), (1, batch.last));
    }

    /// Migration 10: with OTLP alone, no key is written for a table it does not read.
    #[test]
    fn with_only_otlp_the_outbox_holds_only_what_otlp_reads() {
        let (_d, rec) = file();
        let conn = rec.connection();
        register(conn, &["otlp+http://h:4318/v1/logs".into()], 1).unwrap();
        let before = newest(conn).unwrap();
        rec.register_cluster("uid-1", "ctx", "", 2).unwrap();
        assert_eq!(newest(conn).unwrap(), before, "a cluster row");
        let every: Vec<i64> = conn
            .prepare("SELECT every_table FROM ship_destinations")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(every, vec![0]);
        // A ClickHouse destination added later is sent the cluster row, and its keys flow again.
        let urls = [
            "otlp+http://h:4318/v1/logs".into(),
            "clickhouse://h:1/db".into(),
        ];
        let (reg, _) = register(conn, &urls, 3).unwrap();
        prepare(conn).unwrap();
        let all = take_fresh(conn, reg[1].cursor, tables::TABLES).unwrap();
        assert_eq!(all.rows(), 1);
        rec.register_cluster("uid-2", "ctx2", "", 4).unwrap();
        assert!(newest(conn).unwrap() > all.last);
    }

    #[test]
    fn a_new_destination_is_sent_what_the_file_already_holds_then_what_changes() {
        let (_d, rec) = file();
        let conn = rec.connection();
        rec.register_cluster("uid-1", "ctx", "https://a", 1)
            .unwrap();
        let (reg, forgotten) = register(conn, &["clickhouse://h:1/db".into()], 5).unwrap();
        assert!(forgotten.is_empty());
        assert!(reg[0].new);
        prepare(conn).unwrap();
        let batch = take_fresh(conn, reg[0].cursor, tables::TABLES).unwrap();
        assert_eq!(batch.parts.len(), 1);
        assert_eq!(batch.parts[0].table.name, "clusters");
        assert_eq!(batch.parts[0].rows, 1);
        // Confirmed: the outbox is empty; a change adds one key.
        confirm(conn, reg[0].id, batch.last, 1, 6).unwrap();
        assert!(take_fresh(conn, batch.last, tables::TABLES).is_none());
        rec.register_cluster("uid-2", "ctx2", "", 7).unwrap();
        let next = take_fresh(conn, batch.last, tables::TABLES).unwrap();
        assert_eq!(next.rows(), 1);
        // Registered again: the same cursor, nothing re-sent.
        let (again, _) = register(conn, &["clickhouse://h:1/db".into()], 8).unwrap();
        assert!(!again[0].new);
        assert_eq!(again[0].cursor, batch.last);
        // A recorder without --ship forgets it, and the outbox empties.
        let (none, forgotten) = register(conn, &[], 9).unwrap();
        assert!(none.is_empty());
        assert_eq!(forgotten, vec!["clickhouse://h:1/db".to_string()]);
        assert_eq!(
            conn.query_row("SELECT count(*) FROM outbox", [], |r| r.get::<_, i64>(0))
                .unwrap(),
            0
        );
    }
}
