//! Rows held back within a batch and inserted many to a statement.
//!
//! NB: a one-row INSERT spends about as much on the statement (bind, step,
//! halt, reset) as on the B-tree; inserting 32 rows with one statement spends
//! it once (docs/performance.md). New Events and occurrences are never read
//! back by the writer before its commit, with three exceptions: a lookup of
//! Events by name and an Event's deletion insert the held Events first, and a
//! repeat of a held Event advances the held row instead of an UPDATE.
//!
//! A held Event needs its id before its row exists (its occurrences and the
//! cache name it), so inside a batch the writer numbers Events itself, from
//! `MAX(id) + 1` read under the write lock: the ids SQLite would have picked.

use rusqlite::named_params;
use rusqlite::types::{ToSql, Value};

use super::{StoreError, UidKey, Writer};

/// Rows a statement of `*_32.sql` inserts at once.
pub(super) const AT_ONCE: usize = 32;

/// An Event row not yet inserted.
pub(super) struct NewEvent {
    pub id: i64,
    pub uid: UidKey,
    pub namespace: i64,
    pub name: Value,
    pub object: i64,
    pub field_path: i64,
    pub reason: i64,
    pub type_: i64,
    pub action: i64,
    pub controller: i64,
    pub instance: i64,
    pub host: i64,
    pub related: Option<i64>,
    pub last: i64,
    pub count: i64,
}

impl NewEvent {
    /// The row's values in the order of `event_insert_32.sql`.
    fn values<'a>(&'a self, cluster: &'a i64) -> [&'a dyn ToSql; 16] {
        [
            &self.id,
            cluster,
            &self.uid,
            &self.namespace,
            &self.name,
            &self.object,
            &self.field_path,
            &self.reason,
            &self.type_,
            &self.action,
            &self.controller,
            &self.instance,
            &self.host,
            &self.related,
            &self.last,
            &self.count,
        ]
    }
}

/// An occurrence row not yet inserted: event, count, n, first, last, message.
pub(super) type NewOccurrence = [i64; 6];

#[derive(Default)]
pub(super) struct Held {
    events: Vec<NewEvent>,
    occurrences: Vec<NewOccurrence>,
    /// The id the next new Event gets in this batch; `None`: not read yet.
    next_id: Option<i64>,
}

impl Held {
    /// Drops what is held: the batch is over or abandoned.
    pub(super) fn clear(&mut self) {
        self.events.clear();
        self.occurrences.clear();
        self.next_id = None;
    }

    /// The held row of Event `id`, if it is held. Held ids are consecutive.
    pub(super) fn event_mut(&mut self, id: i64) -> Option<&mut NewEvent> {
        let first = self.events.first()?.id;
        let at = usize::try_from(id.checked_sub(first)?).ok()?;
        self.events.get_mut(at)
    }
}

impl Writer {
    /// The id for a new Event inside a batch.
    pub(super) fn next_event_id(&mut self) -> Result<i64, StoreError> {
        let next = match self.held.next_id {
            Some(next) => next,
            None => self.hot("next event id", |conn, hot| {
                hot.event_next_id
                    .on(conn)?
                    .query(&[])?
                    .next()?
                    .map_or(Ok(1), |row| row.get(0))
            })?,
        };
        self.held.next_id = Some(next + 1);
        Ok(next)
    }

    /// Holds a new Event's row until [`Writer::flush_held`], or a full statement.
    pub(super) fn hold_event(&mut self, event: NewEvent) -> Result<(), StoreError> {
        self.held.events.push(event);
        if self.held.events.len() == AT_ONCE {
            self.flush_events()?;
        }
        Ok(())
    }

    /// Holds an occurrence row until [`Writer::flush_held`], or a full statement.
    pub(super) fn hold_occurrence(&mut self, row: NewOccurrence) -> Result<(), StoreError> {
        self.held.occurrences.push(row);
        if self.held.occurrences.len() == AT_ONCE {
            self.flush_occurrences()?;
        }
        Ok(())
    }

    /// Inserts every held row.
    pub(super) fn flush_held(&mut self) -> Result<(), StoreError> {
        self.flush_events()?;
        self.flush_occurrences()
    }

    /// Inserts the held Events: before anything reads Events back.
    pub(super) fn flush_events(&mut self) -> Result<(), StoreError> {
        if self.held.events.is_empty() {
            return Ok(());
        }
        let events = std::mem::take(&mut self.held.events);
        let cluster = self.cluster;
        let done = self.hot("event insert", |conn, hot| {
            let mut chunks = events.chunks_exact(AT_ONCE);
            for chunk in &mut chunks {
                let values: Vec<&dyn ToSql> =
                    chunk.iter().flat_map(|e| e.values(&cluster)).collect();
                hot.event_insert_32.on(conn)?.execute_positional(&values)?;
            }
            for e in chunks.remainder() {
                hot.event_insert.on(conn)?.execute(named_params! {
                    ":id": e.id, ":cluster": cluster, ":uid": e.uid, ":namespace": e.namespace,
                    ":name": e.name, ":object": e.object, ":field_path": e.field_path,
                    ":reason": e.reason, ":type": e.type_, ":action": e.action,
                    ":controller": e.controller, ":instance": e.instance, ":host": e.host,
                    ":related": e.related, ":last": e.last, ":count": e.count,
                })?;
            }
            Ok(())
        });
        // Keep the allocation for the next rows.
        self.held.events = events;
        self.held.events.clear();
        done
    }

    fn flush_occurrences(&mut self) -> Result<(), StoreError> {
        if self.held.occurrences.is_empty() {
            return Ok(());
        }
        let rows = std::mem::take(&mut self.held.occurrences);
        let done = self.hot("occurrence insert", |conn, hot| {
            let mut chunks = rows.chunks_exact(AT_ONCE);
            for chunk in &mut chunks {
                let values: Vec<&dyn ToSql> = chunk
                    .as_flattened()
                    .iter()
                    .map(|v| v as &dyn ToSql)
                    .collect();
                hot.occurrence_insert_32
                    .on(conn)?
                    .execute_positional(&values)?;
            }
            for [event, count, n, first, last, message] in chunks.remainder() {
                hot.occurrence_insert.on(conn)?.execute(named_params! {
                    ":event": event, ":count": count, ":n": n,
                    ":first": first, ":last": last, ":message": message,
                })?;
            }
            Ok(())
        });
        self.held.occurrences = rows;
        self.held.occurrences.clear();
        done
    }
}
