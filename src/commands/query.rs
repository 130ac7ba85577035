//! `kubectl diag query NAME`: canned SQL from `queries/named/` (built in) and
//! from `$XDG_CONFIG_HOME/kubectl-diag/queries/` (the user's own; a user query
//! with a built-in's name replaces it).
//!
//! Each file starts with a header:
//!
//! ```sql
//! -- name: warnings-by-reason
//! -- description: Warning occurrences per reason
//! -- param: since time 24h  only occurrences last seen at or after this
//! ```
//!
//! A param line is `NAME TYPE DEFAULT  DESCRIPTION`; TYPE is `time` (a
//! duration back from now or RFC 3339, bound as epoch milliseconds), `int`
//! or `text`; DEFAULT `-` means required.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, bail};

use super::sql::{StreamError, parse_params, stream};
use crate::model::Which;
use crate::model::cluster::NoChoice;
use crate::store::{self, Mode};
use crate::units::parse_time_ms;

const BUILT_IN: &[(&str, &str)] = &[
    (
        "warnings-by-reason",
        include_str!("../../queries/named/warnings-by-reason.sql"),
    ),
    (
        "noisiest-objects",
        include_str!("../../queries/named/noisiest-objects.sql"),
    ),
    (
        "scheduling-failures",
        include_str!("../../queries/named/scheduling-failures.sql"),
    ),
    (
        "recorder-gaps",
        include_str!("../../queries/named/recorder-gaps.sql"),
    ),
    (
        "object-events",
        include_str!("../../queries/named/object-events.sql"),
    ),
    (
        "restarts-by-pod",
        include_str!("../../queries/named/restarts-by-pod.sql"),
    ),
    (
        "slowest-deletions",
        include_str!("../../queries/named/slowest-deletions.sql"),
    ),
];

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    pub name: String,
    pub kind: String,
    pub default: Option<String>,
    pub description: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedQuery {
    pub name: String,
    pub description: String,
    pub params: Vec<Param>,
    pub sql: String,
    /// Where it came from: "built-in" or the file's path.
    pub source: String,
}

/// Reads a query's header. Pure.
pub fn parse_header(source: &str, text: &str) -> anyhow::Result<NamedQuery> {
    let (mut name, mut description, mut params) = (None, String::new(), Vec::new());
    for line in text.lines() {
        let Some(comment) = line.trim().strip_prefix("--") else {
            break;
        };
        let comment = comment.trim();
        if let Some(v) = comment.strip_prefix("name:") {
            name = Some(v.trim().to_string());
        } else if let Some(v) = comment.strip_prefix("description:") {
            description = v.trim().to_string();
        } else if let Some(v) = comment.strip_prefix("param:") {
            let mut words = v.split_whitespace();
            let (Some(pname), Some(kind), Some(default)) =
                (words.next(), words.next(), words.next())
            else {
                bail!("{source}: a param line needs NAME TYPE DEFAULT: {line}");
            };
            if !["time", "int", "text"].contains(&kind) {
                bail!("{source}: param {pname} has type {kind}; use time, int or text");
            }
            params.push(Param {
                name: pname.to_string(),
                kind: kind.to_string(),
                default: (default != "-").then(|| default.to_string()),
                description: words.collect::<Vec<_>>().join(" "),
            });
        }
    }
    let name = name.with_context(|| format!("{source}: no `-- name:` line in its header"))?;
    Ok(NamedQuery {
        name,
        description,
        params,
        sql: text.to_string(),
        source: source.to_string(),
    })
}

fn user_dir() -> Option<PathBuf> {
    std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))
        .map(|d| d.join("kubectl-diag").join("queries"))
}

/// Built-in queries, then the user's (which replace a built-in of the same name).
///
/// A user file that cannot be used (unreadable, not a file, no `-- name:`
/// header) is skipped with a warning on `warn` naming it: one broken file must
/// not take the built-ins and every other query down with it.
pub fn all_queries(warn: &mut dyn Write) -> anyhow::Result<Vec<NamedQuery>> {
    let mut queries: Vec<NamedQuery> = BUILT_IN
        .iter()
        .map(|(_, text)| parse_header("built-in", text))
        .collect::<anyhow::Result<_>>()?;
    if let Some(dir) = user_dir().filter(|d| d.is_dir()) {
        for q in user_queries(&dir, warn)? {
            queries.retain(|existing| existing.name != q.name);
            queries.push(q);
        }
    }
    Ok(queries)
}

/// The usable `*.sql` files in `dir`, sorted by path; the others are named on `warn`.
fn user_queries(dir: &std::path::Path, warn: &mut dyn Write) -> anyhow::Result<Vec<NamedQuery>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) => {
            writeln!(
                warn,
                "warning: skipping your queries in {}: {e}",
                dir.display()
            )?;
            return Ok(Vec::new());
        }
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "sql"))
        .collect();
    files.sort();
    let mut queries = Vec::new();
    for file in files {
        // NB: only regular files (or links to them) are read: reading a FIFO
        // blocks until someone writes to it, and every `query` hung (issue 27.10).
        if !std::fs::metadata(&file).is_ok_and(|m| m.is_file()) {
            writeln!(
                warn,
                "warning: skipping {}: not a regular file (fix or remove it)",
                file.display()
            )?;
            continue;
        }
        let parsed = std::fs::read_to_string(&file)
            .with_context(|| format!("{}: cannot be read", file.display()))
            .and_then(|text| parse_header(&file.display().to_string(), &text));
        match parsed {
            Ok(q) => queries.push(q),
            // The error names the file already ("PATH: no `-- name:` line …").
            Err(e) => writeln!(warn, "warning: skipping {e:#} (fix or remove the file)")?,
        }
    }
    Ok(queries)
}

/// Binds the given values (and defaults) to the query's declared params.
pub fn bind(
    q: &NamedQuery,
    given: &[(String, String)],
    now: chrono::DateTime<chrono::Utc>,
) -> anyhow::Result<Vec<(String, String)>> {
    for (k, _) in given {
        if !q.params.iter().any(|p| &p.name == k) {
            let known: Vec<&str> = q.params.iter().map(|p| p.name.as_str()).collect();
            bail!(
                "query {} has no parameter {k} (it takes: {})",
                q.name,
                known.join(", ")
            );
        }
    }
    q.params
        .iter()
        .map(|p| {
            let value = given
                .iter()
                .rev()
                .find(|(k, _)| k == &p.name)
                .map(|(_, v)| v.clone())
                .or_else(|| p.default.clone())
                .with_context(|| {
                    format!(
                        "query {} needs --param {}=… ({})",
                        q.name, p.name, p.description
                    )
                })?;
            let bound = match p.kind.as_str() {
                "time" => parse_time_ms(&value, now)
                    .with_context(|| format!("--param {}", p.name))?
                    .to_string(),
                "int" => value.parse::<i64>().map(|v| v.to_string()).map_err(|_| {
                    anyhow::anyhow!("--param {}={value}: expected a whole number", p.name)
                })?,
                _ => value,
            };
            Ok((p.name.clone(), bound))
        })
        .collect()
}

/// What `query` was asked, its flags resolved once (`cli::resolve`).
#[derive(Debug, Clone)]
pub struct QueryOptions {
    pub output: super::sql::RowsOutput,
    /// The query to run; None lists them (`--list`).
    pub name: Option<String>,
    /// `--param KEY=VALUE`, as typed.
    pub param: Vec<String>,
    /// `--since`: shorthand for `--param since=`.
    pub since: Option<i64>,
    /// `--cluster ID` or `--all-clusters`; `One(None)` reads the recording whole.
    pub clusters: Which,
}

pub fn run(
    history: &super::source::Source,
    args: &QueryOptions,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> anyhow::Result<u8> {
    let queries = all_queries(err)?;
    let Some(name) = args.name.as_deref() else {
        let rows = queries.iter().map(|q| {
            let params: Vec<String> = q
                .params
                .iter()
                .map(|p| match &p.default {
                    Some(d) => format!("{}={d}", p.name),
                    None => format!("{} (required)", p.name),
                })
                .collect();
            [&q.name, &q.description, &params.join(" ")]
                .map(|text| crate::render::escape(text).into_owned())
        });
        crate::render::plain_table(out, ["NAME", "DESCRIPTION", "PARAMETERS"], rows)?;
        return Ok(crate::exit::OK);
    };
    let Some(q) = queries.iter().find(|q| q.name == name) else {
        let known: Vec<&str> = queries.iter().map(|q| q.name.as_str()).collect();
        bail!(
            "no query named {name}; known: {} (see `kubectl diag query --list`)",
            known.join(", ")
        );
    };
    let mut given = parse_params(&args.param)?;
    if let Some(since) = args.since {
        given.push(("since".into(), crate::units::rfc3339(since)));
    }
    let params = bind(q, &given, chrono::Utc::now())?;
    let path = history.path().to_path_buf();
    let conn = store::open(&path, Mode::ReadOnly)?;
    if args.clusters != Which::One(None) {
        return by_cluster(&conn, &path, q, &params, args, out);
    }
    conn.pragma_update(None, "query_only", true)?;
    // NB: buffered, as in `sql`: main's stdout is line-buffered.
    let mut buffered = std::io::BufWriter::with_capacity(64 * 1024, out);
    let format = args.output;
    match stream(&conn, &q.sql, &params, format, &mut buffered) {
        Ok(_) => {}
        Err(StreamError::Write(e)) => return Err(e.into()),
        Err(StreamError::Sql(e)) => {
            return Err(
                anyhow::Error::new(e).context(format!("running query {} ({})", q.name, q.source))
            );
        }
    }
    buffered.flush()?;
    Ok(crate::exit::OK)
}

const SQL_SCOPE: &str = include_str!("../../queries/store/cluster_scope.sql");
const SQL_SCOPE_SET: &str = include_str!("../../queries/store/cluster_scope_set.sql");
const SQL_CLUSTERS: &str = include_str!("../../queries/store/clusters_all.sql");

/// `--cluster` (one cluster's rows) and `--all-clusters` (the query once per
/// cluster, a CLUSTER column first): the recording's tables shadowed by
/// views of one cluster (queries/store/cluster_scope.sql), so any query works
/// unchanged.
fn by_cluster(
    conn: &rusqlite::Connection,
    path: &std::path::Path,
    q: &NamedQuery,
    params: &[(String, String)],
    args: &QueryOptions,
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    let recording_clusters = {
        let mut st = conn.prepare(SQL_CLUSTERS)?;
        st.query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
            ))
        })?
        .collect::<Result<Vec<_>, _>>()?
    };
    let holds = || crate::model::cluster::listed(&recording_clusters);
    let chosen: Vec<_> = match args.clusters.choose(&recording_clusters) {
        Ok(chosen) => chosen.into_iter().cloned().collect(),
        // NB: every cluster of none: the query's columns with no row.
        Err(NoChoice::Empty) if args.clusters == Which::All => Vec::new(),
        Err(NoChoice::Ambiguous(name)) => bail!(
            "--cluster {name}: several clusters of {} have that label: name one by its uid ({})",
            path.display(),
            holds()
        ),
        Err(_) => bail!(
            "{}: no cluster of {} has that uid or label; it holds {}",
            match &args.clusters {
                Which::One(Some(name)) => format!("--cluster {name}"),
                _ => "--cluster".to_string(),
            },
            path.display(),
            holds()
        ),
    };
    conn.execute_batch(SQL_SCOPE)
        .context("scoping the query to one cluster")?;
    let mut merged: Option<super::sql::ResultSet> = None;
    for (id, uid, label) in &chosen {
        conn.pragma_update(None, "query_only", false)?;
        conn.execute(SQL_SCOPE_SET, rusqlite::named_params! {":id": id})?;
        conn.pragma_update(None, "query_only", true)?;
        let set = super::sql::execute(conn, &q.sql, params)
            .with_context(|| format!("running query {} ({})", q.name, q.source))?;
        let name = if label.is_empty() { uid } else { label };
        // NB: a query that names its cluster already (recorder-gaps) gets no second column.
        let tag = args.clusters == Which::All
            && !set
                .columns
                .iter()
                .any(|c| c.eq_ignore_ascii_case("cluster"));
        let m = merged.get_or_insert_with(|| super::sql::ResultSet {
            columns: if tag {
                std::iter::once("cluster".to_string())
                    .chain(set.columns.iter().cloned())
                    .collect()
            } else {
                set.columns.clone()
            },
            rows: Vec::new(),
        });
        for row in set.rows {
            if tag {
                m.rows.push(
                    std::iter::once(super::sql::Cell::Text(name.clone()))
                        .chain(row)
                        .collect(),
                );
            } else {
                m.rows.push(row);
            }
        }
    }
    let set = merged.unwrap_or(super::sql::ResultSet {
        columns: Vec::new(),
        rows: Vec::new(),
    });
    let mut buffered = std::io::BufWriter::with_capacity(64 * 1024, out);
    super::sql::render(&set, args.output, &mut buffered)?;
    buffered.flush()?;
    Ok(crate::exit::OK)
}

#[cfg(test)]
mod tests {
    use super::super::sql::execute;
    use super::*;

    #[test]
    fn every_built_in_query_has_a_header_and_valid_sql() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("diag.db");
        drop(store::open(&path, Mode::Write).unwrap());
        let conn = store::open(&path, Mode::ReadOnly).unwrap();
        for (file, text) in BUILT_IN {
            let q = parse_header("built-in", text).unwrap();
            assert_eq!(&q.name, file);
            assert!(!q.description.is_empty(), "{file}");
            let mut given = Vec::new();
            if q.name == "object-events" {
                given.push(("name".to_string(), "web".to_string()));
            }
            let params = bind(&q, &given, chrono::Utc::now()).unwrap();
            execute(&conn, &q.sql, &params).unwrap_or_else(|e| panic!("{file}: {e}"));
        }
    }

    #[test]
    fn params_are_typed_and_required_ones_are_asked_for() {
        let q = parse_header("t", "-- name: t\n-- param: since time 2h  x\n-- param: n int 5  y\n-- param: who text -  z\nSELECT 1").unwrap();
        let now = chrono::DateTime::parse_from_rfc3339("2026-11-29T10:00:00Z")
            .unwrap()
            .with_timezone(&chrono::Utc);
        let err = bind(&q, &[], now).unwrap_err().to_string();
        assert!(err.contains("needs --param who"), "{err}");
        let bound = bind(&q, &[("who".into(), "me".into())], now).unwrap();
        assert_eq!(
            bound[0],
            (
                "since".into(),
                (now.timestamp_millis() - 7_200_000).to_string()
            )
        );
        assert_eq!(bound[1], ("n".into(), "5".into()));
        assert!(
            bind(
                &q,
                &[("who".into(), "me".into()), ("n".into(), "x".into())],
                now
            )
            .is_err()
        );
        assert!(
            bind(&q, &[("nope".into(), "1".into())], now)
                .unwrap_err()
                .to_string()
                .contains("has no parameter nope")
        );
    }

    #[test]
    fn a_broken_user_query_file_is_skipped_with_a_warning_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a-no-header.sql"), "SELECT 1").unwrap();
        std::fs::create_dir(dir.path().join("b-directory.sql")).unwrap();
        std::fs::write(
            dir.path().join("c-bad-param.sql"),
            "-- name: c\n-- param: a date 1\nSELECT 1",
        )
        .unwrap();
        std::fs::write(dir.path().join("d-good.sql"), "-- name: good\nSELECT 1").unwrap();
        std::fs::write(dir.path().join("notes.txt"), "not a query").unwrap();
        let mut warn = Vec::new();
        let queries = user_queries(dir.path(), &mut warn).unwrap();
        let warn = String::from_utf8(warn).unwrap();
        assert_eq!(
            queries.iter().map(|q| q.name.as_str()).collect::<Vec<_>>(),
            ["good"]
        );
        for name in ["a-no-header.sql", "b-directory.sql", "c-bad-param.sql"] {
            assert!(
                warn.lines()
                    .any(|l| l.starts_with("warning: skipping") && l.contains(name)),
                "{name}: {warn}"
            );
        }
        assert!(warn.contains("no `-- name:`"), "{warn}");
        assert_eq!(warn.lines().count(), 3, "{warn}");
    }

    #[test]
    fn a_header_without_a_name_is_refused() {
        assert!(
            parse_header("f.sql", "SELECT 1")
                .unwrap_err()
                .to_string()
                .contains("no `-- name:`")
        );
        assert!(parse_header("f.sql", "-- name: x\n-- param: a date 1\nSELECT 1").is_err());
    }
}
