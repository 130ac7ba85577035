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

    /// Deletes an Event and its occurrences (a text-only Event a richer import replaces).
    pub fn delete_event(&self, id: i64) -> Result<(), StoreError> {
        self.conn
            .execute(SQL_DELETE_OCCURRENCES, named_params! {":id": id})
            .map_err(self.q("import replace"))?;
        self.conn
            .execute(SQL_DELETE_EVENT, named_params! {":id": id})
            .map_err(self.q("import replace"))?;
        Ok(())
    }
}
