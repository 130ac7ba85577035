//! `kubectl diag sql "SELECT …"`: ad-hoc SQL over the recording, read-only.
//!
//! The file is opened read-only and `query_only` is set, so a write statement
//! fails with a clear error and changes nothing.
//!
//! Rows are written as SQLite steps to them: `-o json`, `jsonl` and `csv` hold
//! one row at a time, and a reader that goes away (`| head`) stops the
//! statement at the next write. Only the table keeps every row, because its
//! columns are as wide as their widest cell. `--timeout` interrupts the
//! statement through SQLite's interrupt handle.

use std::io::Write;
use std::sync::mpsc;
use std::time::Duration;

use anyhow::Context;
use rusqlite::types::ValueRef;

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
    fn of(value: ValueRef<'_>) -> Cell {
        match value {
            ValueRef::Null => Cell::Null,
            ValueRef::Integer(v) => Cell::Integer(v),
            ValueRef::Real(v) => Cell::Real(v),
            ValueRef::Text(t) => Cell::Text(String::from_utf8_lossy(t).into_owned()),
            ValueRef::Blob(b) => Cell::Blob(b.to_vec()),
        }
    }

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

/// Prepares one read-only statement and binds its named parameters.
fn prepare<'c>(
    conn: &'c rusqlite::Connection,
    sql: &str,
    params: &[(String, String)],
) -> rusqlite::Result<rusqlite::Statement<'c>> {
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
    for (name, value) in params {
        let key = format!(":{name}");
        if let Some(index) = st.parameter_index(&key)? {
            st.raw_bind_parameter(index, value)?;
        }
    }
    Ok(st)
}

/// Runs one statement with named parameters, collecting every row.
pub fn execute(
    conn: &rusqlite::Connection,
    sql: &str,
    params: &[(String, String)],
) -> rusqlite::Result<ResultSet> {
    let mut st = prepare(conn, sql, params)?;
    let columns: Vec<String> = st.column_names().map(str::to_string).collect();
    let mut rows = st.raw_query();
    let mut out = Vec::new();
    while let Some(row) = rows.next()? {
        let cells = (0..columns.len())
            .map(|i| row.get_ref(i).map(Cell::of))
            .collect::<rusqlite::Result<_>>()?;
        out.push(cells);
    }
    Ok(ResultSet { columns, rows: out })
}

/// Why a streamed statement stopped early.
#[derive(Debug, thiserror::Error)]
pub enum StreamError {
    #[error(transparent)]
    Sql(#[from] rusqlite::Error),
    /// Writing failed; a closed pipe is the reader's choice (see `exit::is_broken_pipe`).
    #[error(transparent)]
    Write(#[from] std::io::Error),
}

/// Runs one statement and writes each row as it comes; returns the row count.
pub fn stream(
    conn: &rusqlite::Connection,
    sql: &str,
    params: &[(String, String)],
    format: RowsOutput,
    out: &mut dyn Write,
) -> Result<u64, StreamError> {
    let mut st = prepare(conn, sql, params)?;
    let columns: Vec<String> = st.column_names().map(str::to_string).collect();
    let mut sink = Sink::new(format, columns);
    sink.start(out)?;
    let mut rows = st.raw_query();
    let mut cells = Vec::with_capacity(sink.columns.len());
    let mut n = 0u64;
    while let Some(row) = rows.next()? {
        cells.clear();
        for i in 0..sink.columns.len() {
            cells.push(Cell::of(row.get_ref(i)?));
        }
        sink.row(&mut cells, out)?;
        n += 1;
    }
    sink.finish(out)?;
    Ok(n)
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// One output format, fed a row at a time.
struct Sink {
    format: RowsOutput,
    columns: Vec<String>,
    /// Rows so far: only the table keeps them.
    table: Vec<Vec<String>>,
    first: bool,
}

impl Sink {
    fn new(format: RowsOutput, columns: Vec<String>) -> Sink {
        Sink {
            format,
            columns,
            table: Vec::new(),
            first: true,
        }
    }

    fn start(&mut self, out: &mut dyn Write) -> std::io::Result<()> {
        if self.format == RowsOutput::Csv {
            let header: Vec<String> = self.columns.iter().map(|c| csv_field(c)).collect();
            writeln!(out, "{}", header.join(","))?;
        }
        Ok(())
    }

    fn object(&self, cells: &[Cell]) -> serde_json::Value {
        serde_json::Value::Object(
            self.columns
                .iter()
                .cloned()
                .zip(cells.iter().map(Cell::json))
                .collect(),
        )
    }

    fn row(&mut self, cells: &mut Vec<Cell>, out: &mut dyn Write) -> std::io::Result<()> {
        match self.format {
            RowsOutput::Jsonl => {
                serde_json::to_writer(&mut *out, &self.object(cells))?;
                writeln!(out)?;
            }
            RowsOutput::Json => {
                // NB: the same bytes as `to_writer_pretty` of the whole array: each
                // object pretty-printed and indented one level. JSON strings hold
                // no raw newline, so indenting line by line is exact.
                let object = serde_json::to_string_pretty(&self.object(cells))?;
                out.write_all(if self.first { b"[\n" } else { b",\n" })?;
                for (i, line) in object.lines().enumerate() {
                    if i > 0 {
                        out.write_all(b"\n")?;
                    }
                    write!(out, "  {line}")?;
                }
            }
            RowsOutput::Csv => {
                let fields: Vec<String> = cells.iter().map(|c| csv_field(&c.text())).collect();
                writeln!(out, "{}", fields.join(","))?;
            }
            _ => self.table.push(
                cells
                    .drain(..)
                    .map(|c| crate::render::escape(&c.text()).into_owned())
                    .collect(),
            ),
        }
        self.first = false;
        Ok(())
    }

    fn finish(&mut self, out: &mut dyn Write) -> std::io::Result<()> {
        match self.format {
            RowsOutput::Json if self.first => writeln!(out, "[]"),
            RowsOutput::Json => out.write_all(b"\n]\n"),
            RowsOutput::Jsonl | RowsOutput::Csv => Ok(()),
            _ => crate::render::plain_table(
                out,
                self.columns
                    .iter()
                    .map(|c| crate::render::escape(&c.to_uppercase()).into_owned()),
                std::mem::take(&mut self.table),
            ),
        }
    }
}

/// Renders a collected result set as a table, JSON (an array of objects),
/// JSON Lines or CSV: the same bytes as `stream`.
pub fn render(set: &ResultSet, format: RowsOutput, out: &mut dyn Write) -> std::io::Result<()> {
    let mut sink = Sink::new(format, set.columns.clone());
    sink.start(out)?;
    for row in &set.rows {
        sink.row(&mut row.clone(), out)?;
    }
    sink.finish(out)
}

/// Interrupts the connection's statement when `limit` passes, unless dropped first.
struct Deadline {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<bool>>,
}

impl Deadline {
    fn start(conn: &rusqlite::Connection, limit: Duration) -> Deadline {
        let handle = conn.get_interrupt_handle();
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            // Disconnected (the statement ended) or a message: no interrupt.
            if let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(limit) {
                handle.interrupt();
                return true;
            }
            false
        });
        Deadline {
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// Ends the timer; true when it had fired.
    fn end(mut self) -> bool {
        drop(self.stop.take());
        self.thread
            .take()
            .is_some_and(|t| t.join().unwrap_or(false))
    }
}

/// `query -o` and `sql -o`: rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowsOutput {
    Table,
    Json,
    Jsonl,
    Csv,
}

/// What `sql` was asked, its flags resolved once (`cli::resolve`).
#[derive(Debug, Clone)]
pub struct SqlOptions {
    pub output: RowsOutput,
    /// The one statement.
    pub statement: String,
    /// `--param KEY=VALUE`, as typed.
    pub param: Vec<String>,
    /// `--timeout`, in milliseconds.
    pub timeout: Option<i64>,
    /// `--store`: the statement runs in ClickHouse, not over a recording.
    pub store: Option<crate::ship::url::ClickHouseUrl>,
}

pub fn run(
    history: &super::source::Source,
    args: &SqlOptions,
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    if let Some(url) = &args.store {
        return run_clickhouse(url, args, out);
    }
    let path = history.path().to_path_buf();
    let limit = args
        .timeout
        .filter(|ms| *ms > 0)
        .map(|ms| Duration::from_millis(ms.unsigned_abs()));
    let conn = store::open(&path, Mode::ReadOnly)?;
    conn.pragma_update(None, "query_only", true)
        .context("making the connection read-only")?;
    let params = parse_params(&args.param)?;
    // NB: main's stdout is line-buffered: a row per write(2) would make 175k
    // rows 175k system calls. A closed pipe still shows at the next 64 KiB.
    let mut buffered = std::io::BufWriter::with_capacity(64 * 1024, out);
    let deadline = limit.map(|l| Deadline::start(&conn, l));
    let result = stream(&conn, &args.statement, &params, args.output, &mut buffered);
    let fired = deadline.is_some_and(Deadline::end);
    match result {
        Ok(_) => {}
        Err(StreamError::Write(e)) => return Err(e.into()),
        Err(StreamError::Sql(e)) if fired => {
            return Err(anyhow::Error::new(e).context(format!(
                "the SQL over {} ran longer than --timeout {}: stopped; narrow it (WHERE, LIMIT) or give a longer --timeout",
                path.display(),
                crate::units::exact_duration(args.timeout.unwrap_or_default())
            )));
        }
        Err(StreamError::Sql(e)) => {
            return Err(
                anyhow::Error::new(e).context(format!("running the SQL over {}", path.display()))
            );
        }
    }
    buffered.flush()?;
    Ok(crate::exit::OK)
}

/// What `sql --store` lets through to ClickHouse: statements that read.
const READS: &[&str] = &[
    "SELECT", "WITH", "SHOW", "DESCRIBE", "DESC", "EXPLAIN", "EXISTS",
];

/// A token of ClickHouse SQL, as far as the read-only guard cares.
#[derive(Debug, PartialEq, Eq)]
enum Token<'a> {
    /// A bare word: a keyword, a name, a number.
    Word(&'a str),
    /// A string, a quoted name or a heredoc: never a keyword.
    Quoted,
    /// Any other character outside those.
    Punct(char),
}

/// The tokens of `sql`, comments and blanks left out, as ClickHouse's lexer
/// (`src/Parsers/Lexer.cpp`) reads them: `--`, `//` and `# `/`#!` comments to
/// the end of the line; `/* */` comments that NEST (`/* /* */ SELECT */` is
/// one comment); `'…'`, `"…"` and `` `…` `` with backslash escapes and doubled
/// quotes; `$tag$…$tag$` heredocs. Unclosed, they run to the end (the server
/// refuses such a statement anyway).
fn tokens(sql: &str) -> Vec<Token<'_>> {
    let b = sql.as_bytes();
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'$';
    let line_end = |i: usize| {
        b[i..]
            .iter()
            .position(|&c| c == b'\n')
            .map_or(b.len(), |p| i + p)
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        match c {
            c if c.is_ascii_whitespace() => i += 1,
            b'-' if next == Some(b'-') => i = line_end(i),
            b'/' if next == Some(b'/') => i = line_end(i),
            b'#' if matches!(next, Some(b' ' | b'!')) => i = line_end(i),
            b'/' if next == Some(b'*') => {
                let mut depth = 1usize;
                i += 2;
                while i < b.len() && depth > 0 {
                    if b[i..].starts_with(b"/*") {
                        depth += 1;
                        i += 2;
                    } else if b[i..].starts_with(b"*/") {
                        depth -= 1;
                        i += 2;
                    } else {
                        i += 1;
                    }
                }
                if depth > 0 {
                    i = b.len();
                }
            }
            b'\'' | b'"' | b'`' => {
                i += 1;
                loop {
                    match b.get(i) {
                        None => break,
                        Some(b'\\') => i += 2,
                        Some(&q) if q == c => {
                            i += 1;
                            if b.get(i) != Some(&c) {
                                break;
                            }
                            i += 1;
                        }
                        Some(_) => i += 1,
                    }
                }
                i = i.min(b.len());
                out.push(Token::Quoted);
            }
            b'$' if sql[i + 1..].contains('$') => {
                // `$tag$…$tag$`; else a word holding `$`.
                let tag_end = i + 1 + sql[i + 1..].find('$').unwrap_or_default() + 1;
                let tag = &sql[i..tag_end];
                match sql[tag_end..].find(tag) {
                    Some(at) => {
                        i = tag_end + at + tag.len();
                        out.push(Token::Quoted);
                    }
                    None => {
                        let start = i;
                        while i < b.len() && word(b[i]) {
                            i += 1;
                        }
                        out.push(Token::Word(&sql[start..i]));
                    }
                }
            }
            c if word(c) => {
                let start = i;
                while i < b.len() && word(b[i]) {
                    i += 1;
                }
                out.push(Token::Word(&sql[start..i]));
            }
            _ => {
                let ch = sql[i..].chars().next().unwrap_or('?');
                out.push(Token::Punct(ch));
                i += ch.len_utf8();
            }
        }
    }
    out
}

/// Why `sql --store` does not send `statement` to ClickHouse, or None when it
/// only reads. It must start with a reading keyword; and whatever ClickHouse
/// lets a reading statement do besides is refused: `INTO OUTFILE` (the server
/// writes the file, `readonly=1` or not), a `FORMAT` clause (the reply is read
/// as JSON rows: another format broke the reader), a `SETTINGS` clause (the
/// settings are ours: `readonly=1`, `--timeout`) and a second statement.
pub fn refused_on_store(statement: &str) -> Option<String> {
    let tokens = tokens(statement);
    let first = tokens.iter().find(|t| **t != Token::Punct('('));
    let is = |t: Option<&Token>, word: &str| matches!(t, Some(Token::Word(w)) if w.eq_ignore_ascii_case(word));
    match first {
        Some(Token::Word(w)) if READS.iter().any(|r| w.eq_ignore_ascii_case(r)) => {}
        Some(Token::Word(w)) => {
            return Some(format!(
                "it starts with {}: only SELECT, WITH, SHOW, DESCRIBE, EXPLAIN and EXISTS are run",
                w.to_ascii_uppercase()
            ));
        }
        _ => {
            return Some(
                "it holds no statement: only SELECT, WITH, SHOW, DESCRIBE, EXPLAIN and EXISTS are run"
                    .to_string(),
            );
        }
    }
    for (at, t) in tokens.iter().enumerate() {
        let before = at.checked_sub(1).and_then(|b| tokens.get(b));
        let after = tokens.get(at + 1);
        // NB: `t.format`, `system.settings`: names, not clauses.
        let qualified = before == Some(&Token::Punct('.'));
        match t {
            Token::Word(_) if is(Some(t), "INTO") && is(after, "OUTFILE") => {
                return Some(
                    "INTO OUTFILE is refused: it writes a file on the ClickHouse server; redirect the output instead (> FILE)"
                        .to_string(),
                );
            }
            Token::Word(w)
                if w.eq_ignore_ascii_case("FORMAT")
                    && !qualified
                    && after != Some(&Token::Punct('(')) =>
            {
                return Some(
                    "a FORMAT clause is refused: the rows are read as JSON and printed as -o/--output says (table, json, jsonl, csv); leave FORMAT out (a column named format: quote it, `format`)"
                        .to_string(),
                );
            }
            Token::Word(w)
                if w.eq_ignore_ascii_case("SETTINGS")
                    && !qualified
                    && !is(before, "SHOW")
                    && !is(before, "CHANGED") =>
            {
                return Some(
                    "a SETTINGS clause is refused: the store is read with its own settings (readonly=1, --timeout as max_execution_time); leave SETTINGS out"
                        .to_string(),
                );
            }
            Token::Punct(';') if tokens[at + 1..].iter().any(|t| *t != Token::Punct(';')) => {
                return Some("a second statement is refused: give one statement".to_string());
            }
            _ => {}
        }
    }
    None
}

/// `sql --store clickhouse://…`: the statement runs in ClickHouse (its SQL,
/// every cluster's rows; docs/schema.md), read-only twice over: only reading
/// statements are sent, and each with `readonly=1`, so the server refuses
/// any write too.
fn run_clickhouse(
    url: &crate::ship::url::ClickHouseUrl,
    args: &SqlOptions,
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    if !args.param.is_empty() {
        anyhow::bail!(
            "--param is for the SQLite recording; against ClickHouse write the values into the statement"
        );
    }
    if let Some(why) = refused_on_store(&args.statement) {
        anyhow::bail!("sql over {} is read-only: {why}", url.shown());
    }
    let timeout = args
        .timeout
        .filter(|ms| *ms > 0)
        .map(|ms| (ms + 999) / 1000);
    // NB: the server stops the statement at --timeout (max_execution_time) and says so;
    // the client gives up a few seconds later, whatever the server does (issue 44.6).
    // Without --timeout, 10 minutes without a byte of the reply.
    let whole = timeout.map(|s| std::time::Duration::from_secs(s.unsigned_abs() + 5));
    let limits = crate::ship::http::Limits {
        connect: crate::ship::http::CONNECT_TIMEOUT,
        idle: Some(whole.unwrap_or(std::time::Duration::from_secs(600))),
    };
    let ch = crate::ship::clickhouse::ClickHouse::with_limits(url, limits, whole);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let text = runtime
        .block_on(ch.select_json(&args.statement, timeout))
        .map_err(|e| match e.to_string() {
            t if t.contains("(READONLY)") => anyhow::anyhow!(
                "sql over {} is read-only: the server refused a write in the statement",
                url.shown()
            ),
            t if whole.is_some()
                && (t.contains("no whole answer") || t.contains("(read timeout)")) =>
            {
                anyhow::anyhow!(
                    "{t}: given up {} s past --timeout {}",
                    whole.unwrap_or_default().as_secs()
                        - timeout.unwrap_or_default().unsigned_abs(),
                    crate::units::exact_duration(args.timeout.unwrap_or_default())
                )
            }
            t => anyhow::anyhow!("{t}"),
        })?;
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let columns: Vec<String> = match lines.next() {
        Some(first) => serde_json::from_str(first)
            .with_context(|| format!("reading the reply of {}", url.shown()))?,
        None => Vec::new(),
    };
    let mut rows = Vec::new();
    for line in lines {
        let values: Vec<serde_json::Value> = serde_json::from_str(line)
            .with_context(|| format!("reading the reply of {}", url.shown()))?;
        rows.push(
            values
                .into_iter()
                .map(|v| match v {
                    serde_json::Value::Null => Cell::Null,
                    serde_json::Value::Number(n) => n
                        .as_i64()
                        .map(Cell::Integer)
                        .or_else(|| n.as_f64().map(Cell::Real))
                        .unwrap_or(Cell::Text(n.to_string())),
                    serde_json::Value::String(s) => Cell::Text(s),
                    serde_json::Value::Bool(b) => Cell::Integer(i64::from(b)),
                    other => Cell::Text(other.to_string()),
                })
                .collect(),
        );
    }
    let mut buffered = std::io::BufWriter::with_capacity(64 * 1024, out);
    render(&ResultSet { columns, rows }, args.output, &mut buffered)?;
    buffered.flush()?;
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

    fn rendered(format: RowsOutput) -> String {
        let mut out = Vec::new();
        render(&set(), format, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn only_reading_statements_go_to_clickhouse() {
        for ok in [
            "SELECT 1",
            "  with x as (select 1) select * from x",
            "-- c\nSHOW TABLES",
            "/* a */ (SELECT 1)",
            "explain select 1",
            "SELECT 1;",
            "SELECT t.format, formatDateTime(now(), '%F'), format('{}', 1) FROM t",
            "SELECT name FROM system.settings WHERE name = 'readonly'",
            "SHOW SETTINGS LIKE 'max%'",
            "SELECT 'INTO OUTFILE', \"FORMAT\", `SETTINGS`, $x$ INSERT; FORMAT $x$",
            "SELECT 1 -- FORMAT TSV\n",
            "SELECT 1 # SETTINGS a=1\n",
            "SELECT 'it''s', 'a\\'b' FROM t",
        ] {
            assert_eq!(refused_on_store(ok), None, "{ok}");
        }
        for bad in [
            "INSERT INTO t VALUES (1)",
            "DROP TABLE occurrences",
            "ALTER TABLE x DELETE WHERE 1",
            "OPTIMIZE TABLE versions FINAL",
            "",
            "-- only a comment",
        ] {
            assert!(refused_on_store(bad).is_some(), "{bad}");
        }
    }

    /// Regression (issue 44.5): ClickHouse nests comments, so the guard read
    /// `/* /* */ SELECT */ INSERT …` as a SELECT; `INTO OUTFILE` wrote a file on
    /// the server; `FORMAT TSV` broke the reader ("expected a sequence").
    #[test]
    fn a_nested_comment_into_outfile_format_and_settings_are_refused_on_the_store() {
        for (bad, says) in [
            (
                "/* /* */ SELECT */ INSERT INTO t VALUES (1)",
                "starts with INSERT",
            ),
            ("/*/**/SELECT*/DROP TABLE t", "starts with DROP"),
            ("SELECT 1 INTO OUTFILE '/tmp/x'", "INTO OUTFILE"),
            (
                "select 1 into /* x */ outfile '/tmp/x' format CSV",
                "INTO OUTFILE",
            ),
            ("SELECT * FROM t FORMAT TSV", "FORMAT clause"),
            ("SELECT 1 format\nJSON", "FORMAT clause"),
            ("SELECT 1 SETTINGS readonly = 0", "SETTINGS clause"),
            (
                "SELECT * FROM (SELECT 1 SETTINGS max_threads = 1)",
                "SETTINGS clause",
            ),
            ("SELECT 1; INSERT INTO t VALUES (1)", "second statement"),
            ("SELECT '/*' /* ' */ INTO OUTFILE 'x'", "INTO OUTFILE"),
            ("SELECT 1 // x\n FORMAT TSV", "FORMAT clause"),
        ] {
            let why = refused_on_store(bad).unwrap_or_else(|| panic!("{bad} passed"));
            assert!(why.contains(says), "{bad}: {why}");
        }
    }

    #[test]
    fn golden_table() {
        assert_eq!(
            rendered(RowsOutput::Table),
            " REASON           N   NOTE\n BackOff          12\n Failed, \"badly\"  3   x\n"
        );
    }

    #[test]
    fn golden_json() {
        assert_eq!(
            rendered(RowsOutput::Json),
            "[\n  {\n    \"reason\": \"BackOff\",\n    \"n\": 12,\n    \"note\": null\n  },\n  {\n    \"reason\": \"Failed, \\\"badly\\\"\",\n    \"n\": 3,\n    \"note\": \"x\"\n  }\n]\n"
        );
    }

    #[test]
    fn golden_csv() {
        assert_eq!(
            rendered(RowsOutput::Csv),
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

    #[test]
    fn golden_jsonl_and_empty_json() {
        assert_eq!(
            rendered(RowsOutput::Jsonl),
            "{\"reason\":\"BackOff\",\"n\":12,\"note\":null}\n{\"reason\":\"Failed, \\\"badly\\\"\",\"n\":3,\"note\":\"x\"}\n"
        );
        let empty = ResultSet {
            columns: vec!["a".into()],
            rows: Vec::new(),
        };
        let mut out = Vec::new();
        render(&empty, RowsOutput::Json, &mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "[]\n");
    }

    /// The streamed bytes are the collected ones, for every format.
    #[test]
    fn streaming_writes_what_rendering_the_whole_set_writes() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        let sql = "SELECT 'BackOff' AS reason, 12 AS n, NULL AS note \
                   UNION ALL SELECT 'Failed, \"badly\"', 3, 'x' \
                   UNION ALL SELECT 'multi\nline', 1.5, X'00ff'";
        let set = execute(&conn, sql, &[]).unwrap();
        for format in [
            RowsOutput::Table,
            RowsOutput::Json,
            RowsOutput::Jsonl,
            RowsOutput::Csv,
        ] {
            let mut whole = Vec::new();
            render(&set, format, &mut whole).unwrap();
            let mut streamed = Vec::new();
            assert_eq!(stream(&conn, sql, &[], format, &mut streamed).unwrap(), 3);
            assert_eq!(
                String::from_utf8(streamed).unwrap(),
                String::from_utf8(whole).unwrap(),
                "{format:?}"
            );
        }
        let mut pretty = Vec::new();
        render(&set, RowsOutput::Json, &mut pretty).unwrap();
        let rows: Vec<serde_json::Value> = serde_json::from_slice(&pretty).unwrap();
        assert_eq!(rows.len(), 3);
    }

    /// A writer that fails like a closed pipe after `left` bytes.
    struct ClosedAfter {
        left: usize,
    }

    impl Write for ClosedAfter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if self.left == 0 {
                return Err(std::io::ErrorKind::BrokenPipe.into());
            }
            let n = buf.len().min(self.left);
            self.left -= n;
            Ok(n)
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn an_endless_result_stops_at_a_closed_pipe() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        let endless =
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT i FROM n";
        for format in [RowsOutput::Json, RowsOutput::Jsonl, RowsOutput::Csv] {
            let err =
                stream(&conn, endless, &[], format, &mut ClosedAfter { left: 4096 }).unwrap_err();
            assert!(
                matches!(&err, StreamError::Write(e) if e.kind() == std::io::ErrorKind::BrokenPipe),
                "{format:?}: {err}"
            );
        }
    }

    #[test]
    fn a_deadline_interrupts_the_statement_and_says_so() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        let endless = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT COUNT(*) FROM n";
        let started = std::time::Instant::now();
        let deadline = Deadline::start(&conn, Duration::from_millis(200));
        let result = stream(&conn, endless, &[], RowsOutput::Csv, &mut Vec::new());
        assert!(deadline.end());
        assert!(
            matches!(
                result,
                Err(StreamError::Sql(rusqlite::Error::SqliteFailure(e, _)))
                    if e.code == rusqlite::ErrorCode::OperationInterrupted
            ),
            "{result:?}"
        );
        assert!(started.elapsed() < Duration::from_secs(10));
        // A statement that ends first is not interrupted, and neither is the next one.
        let deadline = Deadline::start(&conn, Duration::from_secs(60));
        assert_eq!(
            stream(&conn, "SELECT 1", &[], RowsOutput::Csv, &mut Vec::new()).unwrap(),
            1
        );
        assert!(!deadline.end());
        assert_eq!(
            stream(&conn, "SELECT 2", &[], RowsOutput::Csv, &mut Vec::new()).unwrap(),
            1
        );
    }
}
