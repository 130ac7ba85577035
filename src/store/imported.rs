//! What `import` of kubectl text needs from the recording: the stored Events
//! a uid-less row may be, and the replacing of a text-only Event by a richer
//! import of it. The matching rule itself lives with the importer
//! (`commands::import`); see docs/schema.md.

use rusqlite::named_params;

use super::{Recording, StoreError, UidKey, uid_text};
use crate::units::fnv1a;

const SQL_CANDIDATES: &str = include_str!("../../queries/store/import_candidates.sql");
const SQL_DELETE_OCCURRENCES: &str =
    include_str!("../../queries/store/import_delete_occurrences.sql");
const SQL_DELETE_EVENT: &str = include_str!("../../queries/store/import_delete_event.sql");
const SQL_EVENTS_BEFORE: &str = include_str!("../../queries/store/import_events_before.sql");
const SQL_CLUSTER_EMPTY: &str = include_str!("../../queries/store/import_cluster_empty.sql");
const SQL_HAS_TEXT_EVENTS: &str = include_str!("../../queries/store/import_has_text_events.sql");

/// The uid prefix of Events imported from kubectl text: they had no uid, so
/// one is made up (see `commands::import`); real uids never take this form.
pub const TEXT_UID_PREFIX: &str = "kubectl-text:";

/// A stored Event on the object a text row is about, with that row's reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub id: i64,
    pub uid: String,
    pub namespace: String,
    /// The Event's full name (client-go names are stored compacted).
    pub name: String,
    pub controller: String,
    pub count: i64,
    pub last: i64,
    pub first: i64,
    /// Every message its occurrences were stored with.
    pub messages: Vec<String>,
}

impl Candidate {
    /// Known only from kubectl text: no uid of its own.
    pub fn from_text(&self) -> bool {
        self.uid.starts_with(TEXT_UID_PREFIX)
    }
}

impl Recording {
    /// The stored Events on kind/namespace/name (any object uid) with this reason.
    pub fn import_candidates(
        &self,
        cluster: i64,
        (kind, namespace, name): (&str, &str, &str),
        reason: &str,
    ) -> Result<Vec<Candidate>, StoreError> {
        let mut st = self
            .conn
            .prepare_cached(SQL_CANDIDATES)
            .map_err(self.q("import candidates"))?;
        let mut rows = st
            .query(named_params! {
                ":cluster": cluster, ":kind": kind, ":kind_h": fnv1a(kind),
                ":namespace": namespace, ":namespace_h": fnv1a(namespace),
                ":name": name, ":name_h": fnv1a(name), ":reason": reason,
            })
            .map_err(self.q("import candidates"))?;
        let mut found: Vec<Candidate> = Vec::new();
        while let Some(row) = rows.next().map_err(self.q("import candidates"))? {
            let read = || -> rusqlite::Result<Candidate> {
                let uid: UidKey = row.get("uid")?;
                let object_name: String = row.get("object_name")?;
                let name = match row.get::<_, rusqlite::types::Value>("name")? {
                    rusqlite::types::Value::Integer(hex) => format!("{object_name}.{hex:x}"),
                    rusqlite::types::Value::Text(t) => t,
                    _ => String::new(),
                };
                Ok(Candidate {
                    id: row.get("id")?,
                    uid: uid_text(&uid),
                    namespace: row.get("namespace")?,
                    name,
                    controller: row.get("controller")?,
                    count: row.get("count")?,
                    last: row.get("last")?,
                    first: row.get("first")?,
                    messages: vec![row.get("message")?],
                })
            };
            let c = read().map_err(self.q("import candidates"))?;
            match found.iter_mut().find(|f| f.id == c.id) {
                Some(f) => f.messages.extend(c.messages),
                None => found.push(c),
            }
        }
        Ok(found)
    }

    /// Deletes an Event and its occurrences (a text-only Event a richer
    /// import replaces); returns how many occurrences they stood for.
    pub fn delete_event(&self, id: i64) -> Result<u64, StoreError> {
        let mut st = self
            .conn
            .prepare_cached(SQL_DELETE_OCCURRENCES)
            .map_err(self.q("import replace"))?;
        let mut rows = st
            .query(named_params! {":id": id})
            .map_err(self.q("import replace"))?;
        let mut occurrences = 0u64;
        while let Some(row) = rows.next().map_err(self.q("import replace"))? {
            let n: i64 = row.get(0).map_err(self.q("import replace"))?;
            occurrences += u64::try_from(n).unwrap_or(0);
        }
        self.conn
            .prepare_cached(SQL_DELETE_EVENT)
            .and_then(|mut st| st.execute(named_params! {":id": id}))
            .map_err(self.q("import replace"))?;
        Ok(occurrences)
    }

    /// The highest Event id stored: those above it are stored from now on.
    pub fn events_before(&self) -> Result<i64, StoreError> {
        self.conn
            .query_row(SQL_EVENTS_BEFORE, [], |row| row.get(0))
            .map_err(self.q("import"))
    }

    /// Whether the cluster holds nothing yet.
    pub fn cluster_empty(&self, cluster: i64) -> Result<bool, StoreError> {
        self.conn
            .query_row(
                SQL_CLUSTER_EMPTY,
                named_params! {":cluster": cluster},
                |row| row.get(0),
            )
            .map_err(self.q("import"))
    }

    /// Whether the cluster holds an Event imported from kubectl text.
    pub fn has_text_events(&self, cluster: i64) -> Result<bool, StoreError> {
        // NB: ';' follows ':' in ASCII: the uids that begin with the prefix.
        let after = TEXT_UID_PREFIX.replace(':', ";");
        self.conn
            .query_row(
                SQL_HAS_TEXT_EVENTS,
                named_params! {":prefix": TEXT_UID_PREFIX, ":after": after, ":cluster": cluster},
                |row| row.get(0),
            )
            .map_err(self.q("import"))
    }
}
