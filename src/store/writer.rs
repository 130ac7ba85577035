//! The one writer: turns observed Event changes into rows, exactly once.
//!
//! An occurrence is (event, count). Storing is idempotent: a relist, a replayed
//! watch or a restarted recorder presents counts already stored, and they add
//! nothing. Small caches (bounded) spare most lookups; a miss asks SQLite.
//!
//! Everything is written inside a [`Batch`]: one transaction, which lands
//! whole on [`Batch::commit`] or not at all. Dropping a batch uncommitted
//! (a `?` half-way) rolls it back and drops the caches with it, so no
//! transaction is left open and no cache names a row that was never stored.

mod held;
mod history;
mod prepared;

use std::collections::HashMap;
use std::hash::BuildHasher;
use std::ops::Deref;
use std::path::Path;

use rusqlite::config::DbConfig;
use rusqlite::{Connection, named_params};

use held::{Held, NewEvent};
use prepared::Lazy;

use super::{Recording, StoreError, UidKey, compact_event_name, fnv1a, uid_key};
use crate::model::{Change, EventChange, EventObservation, ObjectChange, ObjectRef};

const SQL_STRING_FIND: &str = include_str!("../../queries/store/string_find.sql");
const SQL_STRING_INSERT: &str = include_str!("../../queries/store/string_insert.sql");
const SQL_OBJECT_FIND: &str = include_str!("../../queries/store/object_find.sql");
const SQL_OBJECT_INSERT: &str = include_str!("../../queries/store/object_insert.sql");
const SQL_EVENT_FIND: &str = include_str!("../../queries/store/event_find.sql");
const SQL_EVENT_FIND_UNNAMED: &str = include_str!("../../queries/store/event_find_unnamed.sql");
const SQL_EVENT_NEWEST_NAME: &str = include_str!("../../queries/store/event_newest_name.sql");
const SQL_EVENT_INSERT: &str = include_str!("../../queries/store/event_insert.sql");
const SQL_EVENT_ADVANCE: &str = include_str!("../../queries/store/event_advance.sql");
const SQL_EVENT_DELETED: &str = include_str!("../../queries/store/event_deleted.sql");
const SQL_EVENT_INSERT_32: &str = include_str!("../../queries/store/event_insert_32.sql");
const SQL_EVENT_NEXT_ID: &str = include_str!("../../queries/store/event_next_id.sql");
const SQL_OCCURRENCE_INSERT: &str = include_str!("../../queries/store/occurrence_insert.sql");
const SQL_OCCURRENCE_INSERT_32: &str = include_str!("../../queries/store/occurrence_insert_32.sql");
const SQL_DATA_VERSION: &str = include_str!("../../queries/store/data_version.sql");
const SQL_POSITION_SAVE: &str = include_str!("../../queries/store/position_save.sql");
const SQL_OBJECT_SEEN: &str = include_str!("../../queries/store/object_seen.sql");
const SQL_VERSION_LAST: &str = include_str!("../../queries/store/version_last.sql");
const SQL_VERSION_INSERT: &str = include_str!("../../queries/store/version_insert.sql");
const SQL_COUNTS_ADD: &str = include_str!("../../queries/store/counts_add.sql");
const SQL_RELATION_INSERT: &str = include_str!("../../queries/store/relation_insert.sql");
const SQL_OBJECT_DELETED: &str = include_str!("../../queries/store/object_deleted.sql");
const SQL_OBJECTS_LIVE: &str = include_str!("../../queries/store/objects_live_of_kind.sql");
const SQL_TYPE_CHANGE_INSERT: &str = include_str!("../../queries/store/type_change_insert.sql");
const SQL_POSITION_DELETE: &str = include_str!("../../queries/store/position_delete.sql");
const SQL_SPEC_DOC_FIND: &str = include_str!("../../queries/store/spec_doc_find.sql");
const SQL_SPEC_DOC_SAVE: &str = include_str!("../../queries/store/spec_doc_save.sql");
const SQL_SPEC_DOC_DELETE: &str = include_str!("../../queries/store/spec_doc_delete.sql");

// Cache bounds: enough for the hot set of a busy cluster, small enough that
// the recorder's memory does not grow with the number of live Events.
const MAX_CACHED_STRINGS: usize = 50_000;
const MAX_CACHED_OBJECTS: usize = 20_000;
const MAX_CACHED_EVENTS: usize = 50_000;

type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// Every statement the writer runs, kept prepared (see `prepared`): those
/// every stored Event runs (and its deletion at the TTL), then those of
/// object history and watch positions.
struct Hot<'c> {
    string_find: Lazy<'c>,
    string_insert: Lazy<'c>,
    object_find: Lazy<'c>,
    object_insert: Lazy<'c>,
    event_find: Lazy<'c>,
    event_find_unnamed: Lazy<'c>,
    event_newest_name: Lazy<'c>,
    event_insert: Lazy<'c>,
    event_insert_32: Lazy<'c>,
    event_next_id: Lazy<'c>,
    event_advance: Lazy<'c>,
    event_deleted: Lazy<'c>,
    occurrence_insert: Lazy<'c>,
    occurrence_insert_32: Lazy<'c>,
    position_save: Lazy<'c>,
    position_delete: Lazy<'c>,
    object_seen: Lazy<'c>,
    object_deleted: Lazy<'c>,
    objects_live: Lazy<'c>,
    version_last: Lazy<'c>,
    version_insert: Lazy<'c>,
    counts_add: Lazy<'c>,
    relation_insert: Lazy<'c>,
    type_change_insert: Lazy<'c>,
    spec_doc_find: Lazy<'c>,
    spec_doc_save: Lazy<'c>,
    spec_doc_delete: Lazy<'c>,
}

impl Hot<'_> {
    fn new() -> Self {
        Hot {
            string_find: Lazy::new(SQL_STRING_FIND),
            string_insert: Lazy::new(SQL_STRING_INSERT),
            object_find: Lazy::new(SQL_OBJECT_FIND),
            object_insert: Lazy::new(SQL_OBJECT_INSERT),
            event_find: Lazy::new(SQL_EVENT_FIND),
            event_find_unnamed: Lazy::new(SQL_EVENT_FIND_UNNAMED),
            event_newest_name: Lazy::new(SQL_EVENT_NEWEST_NAME),
            event_insert: Lazy::new(SQL_EVENT_INSERT),
            event_insert_32: Lazy::new(SQL_EVENT_INSERT_32),
            event_next_id: Lazy::new(SQL_EVENT_NEXT_ID),
            event_advance: Lazy::new(SQL_EVENT_ADVANCE),
            event_deleted: Lazy::new(SQL_EVENT_DELETED),
            occurrence_insert: Lazy::new(SQL_OCCURRENCE_INSERT),
            occurrence_insert_32: Lazy::new(SQL_OCCURRENCE_INSERT_32),
            position_save: Lazy::new(SQL_POSITION_SAVE),
            position_delete: Lazy::new(SQL_POSITION_DELETE),
            object_seen: Lazy::new(SQL_OBJECT_SEEN),
            object_deleted: Lazy::new(SQL_OBJECT_DELETED),
            objects_live: Lazy::new(SQL_OBJECTS_LIVE),
            version_last: Lazy::new(SQL_VERSION_LAST),
            version_insert: Lazy::new(SQL_VERSION_INSERT),
            counts_add: Lazy::new(SQL_COUNTS_ADD),
            relation_insert: Lazy::new(SQL_RELATION_INSERT),
            type_change_insert: Lazy::new(SQL_TYPE_CHANGE_INSERT),
            spec_doc_find: Lazy::new(SQL_SPEC_DOC_FIND),
            spec_doc_save: Lazy::new(SQL_SPEC_DOC_SAVE),
            spec_doc_delete: Lazy::new(SQL_SPEC_DOC_DELETE),
        }
    }
}

self_cell::self_cell!(
    /// The recording, and the statements prepared on its connection.
    struct Db {
        owner: Recording,
        #[covariant]
        dependent: Hot,
    }
);

#[derive(Debug, Clone, Copy)]
struct EventState {
    id: i64,
    count: i64,
    last: i64,
}

/// A stored Event found by its name.
struct StoredEvent {
    uid: UidKey,
    state: EventState,
    object: i64,
    reason: i64,
}

/// What one [`Writer::apply`] stored.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Applied {
    /// Occurrence rows written.
    pub rows: u64,
    /// Occurrences those rows stand for (a count jump of 4 is 1 row, 4 occurrences).
    pub occurrences: u64,
    /// Object versions written, and objects found deleted by a relist.
    pub versions: u64,
}

/// The single writer of one cluster's data into one recording. Not `Send`:
/// its statements borrow its connection, so it is made on the thread that writes.
pub struct Writer {
    db: Db,
    cluster: i64,
    strings: FastMap<String, i64>,
    /// Object references by a hash of everything but the field path; the
    /// reference is kept to tell a collision from a hit.
    objects: FastMap<u64, (ObjectRef, i64)>,
    events: FastMap<UidKey, EventState>,
    /// Live watched objects by uid: what their last version was (see `history`).
    tracked: HashMap<String, history::Tracked>,
    counters: history::Counters,
    /// Objects updated this minute, and the field owners of the hot ones.
    contests: HashMap<i64, history::Contest>,
    /// The greatest integer Event name stored, read once per batch (`None`:
    /// not yet; `i64::MIN`: there is none). See [`Writer::surely_new`].
    newest_name: Option<i64>,
    /// New Events and occurrences of this batch not inserted yet (see `held`).
    held: Held,
    /// `PRAGMA data_version` when this writer last held the write lock: another
    /// value means another connection wrote since, and the caches may be stale.
    data_version: Option<i64>,
}

/// How an Event is keyed: its uid; imports may lack one, and then the
/// namespace/name/first time identifies the object well enough.
fn event_key(o: &EventObservation) -> UidKey {
    if o.uid.is_empty() {
        uid_key(&format!("{}/{}/{}", o.namespace, o.name, o.first))
    } else {
        uid_key(&o.uid)
    }
}

/// The occurrences an observation adds to a stored (count, last), and when the
/// first of them happened: one more happened at the new `last` (or within the
/// interval an imported age leaves open); a jump, somewhere after the previous
/// observation.
fn since(count: i64, last: i64, o: &EventObservation) -> (i64, i64) {
    let n = o.count - count;
    let at = o.last_from.unwrap_or(o.last);
    (n, if n == 1 { at } else { last.min(at) })
}

impl Writer {
    pub fn new(recording: Recording, cluster: i64) -> Writer {
        // NB: rusqlite keeps 16 cached statements by default; object history,
        // spec documents, sessions and retention use more than that, and an
        // evicted statement is prepared again on its next use (7 % of the
        // recorder's CPU in a profile of the whole-cluster benchmark).
        recording.conn.set_prepared_statement_cache_capacity(64);
        // NB: SQLite built with STAT4 (rusqlite's bundled build) marks some
        // statements to be prepared again whenever their bound values change,
        // in case a better plan exists for them: import's candidate lookup
        // (nine joins) spent 40 % of a JSON Lines import planning itself
        // again at every Event. The stability guarantee keeps one plan per
        // statement; no plan of this schema depends on the values.
        let _ = recording
            .conn
            .set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true);
        Writer {
            db: Db::new(recording, |_| Hot::new()),
            cluster,
            strings: FastMap::default(),
            objects: FastMap::default(),
            events: FastMap::default(),
            tracked: HashMap::new(),
            counters: history::Counters::new(),
            contests: HashMap::new(),
            newest_name: None,
            held: Held::default(),
            data_version: None,
        }
    }

    pub fn connection(&self) -> &Connection {
        &self.db.borrow_owner().conn
    }

    /// The recording written, to read it back.
    pub fn recording(&self) -> &Recording {
        self.db.borrow_owner()
    }

    pub fn cluster(&self) -> i64 {
        self.cluster
    }

    fn err(&self, what: &'static str) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
        self.recording().q(what)
    }

    /// Runs `f` with the hot statements and the connection they were prepared on.
    fn hot<T>(
        &mut self,
        what: &'static str,
        f: impl for<'c> FnOnce(&'c Connection, &mut Hot<'c>) -> rusqlite::Result<T>,
    ) -> Result<T, StoreError> {
        let done = self
            .db
            .with_dependent_mut(|recording, hot| f(&recording.conn, hot));
        done.map_err(self.err(what))
    }

    /// Starts a batch: one transaction holding the recording's write lock,
    /// which lands whole on [`Batch::commit`] and is rolled back when the
    /// batch is dropped uncommitted.
    pub fn begin(&mut self) -> Result<Batch<'_>, StoreError> {
        self.connection()
            .execute_batch("BEGIN IMMEDIATE")
            .map_err(self.err("begin"))?;
        let batch = Batch {
            writer: self,
            committed: false,
        };
        // NB: an import may have stored Events of this cluster since this
        // writer's last batch; caches that predate it could store a repeat
        // as new, or move an Event's count back.
        let version = batch
            .connection()
            .query_row(SQL_DATA_VERSION, [], |row| row.get(0))
            .map_err(batch.err("data version"))?;
        if batch.data_version.is_some_and(|seen| seen != version) {
            batch.writer.forget();
        }
        batch.writer.data_version = Some(version);
        Ok(batch)
    }

    /// Runs `f`, which deletes rows (retention) in transactions of its own on
    /// the writer's connection, then drops the caches, which may name rows
    /// `f` deleted: whether it succeeded or not. No batch is open meanwhile
    /// (a batch borrows the writer).
    pub fn delete_with<T>(
        &mut self,
        f: impl FnOnce(&Connection, &Path) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let recording = self.recording();
        let done = f(&recording.conn, &recording.path);
        self.forget();
        done
    }

    /// Drops the caches.
    fn forget(&mut self) {
        self.strings.clear();
        self.objects.clear();
        self.events.clear();
        self.tracked.clear();
        self.counters.clear();
        self.contests.clear();
        self.newest_name = None;
        self.held.clear();
    }

    /// Whether no Event can be stored under `name` yet, so that looking it up
    /// can be skipped: its integer is greater than every integer name stored.
    /// client-go names rise with time, so most new Events are. Known because
    /// the writer only writes inside a batch, which holds the write lock.
    fn surely_new(&mut self, name: &rusqlite::types::Value) -> Result<bool, StoreError> {
        let rusqlite::types::Value::Integer(name) = name else {
            return Ok(false);
        };
        let newest = match self.newest_name {
            Some(newest) => newest,
            None => {
                let stored = self.hot("newest event name", |conn, hot| {
                    let mut rows = hot.event_newest_name.on(conn)?.query(&[])?;
                    rows.next()?.map(|row| row.get(0)).transpose()
                })?;
                *self.newest_name.insert(stored.unwrap_or(i64::MIN))
            }
        };
        Ok(*name > newest)
    }

    /// The id of an interned string, adding it when new.
    fn intern(&mut self, s: &str) -> Result<i64, StoreError> {
        if let Some(id) = self.strings.get(s) {
            return Ok(*id);
        }
        let h = fnv1a(s);
        let found = self.hot("string lookup", |conn, hot| {
            let mut rows = hot.string_find.on(conn)?.query(named_params! {":h": h})?;
            while let Some(row) = rows.next()? {
                // Hashes of two texts may collide: the text decides.
                if row.get_ref(1)?.as_str().is_ok_and(|text| text == s) {
                    return row.get(0).map(Some);
                }
            }
            Ok(None)
        })?;
        let id = match found {
            Some(id) => id,
            None => self.hot("string insert", |conn, hot| {
                hot.string_insert
                    .on(conn)?
                    .execute(named_params! {":h": h, ":s": s})?;
                Ok(conn.last_insert_rowid())
            })?,
        };
        if self.strings.len() >= MAX_CACHED_STRINGS {
            self.strings.clear();
        }
        self.strings.insert(s.to_string(), id);
        Ok(id)
    }

    /// The id of an object reference, adding it when new.
    fn object(&mut self, r: &ObjectRef) -> Result<i64, StoreError> {
        // The field path belongs to the Event, not the object.
        let same = |a: &ObjectRef| {
            a.uid == r.uid
                && a.name == r.name
                && a.namespace == r.namespace
                && a.kind == r.kind
                && a.api_version == r.api_version
        };
        let hash = self.objects.hasher().hash_one((
            &r.api_version,
            &r.kind,
            &r.namespace,
            &r.name,
            &r.uid,
        ));
        if let Some((cached, id)) = self.objects.get(&hash)
            && same(cached)
        {
            return Ok(*id);
        }
        let kind = self.intern(&r.kind)?;
        let namespace = self.intern(&r.namespace)?;
        let name = self.intern(&r.name)?;
        let api_version = self.intern(&r.api_version)?;
        let cluster = self.cluster;
        let found = self.hot("object lookup", |conn, hot| {
            let mut rows = hot.object_find.on(conn)?.query(named_params! {
                ":cluster": cluster, ":kind": kind, ":namespace": namespace,
                ":name": name, ":uid": r.uid,
            })?;
            rows.next()?.map(|row| row.get(0)).transpose()
        })?;
        let id = match found {
            Some(id) => id,
            None => self.hot("object insert", |conn, hot| {
                hot.object_insert.on(conn)?.execute(named_params! {
                    ":cluster": cluster, ":kind": kind, ":namespace": namespace,
                    ":name": name, ":uid": r.uid, ":api_version": api_version,
                })?;
                Ok(conn.last_insert_rowid())
            })?,
        };
        if self.objects.len() >= MAX_CACHED_OBJECTS {
            self.objects.clear();
        }
        let key = ObjectRef {
            field_path: String::new(),
            ..r.clone()
        };
        self.objects.insert(hash, (key, id));
        Ok(id)
    }

    /// The stored Events of this (compacted) name in this namespace.
    fn events_named(
        &mut self,
        name: &rusqlite::types::Value,
        namespace: i64,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        self.events_found(Some(name), None, namespace)
    }

    /// The stored Events without a name about `object` in `namespace`.
    fn events_unnamed(
        &mut self,
        object: i64,
        namespace: i64,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        self.events_found(None, Some(object), namespace)
    }

    /// [`Self::events_named`] (a name) or [`Self::events_unnamed`] (an object).
    fn events_found(
        &mut self,
        name: Option<&rusqlite::types::Value>,
        object: Option<i64>,
        namespace: i64,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        self.flush_events()?;
        let cluster = self.cluster;
        self.hot("event lookup", |conn, hot| {
            let mut rows = match (name, object) {
                (Some(name), _) => hot.event_find.on(conn)?.query(
                    named_params! {":name": name, ":namespace": namespace, ":cluster": cluster},
                )?,
                (None, object) => hot.event_find_unnamed.on(conn)?.query(named_params! {
                    ":object": object, ":name": "", ":namespace": namespace, ":cluster": cluster,
                })?,
            };
            let mut stored = Vec::new();
            // NB: columns by position (id, uid, count, last, object_id,
            // reason), unlike the readers: this is the ingest path, and a get
            // by name searches the column names at every call.
            while let Some(row) = rows.next()? {
                stored.push(StoredEvent {
                    uid: row.get(1)?,
                    state: EventState {
                        id: row.get(0)?,
                        count: row.get(2)?,
                        last: row.get(3)?,
                    },
                    object: row.get(4)?,
                    reason: row.get(5)?,
                });
            }
            Ok(stored)
        })
    }

    fn remember(&mut self, uid: UidKey, state: EventState) {
        if self.events.len() >= MAX_CACHED_EVENTS {
            self.events.clear();
        }
        self.events.insert(uid, state);
    }

    fn insert_occurrence(
        &mut self,
        event: i64,
        count: i64,
        n: i64,
        first: i64,
        last: i64,
        message: &str,
    ) -> Result<u64, StoreError> {
        let message = self.intern(message)?;
        // Never stored already: `count` is above the highest stored (the
        // caches are this batch's, see `begin`), so it counts as written.
        self.hold_occurrence([event, count, n, first, last, message])?;
        Ok(1)
    }

    /// Stores whatever a watch saw.
    fn apply_change(&mut self, change: &Change) -> Result<Applied, StoreError> {
        match change {
            Change::Event(e) => self.apply(e),
            Change::Object(o) => self.apply_object(o),
            Change::Listed(l) => self.apply_listed(l),
            Change::Type(t) => self.apply_type_change(t),
        }
    }

    /// Stores one observed Event change. Idempotent: applying the same observation
    /// twice stores nothing the second time.
    fn apply(&mut self, change: &EventChange) -> Result<Applied, StoreError> {
        match change {
            EventChange::Upsert(obs) => self.apply_observation(obs, false),
            EventChange::Deleted { event, at } => {
                let key = event_key(event);
                self.events.remove(&key);
                let namespace = self.intern(&event.namespace)?;
                let name = compact_event_name(&event.name, &event.involved.name);
                let cluster = self.cluster;
                self.flush_events()?;
                self.hot("event deletion", |conn, hot| {
                    hot.event_deleted.on(conn)?.execute(named_params! {
                        ":at": at, ":name": name, ":namespace": namespace,
                        ":uid": key, ":cluster": cluster,
                    })
                })?;
                Ok(Applied::default())
            }
        }
    }

    /// `new`: the caller knows no Event of this uid is stored (see
    /// [`Batch::apply_new`]).
    fn apply_observation(
        &mut self,
        o: &EventObservation,
        new: bool,
    ) -> Result<Applied, StoreError> {
        let key = event_key(o);
        // NB: a cache miss looks the Event up by name (an index ordered by time,
        // see migration 4) and, when its uid is not among those stored, inserts it.
        let state = match self.events.get(&key).copied() {
            Some(state) => state,
            None => {
                let namespace = self.intern(&o.namespace)?;
                let name = compact_event_name(&o.name, &o.involved.name);
                let unnamed = matches!(&name, rusqlite::types::Value::Text(t) if t.is_empty());
                let stored = if self.surely_new(&name)? {
                    Vec::new()
                } else if unnamed && new && o.count <= 1 {
                    // NB: what the lookup below finds is this Event, or the
                    // one it succeeds, which only a count above 1 needs; it
                    // reads every Event of the object, which made a table of
                    // many Events per Pod quadratic.
                    Vec::new()
                } else if unnamed {
                    // NB: Events imported from text have no name: those that
                    // share it are every such Event of the namespace. Only
                    // this object's can be this one (or its predecessor).
                    let object = self.object(&o.involved)?;
                    self.events_unnamed(object, namespace)?
                } else {
                    self.events_named(&name, namespace)?
                };
                match stored.iter().find(|e| e.uid == key) {
                    Some(e) => e.state,
                    None => return self.insert_new(o, key, namespace, name, &stored),
                }
            }
        };
        if o.count <= state.count {
            // Seen already (relist, replay, restart) or a heartbeat that changed no count.
            self.remember(key, state);
            return Ok(Applied::default());
        }
        let (n, first) = since(state.count, state.last, o);
        let rows = self.insert_occurrence(state.id, o.count, n, first, o.last, &o.message)?;
        if let Some(held) = self.held.event_mut(state.id) {
            (held.count, held.last) = (o.count, o.last);
        } else {
            self.hot("event update", |conn, hot| {
                hot.event_advance
                    .on(conn)?
                    .execute(named_params! {":count": o.count, ":last": o.last, ":id": state.id})
            })?;
        }
        self.remember(
            key,
            EventState {
                id: state.id,
                count: o.count,
                last: o.last,
            },
        );
        Ok(Applied {
            rows,
            occurrences: if rows > 0 { n as u64 } else { 0 },
            versions: 0,
        })
    }

    /// Inserts an Event seen for the first time, with its first occurrence row.
    /// `same_name`: the Events already stored under its name.
    fn insert_new(
        &mut self,
        o: &EventObservation,
        key: UidKey,
        namespace: i64,
        name: rusqlite::types::Value,
        same_name: &[StoredEvent],
    ) -> Result<Applied, StoreError> {
        let object = self.object(&o.involved)?;
        let related = match &o.related {
            Some(r) => Some(self.object(r)?),
            None => None,
        };
        let reason = self.intern(&o.reason)?;
        let field_path = self.intern(&o.involved.field_path)?;
        let type_ = self.intern(&o.type_)?;
        let action = self.intern(&o.action)?;
        let controller = self.intern(&o.reporting_controller)?;
        let instance = self.intern(&o.reporting_instance)?;
        let host = self.intern(&o.source_host)?;

        // NB: client-go re-creates an Event whose update got 404 (its TTL ran out)
        // under the same name with the next count and a new uid. The occurrences
        // its predecessor already stored must not be counted again. An Event
        // with no name (kubectl text) has no such predecessor: "the same name"
        // is then every such Event of the object, and a kubelet's three `Failed`
        // Events of one Pod (ErrImagePull ×4, ImagePullBackOff ×42, …) are
        // three Events (regression: ImagePullBackOff ×42 stored as 38
        // occurrences after ErrImagePull's 4, from a pasted `kubectl events`).
        let unnamed = matches!(&name, rusqlite::types::Value::Text(t) if t.is_empty());
        let predecessor = same_name
            .iter()
            .filter(|e| e.object == object && e.reason == reason)
            .max_by_key(|e| e.state.last)
            .filter(|_| o.count > 1 && !unnamed)
            .map(|e| (e.state.count, e.state.last));
        let (n, first) = match predecessor {
            Some((count, last)) if count < o.count => since(count, last, o),
            _ => (o.count, o.first),
        };

        if let (Some(newest), rusqlite::types::Value::Integer(name)) =
            (&mut self.newest_name, &name)
        {
            *newest = (*newest).max(*name);
        }
        let id = self.next_event_id()?;
        self.hold_event(NewEvent {
            id,
            uid: key.clone(),
            namespace,
            name,
            object,
            field_path,
            reason,
            type_,
            action,
            controller,
            instance,
            host,
            related,
            last: o.last,
            count: o.count,
        })?;
        let rows = self.insert_occurrence(id, o.count, n, first, o.last, &o.message)?;
        self.remember(
            key,
            EventState {
                id,
                count: o.count,
                last: o.last,
            },
        );
        Ok(Applied {
            rows,
            occurrences: n as u64,
            versions: 0,
        })
    }

    /// Records where the watch of `resource` stands, in the current batch.
    fn save_position(&mut self, resource: &str, rv: &str, now: i64) -> Result<(), StoreError> {
        let cluster = self.cluster;
        self.hot("watch position", |conn, hot| {
            hot.position_save.on(conn)?.execute(named_params! {
                ":cluster": cluster, ":resource": resource, ":rv": rv, ":now": now,
            })
        })?;
        Ok(())
    }
}

/// One open batch of a [`Writer`]: a transaction holding the recording's
/// write lock. It reads as the writer ([`Deref`]); it writes only through
/// its own methods.
#[must_use = "a batch dropped without commit() is rolled back"]
pub struct Batch<'w> {
    writer: &'w mut Writer,
    committed: bool,
}

impl Batch<'_> {
    /// Stores whatever a watch saw.
    pub fn apply_change(&mut self, change: &Change) -> Result<Applied, StoreError> {
        self.writer.apply_change(change)
    }

    /// Stores one observed Event change. Idempotent: applying the same observation
    /// twice stores nothing the second time.
    pub fn apply(&mut self, change: &EventChange) -> Result<Applied, StoreError> {
        self.writer.apply(change)
    }

    /// [`Batch::apply`] of an Event the caller knows is not stored under its
    /// uid (an import that looked it up already): an Event without a name
    /// and with a count of 1 is then stored without reading the other
    /// Events of its object. Anything else is stored as by `apply`.
    pub fn apply_new(&mut self, o: &EventObservation) -> Result<Applied, StoreError> {
        self.writer.apply_observation(o, true)
    }

    /// Stores one object observation (from an audit log, with its writer).
    pub fn apply_object(&mut self, change: &ObjectChange) -> Result<Applied, StoreError> {
        self.writer.apply_object(change)
    }

    /// See [`Writer::merge_writer`].
    pub fn merge_writer(&mut self, uid: &str, rv: &str, by: &str) -> Result<bool, StoreError> {
        self.writer.merge_writer(uid, rv, by)
    }

    /// Records where the watch of `resource` stands once this batch lands.
    pub fn save_position(&mut self, resource: &str, rv: &str, now: i64) -> Result<(), StoreError> {
        self.writer.save_position(resource, rv, now)
    }

    /// Inserts the rows held back so far, inside the batch: what is stored
    /// is then all in the file, and [`Batch::forget`] loses nothing.
    pub fn flush(&mut self) -> Result<(), StoreError> {
        self.writer.flush_held()?;
        self.writer.flush_counters()
    }

    /// Drops the caches, within the batch: rows they may name were deleted
    /// by hand (an import replacing an Event it read from text). The rows
    /// held back are inserted first, so nothing stored is lost.
    pub fn forget(&mut self) -> Result<(), StoreError> {
        self.flush()?;
        self.writer.forget();
        Ok(())
    }

    /// Stores the batch: the held rows, the counters, then COMMIT. On an
    /// error nothing of the batch is stored (see [`Drop`]).
    pub fn commit(mut self) -> Result<(), StoreError> {
        self.flush()?;
        self.connection()
            .execute_batch("COMMIT")
            .map_err(self.err("commit"))?;
        self.committed = true;
        // Once the write lock is let go, another writer (an import) may store Events.
        self.writer.newest_name = None;
        self.writer.held.clear();
        Ok(())
    }
}

impl Deref for Batch<'_> {
    type Target = Writer;

    fn deref(&self) -> &Writer {
        self.writer
    }
}

impl Drop for Batch<'_> {
    /// Abandons an uncommitted batch. The caches may name rows that were
    /// never committed, so they are dropped too.
    fn drop(&mut self) {
        if !self.committed {
            // NB: after a failed COMMIT SQLite may have rolled back already;
            // the error of a second ROLLBACK says only that.
            let _ = self.connection().execute_batch("ROLLBACK");
            self.writer.forget();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::testing::recording as writer;
    use crate::store::{Mode, Recording};

    fn event(uid: &str, count: i64, last: i64) -> EventChange {
        EventChange::Upsert(Box::new(EventObservation {
            uid: uid.into(),
            namespace: "ns".into(),
            name: "web.123".into(),
            involved: ObjectRef {
                kind: "Pod".into(),
                namespace: "ns".into(),
                name: "web".into(),
                uid: "pod-uid".into(),
                api_version: "v1".into(),
                ..Default::default()
            },
            reason: "BackOff".into(),
            type_: "Warning".into(),
            message: "Back-off restarting failed container".into(),
            first: 1_000,
            last,
            count,
            ..Default::default()
        }))
    }

    /// The one value `sql` selects.
    fn one<T: rusqlite::types::FromSql>(w: &Writer, sql: &str) -> T {
        w.connection().query_row(sql, [], |r| r.get(0)).unwrap()
    }

    /// Every row `sql` selects, mapped by `f`.
    fn all<T>(
        w: &Writer,
        sql: &str,
        f: impl FnMut(&rusqlite::Row) -> rusqlite::Result<T>,
    ) -> Vec<T> {
        let mut st = w.connection().prepare(sql).unwrap();
        st.query_map([], f).unwrap().map(Result::unwrap).collect()
    }

    fn rows(w: &Writer) -> Vec<(i64, i64, i64, i64)> {
        all(
            w,
            "SELECT count, n, first, last FROM occurrences ORDER BY count",
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
    }

    #[test]
    fn each_count_is_stored_once() {
        let (_d, mut w) = writer();
        let mut b = w.begin().unwrap();
        for (count, last) in [(1, 1_000), (2, 2_000), (2, 2_000), (3, 3_000), (1, 1_000)] {
            b.apply(&event("u1", count, last)).unwrap();
        }
        b.commit().unwrap();
        assert_eq!(
            rows(&w),
            vec![
                (1, 1, 1_000, 1_000),
                (2, 1, 2_000, 2_000),
                (3, 1, 3_000, 3_000)
            ]
        );
    }

    #[test]
    fn a_count_jump_is_one_honest_row() {
        let (_d, mut w) = writer();
        let mut b = w.begin().unwrap();
        b.apply(&event("u1", 3, 3_000)).unwrap();
        let applied = b.apply(&event("u1", 7, 9_000)).unwrap();
        b.commit().unwrap();
        assert_eq!(
            applied,
            Applied {
                rows: 1,
                occurrences: 4,
                versions: 0,
            }
        );
        assert_eq!(rows(&w), vec![(3, 3, 1_000, 3_000), (7, 4, 3_000, 9_000)]);
    }

    #[test]
    fn restart_with_empty_caches_stores_nothing_twice() {
        let (_d, mut w) = writer();
        let mut b = w.begin().unwrap();
        b.apply(&event("u1", 2, 2_000)).unwrap();
        b.commit().unwrap();
        let mut restarted = Writer::new(
            Recording::open(w.recording().path(), Mode::Write).unwrap(),
            w.cluster,
        );
        let mut b = restarted.begin().unwrap();
        assert_eq!(b.apply(&event("u1", 2, 2_000)).unwrap(), Applied::default());
        b.commit().unwrap();
        assert_eq!(rows(&w).len(), 1);
    }

    fn named(uid: &str, name: &str, count: i64) -> EventChange {
        let EventChange::Upsert(mut o) = event(uid, count, count * 1_000) else {
            unreachable!()
        };
        o.name = name.into();
        EventChange::Upsert(o)
    }

    #[test]
    fn skipping_the_lookup_of_names_newer_than_any_stored_stores_nothing_twice() {
        let (_d, mut w) = writer();
        let mut b = w.begin().unwrap();
        b.apply(&named("u1", "web.300", 1)).unwrap();
        b.commit().unwrap();
        let mut b = w.begin().unwrap();
        // Newer than web.300: stored without a lookup.
        assert_eq!(b.apply(&named("u2", "web.400", 1)).unwrap().rows, 1);
        // Older names, and the newest itself, are looked up: a relist after the
        // caches went (as when they fill up) stores nothing again.
        b.writer.events.clear();
        for (uid, name) in [("u1", "web.300"), ("u2", "web.400")] {
            assert_eq!(b.apply(&named(uid, name, 1)).unwrap(), Applied::default());
        }
        // Text names are always looked up.
        assert_eq!(b.apply(&named("u3", "custom-name", 1)).unwrap().rows, 1);
        b.writer.events.clear();
        assert_eq!(
            b.apply(&named("u3", "custom-name", 1)).unwrap(),
            Applied::default()
        );
        b.commit().unwrap();
        // A second writer (another process) reads the newest name afresh.
        let path = w.recording().path().to_path_buf();
        let rec = Recording::open(&path, Mode::Write).unwrap();
        let mut other = Writer::new(rec, w.cluster);
        let mut b = other.begin().unwrap();
        assert_eq!(b.apply(&named("u2", "web.400", 2)).unwrap().rows, 1);
        assert_eq!(
            b.apply(&named("u1", "web.300", 1)).unwrap(),
            Applied::default()
        );
        b.commit().unwrap();
        assert_eq!(rows(&w).len(), 4);
    }

    /// Many Events, each repeated; whether the caches go after it (a lookup
    /// by name inside a batch then sees the held rows). The rows are the same
    /// whether they are held and inserted many at once or one by one.
    fn many() -> impl Iterator<Item = (EventChange, bool)> {
        (1..=3).flat_map(|round| {
            (0..100).map(move |i| {
                let name = format!("web.{:x}", 0x1000 + i);
                (named(&format!("u{i}"), &name, round), i == 50 && round == 2)
            })
        })
    }

    #[test]
    fn rows_held_within_a_batch_land_as_rows_stored_one_by_one() {
        let (_d, mut one_by_one) = writer();
        for (change, forget) in many() {
            let mut own = one_by_one.begin().unwrap();
            own.apply(&change).unwrap();
            own.commit().unwrap();
            if forget {
                one_by_one.events.clear();
            }
        }
        let want = many_rows(&one_by_one);
        assert_eq!(want.len(), 300);
        assert_eq!(want[299], (100, 3, 3_000, 3, 1));

        let (_d, mut held) = writer();
        let mut b = held.begin().unwrap();
        for (change, forget) in many() {
            b.apply(&change).unwrap();
            if forget {
                b.writer.events.clear();
            }
        }
        // Nothing is read back before the commit but what the writer needs.
        assert!(many_rows(&b).len() < 300);
        b.commit().unwrap();
        assert_eq!(many_rows(&held), want);
    }

    fn many_rows(w: &Writer) -> Vec<(i64, i64, i64, i64, i64)> {
        all(
            w,
            "SELECT e.id, e.count, e.last, o.count, o.n FROM events e
             JOIN occurrences o ON o.event_id = e.id ORDER BY e.id, o.count",
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
        )
    }

    #[test]
    fn a_rolled_back_batch_leaves_no_held_row_behind() {
        let (_d, mut w) = writer();
        let mut b = w.begin().unwrap();
        b.apply(&named("u1", "web.300", 1)).unwrap();
        drop(b);
        let mut b = w.begin().unwrap();
        b.apply(&named("u2", "web.400", 1)).unwrap();
        b.commit().unwrap();
        assert_eq!(one::<i64>(&w, "SELECT COUNT(*) FROM events"), 1);
        assert_eq!(one::<i64>(&w, "SELECT COUNT(*) FROM occurrences"), 1);
        assert_eq!(one::<i64>(&w, "SELECT MAX(id) FROM events"), 1);
    }

    #[test]
    fn another_writer_between_batches_makes_the_caches_go() {
        let (dir, mut w) = writer();
        let mut b = w.begin().unwrap();
        b.apply(&named("u1", "web.300", 1)).unwrap();
        b.commit().unwrap();
        // An import of the same cluster stores two more occurrences.
        let path = dir.path().join("diag.db");
        let mut import = Writer::new(Recording::open(&path, Mode::Write).unwrap(), w.cluster());
        let mut b = import.begin().unwrap();
        b.apply(&named("u1", "web.300", 3)).unwrap();
        b.commit().unwrap();
        // The recorder's cache still says count 1: count 2 is stored already.
        let mut b = w.begin().unwrap();
        assert_eq!(
            b.apply(&named("u1", "web.300", 2)).unwrap(),
            Applied::default()
        );
        b.commit().unwrap();
        assert_eq!(one::<i64>(&w, "SELECT count FROM events"), 3);
        assert_eq!(one::<i64>(&w, "SELECT SUM(n) FROM occurrences"), 3);
    }

    #[test]
    fn recreated_after_404_counts_only_the_new_occurrences() {
        let (_d, mut w) = writer();
        let mut b = w.begin().unwrap();
        b.apply(&event("u1", 5, 5_000)).unwrap();
        let EventChange::Upsert(gone) = event("u1", 5, 5_000) else {
            unreachable!()
        };
        b.apply(&EventChange::Deleted {
            event: gone,
            at: 6_000,
        })
        .unwrap();
        b.commit().unwrap();
        let deleted: Option<i64> = one(&w, "SELECT deleted FROM events WHERE count = 5");
        assert_eq!(deleted, Some(6_000));
        let mut b = w.begin().unwrap();
        let applied = b.apply(&event("u2", 6, 7_000)).unwrap();
        b.commit().unwrap();
        assert_eq!(
            applied,
            Applied {
                rows: 1,
                occurrences: 1,
                versions: 0,
            }
        );
    }

    #[test]
    fn events_sharing_a_name_are_kept_apart_by_uid() {
        let (_d, mut w) = writer();
        // The same name about another object (the hex part of two names can
        // match), and a second uid of the same name: each counts on its own.
        let mut other = event("u2", 1, 2_000);
        if let EventChange::Upsert(o) = &mut other {
            o.involved.name = "db".into();
            o.name = "db.123".into();
        }
        let mut b = w.begin().unwrap();
        b.apply(&event("u1", 1, 1_000)).unwrap();
        assert_eq!(b.apply(&other).unwrap().occurrences, 1);
        b.forget().unwrap();
        assert_eq!(b.apply(&event("u1", 1, 1_000)).unwrap(), Applied::default());
        assert_eq!(b.apply(&other).unwrap(), Applied::default());
        assert_eq!(b.apply(&event("u1", 2, 3_000)).unwrap().occurrences, 1);
        b.commit().unwrap();
        let events: i64 = one(&w, "SELECT COUNT(*) FROM events");
        assert_eq!(events, 2);
    }

    /// Regression: migration 4 changed how a stored Event is found (by name,
    /// no longer by a uid index). An Event stored by schema 3 must still be
    /// found after the upgrade, not stored a second time.
    #[test]
    fn an_event_stored_before_migration_4_is_found_after_it() {
        use rusqlite::params;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v3.db");
        {
            let conn = Connection::open(&path).unwrap();
            for sql in [
                include_str!("../../queries/migrations/001_events.sql"),
                include_str!("../../queries/migrations/002_object_history.sql"),
                include_str!("../../queries/migrations/003_version_generations.sql"),
            ] {
                conn.execute_batch(sql).unwrap();
            }
            conn.execute_batch("PRAGMA user_version = 3").unwrap();
            conn.execute(
                "INSERT INTO clusters (id, uid, label, added) VALUES (1, 'cluster-uid', 'ctx', 0)",
                [],
            )
            .unwrap();
            let texts = [
                "ns",
                "Pod",
                "web",
                "v1",
                "BackOff",
                "",
                "Warning",
                "Back-off restarting failed container",
            ];
            for (i, text) in texts.iter().enumerate() {
                conn.execute(
                    "INSERT INTO strings (id, h, s) VALUES (?1, ?2, ?3)",
                    params![i as i64 + 1, crate::store::fnv1a(text), text],
                )
                .unwrap();
            }
            conn.execute_batch(
                "INSERT INTO objects (id, cluster_id, kind, namespace, name, uid, api_version)
                 VALUES (1, 1, 2, 1, 3, 'pod-uid', 4);
                 INSERT INTO events (id, cluster_id, uid, namespace, name, object_id, field_path, reason,
                                     type, action, controller, instance, host, last, count)
                 VALUES (1, 1, 'u1', 1, 291, 1, 6, 5, 7, 6, 6, 6, 6, 2000, 2);
                 INSERT INTO occurrences (event_id, count, n, first, last, message)
                 VALUES (1, 2, 2, 1000, 2000, 8);",
            )
            .unwrap();
        }
        let rec = Recording::open(&path, Mode::Write).unwrap();
        let cluster = rec
            .register_cluster("cluster-uid", "ctx", "https://x", 0)
            .unwrap();
        let mut w = Writer::new(rec, cluster);
        let mut b = w.begin().unwrap();
        assert_eq!(b.apply(&event("u1", 2, 2_000)).unwrap(), Applied::default());
        assert_eq!(b.apply(&event("u1", 3, 3_000)).unwrap().occurrences, 1);
        b.commit().unwrap();
        assert_eq!(rows(&w), vec![(2, 2, 1_000, 2_000), (3, 1, 3_000, 3_000)]);
    }

    #[test]
    fn a_new_event_seen_late_stands_for_all_its_count() {
        let (_d, mut w) = writer();
        let mut b = w.begin().unwrap();
        let applied = b.apply(&event("u1", 4, 4_000)).unwrap();
        b.commit().unwrap();
        assert_eq!(
            applied,
            Applied {
                rows: 1,
                occurrences: 4,
                versions: 0,
            }
        );
        assert_eq!(rows(&w), vec![(4, 4, 1_000, 4_000)]);
    }

    #[test]
    fn a_full_disk_is_reported_as_such_and_loses_nothing_committed() {
        let (_d, mut w) = writer();
        let mut b = w.begin().unwrap();
        b.apply(&event("kept", 1, 1_000)).unwrap();
        b.commit().unwrap();
        // SQLITE_FULL is what a full disk gives; a page cap provokes the same code.
        let pages: i64 = one(&w, "PRAGMA page_count");
        w.connection()
            .pragma_update(None, "max_page_count", pages)
            .unwrap();
        let mut b = w.begin().unwrap();
        let err = (0..10_000)
            .find_map(|i| {
                let mut e = event(&format!("u{i}"), 1, 1_000);
                if let EventChange::Upsert(o) = &mut e {
                    o.message = format!("{i} {}", "x".repeat(2_000));
                }
                b.apply(&e).err()
            })
            .expect("the capped database must fill up");
        assert!(matches!(err, StoreError::DiskFull { .. }), "{err:?}");
        assert!(err.to_string().contains("disk holding"), "{err}");
        drop(b);
        let kept: i64 = one(&w, "SELECT COUNT(*) FROM occurrences");
        assert_eq!(kept, 1);
    }

    #[test]
    fn strings_are_stored_once() {
        let (_d, mut w) = writer();
        let mut b = w.begin().unwrap();
        for i in 0..10 {
            b.apply(&event(&format!("u{i}"), 1, 1_000)).unwrap();
        }
        b.commit().unwrap();
        let n: i64 = one(
            &w,
            "SELECT COUNT(*) FROM strings WHERE s = 'Back-off restarting failed container'",
        );
        assert_eq!(n, 1);
    }
}
