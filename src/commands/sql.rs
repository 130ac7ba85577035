//! `kubectl diag sql "SELECT …"`: ad-hoc SQL over the recording, read-only.
//!
//! The file is opened read-only and `query_only` is set, so a write statement
//! fails with a clear error and changes nothing.

use std::io::Write;

use anyhow::Context;
use rusqlite::types::ValueRef;

use crate::cli::{GlobalArgs, OutputFormat, SqlArgs};
use crate::store::{self, Mode};

/// A result set as text cells, with SQL NULL kept apart from the empty string.
#[derive(Debug, Clone, PartialEq)]
pub struct ResultSet {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Null,
    Integer(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

impl Cell {
    fn text(&self) -> String {
        match self {
            Cell::Null => String::new(),
            Cell::Integer(i) => i.to_string(),
            Cell::Real(r) => r.to_string(),
            Cell::Text(t) => t.clone(),
            Cell::Blob(b) => b.iter().map(|x| format!("{x:02x}")).collect(),
        }
    }

    fn json(&self) -> serde_json::Value {
        match self {
            Cell::Null => serde_json::Value::Null,
            Cell::Integer(i) => (*i).into(),
            Cell::Real(r) => {
                serde_json::Number::from_f64(*r).map_or(serde_json::Value::Null, Into::into)
            }
            Cell::Text(t) => t.clone().into(),
            Cell::Blob(_) => self.text().into(),
        }
    }
}

/// Runs one statement with named parameters, collecting every row.
pub fn execute(
    conn: &rusqlite::Connection,
    sql: &str,
    params: &[(String, String)],
) -> rusqlite::Result<ResultSet> {
    let mut st = conn.prepare(sql)?;
    if !st.readonly() {
        return Err(rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_READONLY),
            Some(
                "only read-only statements are allowed (SELECT, WITH … SELECT, read-only PRAGMAs)"
                    .into(),
            ),
        ));
    }
    let columns: Vec<String> = st.column_names().map(str::to_string).collect();
    for (name, value) in params {
        let key = format!(":{name}");
        if let Some(index) = st.parameter_index(&key)? {
            st.raw_bind_parameter(index, value)?;
        }
    }
    let mut rows = st.raw_query();
    let mut out = Vec::new();
    while let Some(row) = rows.next()? {
        let mut cells = Vec::with_capacity(columns.len());
        for i in 0..columns.len() {
            cells.push(match row.get_ref(i)? {
                ValueRef::Null => Cell::Null,
                ValueRef::Integer(v) => Cell::Integer(v),
                ValueRef::Real(v) => Cell::Real(v),
                ValueRef::Text(t) => Cell::Text(String::from_utf8_lossy(t).into_owned()),
                ValueRef::Blob(b) => Cell::Blob(b.to_vec()),
            });
        }
        out.push(cells);
    }
    Ok(ResultSet { columns, rows: out })
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Renders a result set as a table, JSON (an array of objects) or CSV.
pub fn render(set: &ResultSet, format: OutputFormat, out: &mut dyn Write) -> std::io::Result<()> {
    match format {
        OutputFormat::Json | OutputFormat::Jsonl => {
            let objects: Vec<serde_json::Value> = set
                .rows
                .iter()
                .map(|row| {
                    let map: serde_json::Map<String, serde_json::Value> = set
                        .columns
                        .iter()
                        .cloned()
                        .zip(row.iter().map(Cell::json))
                        .collect();
                    serde_json::Value::Object(map)
                })
                .collect();
            if format == OutputFormat::Jsonl {
                for o in objects {
                    serde_json::to_writer(&mut *out, &o)?;
                    writeln!(out)?;
                }
            } else {
                serde_json::to_writer_pretty(&mut *out, &objects)?;
                writeln!(out)?;
            }
        }
        OutputFormat::Csv => {
            let header: Vec<String> = set.columns.iter().map(|c| csv_field(c)).collect();
            writeln!(out, "{}", header.join(","))?;
            for row in &set.rows {
                let cells: Vec<String> = row.iter().map(|c| csv_field(&c.text())).collect();
                writeln!(out, "{}", cells.join(","))?;
            }
        }
        _ => {
            crate::render::plain_table(
                out,
                set.columns
                    .iter()
                    .map(|c| crate::render::escape(&c.to_uppercase()).into_owned()),
                set.rows.iter().map(|row| {
                    row.iter()
                        .map(|c| crate::render::escape(&c.text()).into_owned())
                }),
            )?;
        }
    }
    Ok(())
}

pub fn run(global: &GlobalArgs, args: &SqlArgs, out: &mut dyn Write) -> anyhow::Result<u8> {
    let path = crate::paths::db_path(global.db.as_ref());
    let conn = store::open(&path, Mode::ReadOnly)?;
    conn.pragma_update(None, "query_only", true)
        .context("making the connection read-only")?;
    let params = parse_params(&args.param)?;
    let set = execute(&conn, &args.statement, &params)
        .with_context(|| format!("running the SQL over {}", path.display()))?;
    render(&set, global.output.unwrap_or(OutputFormat::Table), out)?;
    Ok(crate::exit::OK)
}

/// `--param key=value` pairs.
pub fn parse_params(raw: &[String]) -> anyhow::Result<Vec<(String, String)>> {
    raw.iter()
        .map(|p| {
            p.split_once('=')
                .map(|(k, v)| (k.trim().to_string(), v.to_string()))
                .filter(|(k, _)| !k.is_empty())
                .with_context(|| format!("--param {p}: expected KEY=VALUE"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set() -> ResultSet {
        ResultSet {
            columns: vec!["reason".into(), "n".into(), "note".into()],
            rows: vec![
                vec![Cell::Text("BackOff".into()), Cell::Integer(12), Cell::Null],
                vec![
                    Cell::Text("Failed, \"badly\"".into()),
                    Cell::Integer(3),
                    Cell::Text("x".into()),
                ],
            ],
        }
    }

    fn rendered(format: OutputFormat) -> String {
        let mut out = Vec::new();
        render(&set(), format, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn golden_table() {
        assert_eq!(
            rendered(OutputFormat::Table),
            " REASON           N   NOTE\n BackOff          12\n Failed, \"badly\"  3   x\n"
        );
    }

    #[test]
    fn golden_json() {
        assert_eq!(
            rendered(OutputFormat::Json),
            "[\n  {\n    \"reason\": \"BackOff\",\n    \"n\": 12,\n    \"note\": null\n  },\n  {\n    \"reason\": \"Failed, \\\"badly\\\"\",\n    \"n\": 3,\n    \"note\": \"x\"\n  }\n]\n"
        );
    }

    #[test]
    fn golden_csv() {
        assert_eq!(
            rendered(OutputFormat::Csv),
            "reason,n,note\nBackOff,12,\n\"Failed, \"\"badly\"\"\",3,x\n"
        );
    }

    #[test]
    fn writes_are_refused_and_change_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("diag.db");
        drop(store::open(&path, Mode::Write).unwrap());
        let conn = store::open(&path, Mode::ReadOnly).unwrap();
        conn.pragma_update(None, "query_only", true).unwrap();
        for sql in [
            "DELETE FROM strings",
            "INSERT INTO clusters (uid, label, added) VALUES ('x', 'x', 0)",
            "DROP TABLE events",
            "PRAGMA user_version = 99",
        ] {
            let err = execute(&conn, sql, &[]).unwrap_err().to_string();
            assert!(err.contains("read"), "{sql}: {err}");
        }
        let v: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(v, crate::store::migrate::LATEST);
        let clusters = execute(&conn, "SELECT COUNT(*) AS n FROM clusters", &[]).unwrap();
        assert_eq!(clusters.rows, vec![vec![Cell::Integer(0)]]);
    }

    #[test]
    fn named_parameters_bind() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        let set = execute(
            &conn,
            "SELECT :a || '-' || :b AS x",
            &[("a".into(), "1".into()), ("b".into(), "two".into())],
        )
        .unwrap();
        assert_eq!(set.rows, vec![vec![Cell::Text("1-two".into())]]);
        assert!(parse_params(&["novalue".into()]).is_err());
    }
}
