//! The tables a recording ships: for each, its outbox code, the SQLite
//! statement that reads its rows by key (`queries/ship/`), and its columns as
//! ClickHouse declares them (`queries/clickhouse/schema.sql`), in the order
//! all use. One definition, from which the statements that only list columns
//! are made ([`shipped!`]), so the sender, the reader, the puller and the
//! schema cannot drift (unit tests compare the list with the DDL and with
//! every hand-written statement).

/// A column's type, as RowBinary writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    /// `String` (also `LowCardinality(String)`, the same on the wire).
    Str,
    /// `Nullable(String)`.
    NStr,
    /// `Int64`.
    Int,
    /// `Nullable(Int64)`.
    NInt,
    /// `UInt8`: a flag.
    Flag,
    /// `DateTime64(3, 'UTC')`: epoch milliseconds.
    Time,
    /// `Nullable(DateTime64(3, 'UTC'))`.
    NTime,
    /// `UInt64`: the ReplacingMergeTree version.
    Ver,
    /// `String`, selected as a `strings.id` that the outbox reader resolves
    /// once a batch (17 joins of `strings` a row were a third of the
    /// shipper's CPU, issue 32).
    Id,
    /// `Nullable(String)`, selected as a nullable `strings.id`.
    NId,
    /// `String`, selected as a uid the recording keeps as 16 bytes (a UUID)
    /// or as text; written as the apiserver wrote it.
    Uid,
}

impl Ty {
    /// The type as written: what [`Ty::Id`], [`Ty::NId`] and [`Ty::Uid`] are
    /// once the outbox reader resolved them.
    pub fn wire(self) -> Ty {
        match self {
            Ty::Id | Ty::Uid => Ty::Str,
            Ty::NId => Ty::NStr,
            t => t,
        }
    }
}

/// One shipped table.
#[derive(Debug)]
pub struct Table {
    /// Its name in ClickHouse.
    pub name: &'static str,
    /// Its code in the outbox (`outbox.tbl`, set by the triggers of migration 8).
    pub code: i64,
    /// The SQLite statement: this table's rows for the keys in `temp.ship_keys`
    /// (`queries/ship/`, hand-written: it joins the recording's tables).
    pub select: &'static str,
    /// The ClickHouse statement that inserts its rows (made from `columns`).
    pub insert: &'static str,
    /// The ClickHouse statement that reads a set of clusters' rows back: made from
    /// `columns`, or hand-written in `queries/clickhouse/read/` when it must be.
    pub read: &'static str,
    /// The SQLite statement that stages a row read back (made from `columns`).
    pub stage: &'static str,
    /// The SQLite statement that creates the table `stage` writes to (made from `columns`).
    pub stage_table: &'static str,
    /// The columns, in the statements' order; the first is always `cluster`.
    pub columns: &'static [(&'static str, Ty)],
}

/// A shipped table from its one definition: name, outbox code, how it is read
/// back, and its columns. The statements that only list the columns (the
/// ClickHouse INSERT and read, the staging table and its INSERT) are made here,
/// when building, so a column is named once in Rust and once in each
/// hand-written statement (the SQLite select, `schema.sql`, `load.sql`), and
/// tests check those against this list.
///
/// `read` is `cluster` (every row of the chosen clusters), `namespace "col"`
/// (and, unless every namespace is asked for, of the chosen namespaces, by the
/// column `col`), `... ordered` (in the order of the recording's ids, which
/// `load.sql` keeps), or `file` (`queries/clickhouse/read/<name>.sql`).
macro_rules! shipped {
    ($name:literal, $code:literal, read $read:ident $($ns:literal)? $($ordered:ident)?,
     [$first:literal: $fty:ident $(, $col:literal: $ty:ident)* $(,)?]) => {
        $crate::ship::tables::Table {
            name: $name,
            code: $code,
            select: include_str!(concat!("../../queries/ship/", $name, ".sql")),
            insert: concat!("INSERT INTO ", $name, " (", $first $(, ", ", $col)*, ") FORMAT RowBinary"),
            read: $crate::ship::tables::shipped!(@read $name [$first $(, $col)*] $read $($ns)? $($ordered)?),
            stage: $crate::ship::tables::shipped!(@stage $name [$first $(, $col)*]),
            stage_table: $crate::ship::tables::shipped!(@stage_table $name [$first $(, $col)*]),
            columns: &[($first, $crate::ship::tables::Ty::$fty) $(, ($col, $crate::ship::tables::Ty::$ty))*],
        }
    };
    // A table only staged, never shipped (what a pull adds to the shipped ones).
    (staged $name:literal, [$first:literal: $fty:ident $(, $col:literal: $ty:ident)* $(,)?]) => {
        $crate::ship::tables::Table {
            name: $name,
            code: 0,
            select: "",
            insert: "",
            read: "",
            stage: $crate::ship::tables::shipped!(@stage $name [$first $(, $col)*]),
            stage_table: $crate::ship::tables::shipped!(@stage_table $name [$first $(, $col)*]),
            columns: &[($first, $crate::ship::tables::Ty::$fty) $(, ($col, $crate::ship::tables::Ty::$ty))*],
        }
    };
    (@read $name:literal [$first:literal $(, $col:literal)*] cluster) => {
        concat!("SELECT ", $first $(, ", ", $col)*, "\nFROM ", $name, " FINAL\nWHERE has(?, cluster)")
    };
    (@read $name:literal [$first:literal $(, $col:literal)*] namespace $ns:literal) => {
        concat!("SELECT ", $first $(, ", ", $col)*, "\nFROM ", $name,
                " FINAL\nWHERE has(?, cluster) AND (? OR has(?, ", $ns, "))")
    };
    (@read $name:literal [$first:literal $(, $col:literal)*] namespace $ns:literal ordered) => {
        concat!($crate::ship::tables::shipped!(@read $name [$first $(, $col)*] namespace $ns), "\nORDER BY cluster, id")
    };
    (@read $name:literal [$($col:literal),*] file) => {
        include_str!(concat!("../../queries/clickhouse/read/", $name, ".sql"))
    };
    (@stage $name:literal [$first:literal $(, $col:literal)*]) => {
        concat!("INSERT INTO temp.st_", $name, " (", $first $(, ", ", $col)*,
                ")\nVALUES (?" $(, $crate::ship::tables::shipped!(@placeholder $col))*, ")")
    };
    (@stage_table $name:literal [$first:literal $(, $col:literal)*]) => {
        concat!("CREATE TEMP TABLE st_", $name, " (", $first $(, ", ", $col)*, ")")
    };
    (@placeholder $col:literal) => { ", ?" };
}
pub(crate) use shipped;

/// Every shipped table, parents before children (a reader that joins sees
/// the parent first when both are in one batch).
pub const TABLES: &[Table] = &[
    shipped!(
        "clusters",
        9,
        read cluster,
        [
            "cluster": Str,
            "label": Str,
            "server": Str,
            "added": Time,
            "ver": Ver,
        ]
    ),
    shipped!(
        "resource_types",
        10,
        read cluster,
        [
            "cluster": Str,
            "api_version": Str,
            "plural": Str,
            "kind": Str,
            "singular": Str,
            "short_names": Str,
            "namespaced": Flag,
            "ver": Ver,
        ]
    ),
    shipped!(
        "sessions",
        8,
        read cluster,
        [
            "cluster": Str,
            "host": Str,
            "pid": Int,
            "version": Str,
            "started": Time,
            "heartbeat": Time,
            "stopped": NTime,
            "mode": Str,
            "ver": Ver,
        ]
    ),
    shipped!(
        "watched",
        14,
        read cluster,
        [
            "cluster": Str,
            "resource": Str,
            "updated": Time,
            "ver": Ver,
        ]
    ),
    shipped!(
        "objects",
        3,
        read namespace "namespace" ordered,
        [
            "cluster": Str,
            "kind": Str,
            "namespace": Str,
            "name": Str,
            "uid": Str,
            "api_version": Str,
            "created": NTime,
            "first_seen": NTime,
            "deleted": NTime,
            "deleted_after": NTime,
            "id": Int,
            "ver": Ver,
        ]
    ),
    shipped!(
        "relations",
        6,
        read namespace "namespace",
        [
            "cluster": Str,
            "kind": Str,
            "namespace": Str,
            "name": Str,
            "uid": Str,
            "rel": Str,
            "parent_kind": Str,
            "parent_namespace": Str,
            "parent_name": Str,
            "parent_uid": Str,
            "since": Time,
            "ver": Ver,
        ]
    ),
    shipped!(
        "versions",
        4,
        read file,
        [
            "cluster": Str,
            "kind": Str,
            "namespace": Str,
            "name": Str,
            "uid": Str,
            "id": Int,
            "at": Time,
            "state": Str,
            "writers": Str,
            "seen": Time,
            "generation": Int,
            "observed_generation": NInt,
            "diff": NStr,
            "resource_version": NStr,
            "ver": Ver,
        ]
    ),
    shipped!(
        "update_counts",
        5,
        read namespace "namespace",
        [
            "cluster": Str,
            "kind": Str,
            "namespace": Str,
            "name": Str,
            "uid": Str,
            "minute": Int,
            "manager": Str,
            "field": NStr,
            "updates": Int,
            "versions": Int,
            "generation": Int,
            "ver": Ver,
        ]
    ),
    shipped!(
        "events",
        2,
        read namespace "namespace" ordered,
        [
            "cluster": Str,
            "uid": Str,
            "namespace": Str,
            "name": Str,
            "object_kind": Str,
            "object_namespace": Str,
            "object_name": Str,
            "object_uid": Str,
            "object_api_version": Str,
            "field_path": Str,
            "reason": Str,
            "type": Str,
            "action": Str,
            "controller": Str,
            "instance": Str,
            "host": Str,
            "related_kind": NStr,
            "related_namespace": NStr,
            "related_name": NStr,
            "related_uid": NStr,
            "deleted": NTime,
            "id": Int,
            "ver": Ver,
        ]
    ),
    shipped!(
        "occurrences",
        1,
        read namespace "event_namespace",
        [
            "cluster": Str,
            "event_uid": Str,
            "event_namespace": Str,
            "event_name": Str,
            "count": Int,
            "n": Int,
            "first": Time,
            "last": Time,
            "message": Str,
            "ver": Ver,
        ]
    ),
    shipped!(
        "gaps",
        7,
        read cluster,
        [
            "cluster": Str,
            "resource": Str,
            "start": Time,
            "finish": Time,
            "reason": Str,
            "detail": Str,
            "ver": Ver,
        ]
    ),
    shipped!(
        "type_changes",
        11,
        read cluster,
        [
            "cluster": Str,
            "at": Time,
            "resource": Str,
            "api_version": Str,
            "kind": Str,
            "change": Str,
            "ver": Ver,
        ]
    ),
    shipped!(
        "refusals",
        12,
        read namespace "namespace",
        [
            "cluster": Str,
            "at": Time,
            "verb": Str,
            "user": Str,
            "api_group": Str,
            "resource": Str,
            "subresource": Str,
            "namespace": Str,
            "name": Str,
            "code": Int,
            "reason": Str,
            "message": Str,
            "ver": Ver,
        ]
    ),
    shipped!(
        "import_spans",
        13,
        read cluster,
        [
            "cluster": Str,
            "source": Str,
            "start": Time,
            "finish": Time,
            "ver": Ver,
        ]
    ),
];

/// Tests: each table's SQLite statement prepares on a migrated recording and
/// reads as many columns as the table declares (every destination's tables).
#[cfg(test)]
pub(crate) fn assert_selects_match(tables: &[Table]) {
    let conn = rusqlite::Connection::open_in_memory().unwrap();
    crate::store::migrate::migrate(&conn, std::path::Path::new(":memory:")).unwrap();
    conn.execute_batch(include_str!("../../queries/ship/temp.sql"))
        .unwrap();
    for t in tables {
        let st = conn.prepare(t.select).unwrap();
        assert_eq!(st.column_count(), t.columns.len(), "{}", t.name);
    }
}

/// The table of an outbox code.
pub fn by_code(code: i64) -> Option<&'static Table> {
    TABLES.iter().find(|t| t.code == code)
}

#[cfg(test)]
mod tests {
    use super::Ty::*;
    use super::*;

    /// The DDL's columns, per table, in order, with their types.
    fn ddl() -> Vec<(String, Vec<(String, String)>)> {
        let schema = include_str!("../../queries/clickhouse/schema.sql");
        let mut tables = Vec::new();
        for stmt in schema.split("\n;\n") {
            let Some(rest) = stmt.split("CREATE TABLE IF NOT EXISTS ").nth(1) else {
                continue;
            };
            let name = rest.split_whitespace().next().unwrap().to_string();
            let body = &rest[rest.find('(').unwrap() + 1..rest.find(") ENGINE").unwrap()];
            let cols = body
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(|l| {
                    let l = l.trim_end_matches(',');
                    let (n, t) = l.split_once(char::is_whitespace).unwrap();
                    (n.to_string(), t.trim().to_string())
                })
                .collect();
            tables.push((name, cols));
        }
        tables
    }

    #[test]
    fn the_table_list_matches_the_clickhouse_schema_column_for_column() {
        let ddl = ddl();
        assert_eq!(ddl.len(), TABLES.len());
        for t in TABLES {
            let (_, cols) = ddl
                .iter()
                .find(|(n, _)| n == t.name)
                .unwrap_or_else(|| panic!("{} is not in schema.sql", t.name));
            let ours: Vec<_> = t.columns.iter().map(|(n, _)| n.to_string()).collect();
            let theirs: Vec<_> = cols.iter().map(|(n, _)| n.clone()).collect();
            assert_eq!(ours, theirs, "{}", t.name);
            for ((name, ty), (_, decl)) in t.columns.iter().zip(cols) {
                let want = match ty.wire() {
                    Str => &["String", "LowCardinality(String)"][..],
                    NStr => &["Nullable(String)"],
                    Int => &["Int64"],
                    NInt => &["Nullable(Int64)"],
                    Flag => &["UInt8"],
                    Time => &["DateTime64(3, 'UTC')"],
                    NTime => &["Nullable(DateTime64(3, 'UTC'))"],
                    Ver => &["UInt64"],
                    Id | NId | Uid => unreachable!("wire() resolves them"),
                };
                assert!(want.contains(&decl.as_str()), "{}.{name}: {decl}", t.name);
            }
        }
    }

    #[test]
    fn every_select_reads_as_many_columns_as_the_table_has() {
        assert_selects_match(TABLES);
        let codes: std::collections::HashSet<_> = TABLES.iter().map(|t| t.code).collect();
        assert_eq!(codes.len(), TABLES.len());
    }
}

#[cfg(test)]
mod statement_tests {
    use super::*;

    #[test]
    fn the_clickhouse_and_staging_statements_name_the_columns_in_order() {
        for t in TABLES {
            let names: Vec<&str> = t.columns.iter().map(|(n, _)| *n).collect();
            let list = names.join(", ");
            assert!(
                t.insert
                    .contains(&format!("INSERT INTO {} ({list})", t.name)),
                "{}",
                t.name
            );
            assert!(
                t.read
                    .contains(&format!("SELECT {list}\nFROM {} FINAL", t.name)),
                "{}",
                t.name
            );
            assert!(
                t.stage.contains(&format!("st_{} ({list})", t.name)),
                "{}",
                t.name
            );
            assert_eq!(t.stage.matches('?').count(), names.len(), "{}", t.name);
        }
    }

    #[test]
    fn the_made_staging_statements_run_on_sqlite() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        for t in TABLES {
            conn.execute(t.stage_table, []).unwrap();
            let st = conn.prepare(t.stage).unwrap();
            assert_eq!(st.parameter_count(), t.columns.len(), "{}", t.name);
        }
    }

    #[test]
    fn a_made_read_filters_by_cluster_and_namespace_in_the_recordings_order() {
        let objects = TABLES.iter().find(|t| t.name == "objects").unwrap();
        assert_eq!(
            objects.read,
            "SELECT cluster, kind, namespace, name, uid, api_version, created, first_seen, deleted, \
             deleted_after, id, ver\nFROM objects FINAL\nWHERE has(?, cluster) AND (? OR has(?, \
             namespace))\nORDER BY cluster, id"
        );
        let occurrences = TABLES.iter().find(|t| t.name == "occurrences").unwrap();
        assert!(occurrences.read.ends_with("(? OR has(?, event_namespace))"));
        let gaps = TABLES.iter().find(|t| t.name == "gaps").unwrap();
        assert!(
            gaps.read
                .ends_with("FROM gaps FINAL\nWHERE has(?, cluster)")
        );
    }
}
