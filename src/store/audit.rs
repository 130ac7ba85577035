//! What an audit log import stores beside versions and occurrences: the
//! entries taken (exactly once by `auditID`) and the writes the apiserver
//! refused. See docs/schema.md, "Imports of audit logs".

use rusqlite::{OptionalExtension, named_params};

use super::writer::Batch;
use super::{Recording, StoreError};
pub use crate::model::{Refusal, Touch, TouchWhy};

const SQL_AUDIT_SEEN: &str = include_str!("../../queries/store/audit_seen.sql");
const SQL_AUDIT_TAKEN: &str = include_str!("../../queries/store/audit_taken.sql");
const SQL_REFUSAL_INSERT: &str = include_str!("../../queries/store/refusal_insert.sql");
const SQL_EVER_RECORDED: &str = include_str!("../../queries/store/ever_recorded.sql");
const SQL_AUDIT_IMPORTED: &str = include_str!("../../queries/store/audit_imported.sql");
const SQL_RECORDED_AT: &str = include_str!("../../queries/store/recorded_at.sql");
const SQL_OBJECT_HAS_VERSIONS: &str = include_str!("../../queries/store/object_has_versions.sql");
const SQL_IMPORT_SPAN_INSERT: &str = include_str!("../../queries/store/import_span_insert.sql");
const SQL_IMPORT_SPANS_OF: &str = include_str!("../../queries/store/import_spans_of.sql");
const SQL_GAPS_DELETE_NOT_IMPORTED: &str =
    include_str!("../../queries/store/gaps_delete_not_imported.sql");
const SQL_GAP_INSERT: &str = include_str!("../../queries/store/gap_insert.sql");
const SQL_REFUSALS_OF: &str = include_str!("../../queries/store/refusals_of.sql");
const SQL_TOUCH_INSERT: &str = include_str!("../../queries/store/touch_insert.sql");
const SQL_TOUCH_RESOLVED: &str = include_str!("../../queries/store/touch_resolved.sql");
const SQL_TOUCHES_OF: &str = include_str!("../../queries/store/touches_of.sql");
const SQL_CLUSTERS_OF_UID: &str = include_str!("../../queries/store/clusters_of_uid.sql");

/// The complement of `spans` within [0, `now`]: the intervals no span covers.
pub fn uncovered(spans: &[(i64, i64)], now: i64) -> Vec<(i64, i64)> {
    let mut gaps = Vec::new();
    let mut covered_to = 0;
    let mut sorted = spans.to_vec();
    sorted.sort_unstable();
    for (start, finish) in sorted {
        if start > covered_to {
            gaps.push((covered_to, start));
        }
        covered_to = covered_to.max(finish);
    }
    if now > covered_to {
        gaps.push((covered_to, now));
    }
    gaps
}

impl Batch<'_> {
    /// Records that an audit log covered [`first`, `last`], and works the
    /// gaps between every import of this cluster out again: the time no
    /// imported log covers, up to `now`, is a `not-imported` gap.
    pub fn audit_covered(
        &mut self,
        source: &str,
        first: i64,
        last: i64,
        now: i64,
    ) -> Result<(), StoreError> {
        let cluster = self.cluster();
        let conn = self.connection();
        let q = |what| self.recording().q(what);
        conn.prepare_cached(SQL_IMPORT_SPAN_INSERT)
            .and_then(|mut st| {
                st.execute(named_params! {":cluster": cluster, ":source": source, ":start": first, ":finish": last})
            })
            .map_err(q("import span"))?;
        let spans: Vec<(i64, i64)> = conn
            .prepare_cached(SQL_IMPORT_SPANS_OF)
            .and_then(|mut st| {
                st.query_map(named_params! {":cluster": cluster}, |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })?
                .collect()
            })
            .map_err(q("import spans"))?;
        conn.prepare_cached(SQL_GAPS_DELETE_NOT_IMPORTED)
            .and_then(|mut st| st.execute(named_params! {":cluster": cluster}))
            .map_err(q("import gaps"))?;
        for (start, finish) in uncovered(&spans, now) {
            let detail = if start == 0 {
                "before the first imported audit log entry nothing is known"
            } else {
                "no imported audit log covers this time"
            };
            conn.prepare_cached(SQL_GAP_INSERT)
                .and_then(|mut st| {
                    st.execute(named_params! {
                        ":cluster": cluster, ":resource": "audit log", ":start": start,
                        ":finish": finish, ":reason": crate::model::GapReason::NotImported.as_str(),
                        ":detail": detail,
                    })
                })
                .map_err(q("import gap"))?;
        }
        Ok(())
    }

    /// Takes one audit entry: false when an import took it before.
    pub fn audit_take(&mut self, id: &str, at: i64) -> Result<bool, StoreError> {
        let cluster = self.cluster();
        let n = self
            .connection()
            .prepare_cached(SQL_AUDIT_SEEN)
            .and_then(|mut st| {
                st.execute(named_params! {":cluster": cluster, ":id": id, ":at": at})
            })
            .map_err(self.recording().q("audit entry"))?;
        Ok(n == 1)
    }

    /// Whether an import took this entry before (without taking it now).
    pub fn audit_taken(&self, id: &str) -> Result<bool, StoreError> {
        let cluster = self.cluster();
        self.connection()
            .prepare_cached(SQL_AUDIT_TAKEN)
            .and_then(|mut st| {
                st.query_row(named_params! {":cluster": cluster, ":id": id}, |r| r.get(0))
            })
            .map_err(self.recording().q("audit entry"))
    }

    pub fn refusal(&mut self, r: &Refusal) -> Result<(), StoreError> {
        let cluster = self.cluster();
        self.connection()
            .prepare_cached(SQL_REFUSAL_INSERT)
            .and_then(|mut st| {
                st.execute(named_params! {
                    ":cluster": cluster, ":at": r.at, ":verb": r.verb, ":user": r.user,
                    ":grp": r.group, ":resource": r.resource, ":subresource": r.subresource,
                    ":namespace": r.namespace, ":name": r.name, ":code": r.code,
                    ":reason": r.reason, ":message": r.message, ":refused_by": r.refused_by,
                })
            })
            .map_err(self.recording().q("refusal"))?;
        Ok(())
    }

    /// Keeps one touch under its auditID: false when it was kept before.
    pub fn touch(&mut self, id: &str, t: &Touch) -> Result<bool, StoreError> {
        let cluster = self.cluster();
        let n = self
            .connection()
            .prepare_cached(SQL_TOUCH_INSERT)
            .and_then(|mut st| {
                st.execute(named_params! {
                    ":cluster": cluster, ":id": id, ":at": t.at, ":verb": t.verb, ":user": t.user,
                    ":grp": t.group, ":resource": t.resource, ":subresource": t.subresource,
                    ":namespace": t.namespace, ":name": t.name, ":code": t.code,
                    ":detail": t.detail, ":why": t.why.code(),
                })
            })
            .map_err(self.recording().q("touch"))?;
        Ok(n == 1)
    }

    /// A write kept as a touch by an earlier import is now a version: its
    /// touch goes.
    pub fn touch_resolved(&mut self, id: &str) -> Result<(), StoreError> {
        let cluster = self.cluster();
        self.connection()
            .prepare_cached(SQL_TOUCH_RESOLVED)
            .and_then(|mut st| st.execute(named_params! {":cluster": cluster, ":id": id}))
            .map_err(self.recording().q("touch"))?;
        Ok(())
    }

    /// Whether any version of the object `uid` is stored.
    pub fn has_versions(&self, uid: &str) -> Result<bool, StoreError> {
        let cluster = self.cluster();
        self.connection()
            .prepare_cached(SQL_OBJECT_HAS_VERSIONS)
            .and_then(|mut st| {
                st.query_row(named_params! {":cluster": cluster, ":uid": uid}, |r| {
                    r.get(0)
                })
            })
            .map_err(self.recording().q("object versions"))
    }

    /// Whether a recorder (not an import) ever wrote this cluster.
    pub fn ever_recorded(&self) -> Result<bool, StoreError> {
        self.recording().ever_recorded(self.cluster())
    }

    /// Whether a recorder session of this cluster was running at `at`.
    pub fn recorded_at(&self, at: i64) -> Result<bool, StoreError> {
        self.recording().recorded_at(self.cluster(), at)
    }
}

impl Recording {
    /// Whether a recorder session of `cluster` was running at `at`.
    pub fn recorded_at(&self, cluster: i64, at: i64) -> Result<bool, StoreError> {
        self.conn
            .prepare_cached(SQL_RECORDED_AT)
            .and_then(|mut st| {
                st.query_row(named_params! {":cluster": cluster, ":at": at}, |r| r.get(0))
            })
            .optional()
            .map(|v| v.unwrap_or(false))
            .map_err(self.q("recorder coverage"))
    }

    /// Where the deletion of an object of `cluster` at `at` comes from. A
    /// deletion stores no version of its own, so it is told by who could have
    /// seen it: a recorder running then saw it (an audit import of that time
    /// names only the deleter); else an imported audit log told it.
    pub fn deletion_provenance(
        &self,
        cluster: i64,
        at: i64,
    ) -> Result<crate::model::Provenance, StoreError> {
        use crate::model::Provenance;
        Ok(if self.provenance_unkept.contains(&cluster) {
            Provenance::Unknown
        } else if self.recorded_at(cluster, at)? || !self.audit_imported(cluster)? {
            Provenance::Recorded
        } else {
            Provenance::AuditLog
        })
    }

    /// Whether audit logs were imported into `cluster`.
    pub fn audit_imported(&self, cluster: i64) -> Result<bool, StoreError> {
        self.conn
            .prepare_cached(SQL_AUDIT_IMPORTED)
            .and_then(|mut st| st.query_row(named_params! {":cluster": cluster}, |r| r.get(0)))
            .map_err(self.q("import spans"))
    }

    /// Whether a recorder (not an import) ever wrote `cluster`.
    pub fn ever_recorded(&self, cluster: i64) -> Result<bool, StoreError> {
        self.conn
            .prepare_cached(SQL_EVER_RECORDED)
            .and_then(|mut st| st.query_row(named_params! {":cluster": cluster}, |r| r.get(0)))
            .map_err(self.q("recorder sessions"))
    }

    /// Refused writes of a cluster in `[since, until]`; of one object when
    /// `object` names it (resource plural, namespace, name).
    pub fn refusals(
        &self,
        cluster: i64,
        since: i64,
        until: i64,
        object: Option<(&str, &str, &str)>,
    ) -> Result<Vec<Refusal>, StoreError> {
        let (resource, namespace, name) = object.unwrap_or(("", "", ""));
        let mut st = self
            .conn
            .prepare_cached(SQL_REFUSALS_OF)
            .map_err(self.q("refusals"))?;
        let rows = st
            .query_map(
                named_params! {":cluster": cluster, ":since": since, ":until": until,
                ":resource": resource, ":namespace": namespace, ":name": name},
                |r| {
                    Ok(Refusal {
                        at: r.get(0)?,
                        verb: r.get(1)?,
                        user: r.get(2)?,
                        group: r.get(3)?,
                        resource: r.get(4)?,
                        subresource: r.get(5)?,
                        namespace: r.get(6)?,
                        name: r.get(7)?,
                        code: r.get(8)?,
                        reason: r.get(9)?,
                        message: r.get(10)?,
                        refused_by: r.get(11)?,
                    })
                },
            )
            .map_err(self.q("refusals"))?;
        rows.collect::<Result<_, _>>().map_err(self.q("refusals"))
    }
}

impl Recording {
    /// The recorded clusters that hold an object of `uid` (an audit log
    /// without a cluster of its own joins the one its objects are of).
    pub fn clusters_of_uid(&self, uid: &str) -> Result<Vec<i64>, StoreError> {
        let mut st = self
            .conn
            .prepare_cached(SQL_CLUSTERS_OF_UID)
            .map_err(self.q("clusters of an object"))?;
        let rows = st
            .query_map(named_params! {":uid": uid}, |r| r.get(0))
            .map_err(self.q("clusters of an object"))?;
        rows.collect::<Result<_, _>>()
            .map_err(self.q("clusters of an object"))
    }

    /// Touches of a cluster in `[since, until]`, oldest first: of the objects
    /// named `names` when given (the caller matches kind and namespace), of
    /// one namespace when given.
    pub fn touches(
        &self,
        cluster: i64,
        since: i64,
        until: i64,
        names: Option<&[&str]>,
        namespace: Option<&str>,
    ) -> Result<Vec<Touch>, StoreError> {
        let names = names.map(|n| serde_json::Value::from(n.to_vec()).to_string());
        let mut st = self
            .conn
            .prepare_cached(SQL_TOUCHES_OF)
            .map_err(self.q("touches"))?;
        let rows = st
            .query_map(
                named_params! {":cluster": cluster, ":since": since, ":until": until,
                ":names": names, ":namespace": namespace},
                |r| {
                    Ok(Touch {
                        at: r.get(0)?,
                        verb: r.get(1)?,
                        user: r.get(2)?,
                        group: r.get(3)?,
                        resource: r.get(4)?,
                        subresource: r.get(5)?,
                        namespace: r.get(6)?,
                        name: r.get(7)?,
                        code: r.get(8)?,
                        detail: r.get(9)?,
                        why: TouchWhy::from_code(&r.get::<_, String>(10)?),
                    })
                },
            )
            .map_err(self.q("touches"))?;
        rows.collect::<Result<_, _>>().map_err(self.q("touches"))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn what_no_import_covers_is_a_gap() {
        assert_eq!(super::uncovered(&[], 100), vec![(0, 100)]);
        assert_eq!(
            super::uncovered(&[(40, 50), (10, 20), (15, 30)], 100),
            vec![(0, 10), (30, 40), (50, 100)]
        );
        assert_eq!(super::uncovered(&[(0, 100)], 100), vec![]);
    }
}
