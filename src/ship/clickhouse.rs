//! The ClickHouse destination and store: the schema, inserts of batches with
//! a deterministic deduplication token, and reads of whole tables back for
//! `--store`. Over HTTP with the official `clickhouse` crate (RowBinary).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use clickhouse::Client;

use super::http::{CONNECT_TIMEOUT, Cut, Limits};
use super::outbox::Batch;
use super::tables::{TABLES, Table};
use super::url::ClickHouseUrl;

const SCHEMA: &str = include_str!("../../queries/clickhouse/schema.sql");
const DERIVED: &str = include_str!("../../queries/clickhouse/latest.sql");
const SQL_CLUSTERS: &str = include_str!("../../queries/clickhouse/clusters.sql");
const SQL_PROBE: &str = include_str!("../../queries/clickhouse/probe.sql");

/// Why ClickHouse did not take or give what was asked.
#[derive(Debug, thiserror::Error)]
pub enum ChError {
    /// It could not be reached, or answered 5xx/503: worth trying again as it is.
    #[error("{url} does not answer: {detail}")]
    Unavailable { url: String, detail: String },
    /// It asked to be asked again later (429/503 with Retry-After): worth trying again after `after`.
    #[error("{url} is busy: {detail} (asks to wait {} s)", after.as_secs())]
    Busy {
        url: String,
        detail: String,
        after: std::time::Duration,
    },
    /// It refused: something must change first (credentials, the schema, the database).
    #[error("{url} refused: {detail}{hint}")]
    Refused {
        url: String,
        detail: String,
        hint: &'static str,
    },
}

impl ChError {
    pub fn retry(&self) -> bool {
        matches!(self, ChError::Unavailable { .. } | ChError::Busy { .. })
    }

    /// How long to wait before the next try, after `failures` failures: what the
    /// destination asked for (Retry-After), else the backoff.
    pub fn wait(&self, failures: u32) -> std::time::Duration {
        match self {
            ChError::Busy { after, .. } => *after,
            _ => super::backoff(failures),
        }
    }
}

/// ClickHouse's exception code in a reply's text ("Code: 60. DB::Exception: …").
fn code_of(text: &str) -> Option<u32> {
    let rest = &text[text.find("Code: ")? + 6..];
    rest.split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

/// What a request to ClickHouse was for: the hint of a refusal depends on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Creating the schema or inserting a batch (`--ship`, `ship --to`).
    Write,
    /// The start probe of a shipper: reads our tables, to write them next.
    Probe,
    /// Reading our tables back (`--store`).
    Read,
    /// The user's own statement (`sql --store`).
    Statement,
}

/// A ClickHouse client error as said to the user: the exception with the hint
/// its code and `op` call for, or, with no exception, why the server was not
/// reached (the whole chain of causes: "client error (Connect)" alone says
/// nothing; a name that does not resolve is said so).
pub fn explain(url: &ClickHouseUrl, op: Op, e: &(dyn std::error::Error + 'static)) -> ChError {
    let shown = url.shown();
    let text = e.to_string();
    let Some(code) = code_of(&text) else {
        return ChError::Unavailable {
            url: shown,
            detail: crate::render::escape(&unreached(&url.host, e)).into_owned(),
        };
    };
    let detail = crate::render::escape(text.lines().next().unwrap_or_default().trim()).into_owned();
    let hint = match (code, op) {
        (516 | 192 | 193 | 194 | 195 | 196 | 197, _) => {
            ": check the user and password (URL, KUBECTL_DIAG_CLICKHOUSE_PASSWORD or --ship-password-file)"
        }
        (60 | 16 | 47, Op::Statement) => {
            ": the statement names a table or column this database does not have (SHOW TABLES and DESCRIBE TABLE name list them; docs/schema.md describes kubectl-diag's)"
        }
        (60 | 16 | 47 | 81, _) => {
            ": the kubectl-diag database or tables are missing or older; create them with record --ship-create-schema or ship --create-schema (or from queries/clickhouse/schema.sql and latest.sql)"
        }
        (497, Op::Read | Op::Statement) => {
            ": the user may not read there; grant SELECT on the database's tables"
        }
        (497, Op::Probe) => {
            ": the user may not read or write there; grant SELECT and INSERT on the database's tables"
        }
        (164, Op::Read | Op::Statement) => {
            ": the store is read with readonly=1, and the statement writes or changes a setting"
        }
        (164 | 497, _) => ": the user may not write there; grant INSERT on the database's tables",
        _ => "",
    };
    ChError::Refused {
        url: shown,
        detail,
        hint,
    }
}

/// Why `host` was not reached, from an error's chain of causes.
pub(crate) fn unreached(host: &str, e: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut next = Some(e);
    while let Some(err) = next {
        let t = err.to_string();
        // NB: a cause is often in its wrapper's text too ("network error: client error (Connect)").
        if !parts.last().is_some_and(|p| p.contains(&t)) {
            parts.push(t);
        }
        next = err.source();
    }
    let whole = parts.join(": ");
    let lower = whole.to_ascii_lowercase();
    if lower.contains("dns error")
        || lower.contains("failed to lookup address")
        || lower.contains("name or service not known")
        || lower.contains("nodename nor servname")
    {
        let last = parts.last().map_or("", String::as_str);
        return format!(
            "the host name {host:?} cannot be resolved ({last}): check the host in the URL"
        );
    }
    whole.lines().next().unwrap_or_default().trim().to_string()
}

/// How long a shipper's start probe (and the first statement of
/// `--ship-create-schema`) may take: `record` goes on with a warning past it.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(10);
/// How long one insert or schema statement may take.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a statement ON CLUSTER may take, or say nothing: the server's
/// `distributed_ddl_task_timeout` (180 s by default) and some.
pub const DDL_ON_CLUSTER_TIMEOUT: Duration = Duration::from_secs(200);
/// How long a `--store` reader may wait for the list of clusters.
pub const CLUSTERS_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a `--store` reader may take to read one table.
pub const READ_TIMEOUT: Duration = Duration::from_secs(600);
/// The most read of a reply we expect to be small (the probe's, the clusters').
const SMALL_REPLY_CAP: usize = 16 * 1024 * 1024;

/// The shipper's limits: 30 s without a byte while an answer is awaited.
pub const SHIP_LIMITS: Limits = Limits {
    connect: CONNECT_TIMEOUT,
    idle: Some(Duration::from_secs(30)),
};
/// A `--store` reader's: 60 s without a byte (a `FINAL` read may think before its first row).
pub const STORE_LIMITS: Limits = Limits {
    connect: CONNECT_TIMEOUT,
    idle: Some(Duration::from_secs(60)),
};

/// A connection to one database.
pub struct ClickHouse {
    client: Client,
    /// The same, naming no database (to create it); boxed: seldom used, and
    /// [`super::Destination`]'s variants stay of a size.
    bare: Box<Client>,
    url: ClickHouseUrl,
    /// Whether a connection cut an error's reply at its cap.
    cut: Arc<Cut>,
    /// The whole-request limit of `sql --store` (from `--timeout`).
    statement_timeout: Option<Duration>,
    /// The strings the outbox reader read, kept from one batch to the next.
    pub strings: std::sync::Mutex<super::outbox::StringCache>,
}

impl ClickHouse {
    /// A shipper's client ([`SHIP_LIMITS`]).
    pub fn new(url: &ClickHouseUrl) -> ClickHouse {
        ClickHouse::with_limits(url, SHIP_LIMITS, None)
    }

    /// A client with these connect and idle limits; `statement_timeout`
    /// bounds [`ClickHouse::select_json`].
    pub fn with_limits(
        url: &ClickHouseUrl,
        limits: Limits,
        statement_timeout: Option<Duration>,
    ) -> ClickHouse {
        let cut = Arc::new(Cut::default());
        let http =
            hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
                // NB: as the crate's default client: ClickHouse drops an idle connection after 3 s.
                .pool_idle_timeout(Duration::from_secs(2))
                .build(super::http::connector(limits, false, cut.clone()));
        let mut bare = Client::with_http_client(http.clone())
            .with_url(url.http())
            .with_user(url.user.clone())
            .with_validation(false);
        let mut client = Client::with_http_client(http)
            .with_url(url.http())
            .with_user(url.user.clone())
            .with_database(url.database.clone())
            // NB: plain RowBinary; the columns are checked against the
            // schema by a unit test, not fetched before every insert.
            .with_validation(false);
        if !url.password.is_empty() {
            client = client.with_password(url.password.clone());
            bare = bare.with_password(url.password.clone());
        }
        ClickHouse {
            client,
            bare: Box::new(bare),
            url: url.clone(),
            cut,
            statement_timeout,
            strings: std::sync::Mutex::default(),
        }
    }

    /// Runs a request within `limit` (None: no limit), its error explained.
    async fn within<T>(
        &self,
        op: Op,
        limit: Option<Duration>,
        request: impl Future<Output = Result<T, clickhouse::error::Error>>,
    ) -> Result<T, ChError> {
        let done = match limit {
            Some(limit) => match tokio::time::timeout(limit, request).await {
                Ok(done) => done,
                Err(_) => {
                    return Err(ChError::Unavailable {
                        url: self.url.shown(),
                        detail: format!("no whole answer in {} s", limit.as_secs()),
                    });
                }
            },
            None => request.await,
        };
        done.map_err(|e| self.explain(op, e))
    }

    /// A reply's rows, at most `cap` bytes of them.
    async fn fetch_capped(
        &self,
        op: Op,
        query: clickhouse::query::Query,
        cap: usize,
    ) -> Result<bytes::Bytes, ChError> {
        let mut cursor = query
            .fetch_bytes("RowBinary")
            .map_err(|e| self.explain(op, e))?;
        let mut out = bytes::BytesMut::new();
        while let Some(chunk) = cursor.next().await.map_err(|e| self.explain(op, e))? {
            if out.len() + chunk.len() > cap {
                return Err(ChError::Refused {
                    url: self.url.shown(),
                    detail: format!("the reply is over {} KiB: not read past that", cap / 1024),
                    hint: "; is the URL ClickHouse's HTTP interface (port 8123, or 8443 with ?secure=true)?",
                });
            }
            out.extend_from_slice(&chunk);
        }
        Ok(out.freeze())
    }

    pub fn url(&self) -> &ClickHouseUrl {
        &self.url
    }

    fn explain(&self, op: Op, e: clickhouse::error::Error) -> ChError {
        let mut e = explain(&self.url, op, &e);
        // NB: the crate drops the I/O error that cut an error's body, leaving its status only.
        if self.cut.take()
            && let ChError::Unavailable { detail, .. } | ChError::Refused { detail, .. } = &mut e
            && !detail.contains("not read past that")
        {
            detail.push_str(&format!(
                " (its reply is over {} KiB: not read past that)",
                super::http::ERROR_REPLY_CAP / 1024
            ));
        }
        e
    }

    /// Creates the tables (`IF NOT EXISTS`): `on_cluster` for a ClickHouse
    /// cluster (then with Replicated engines), `ttl_secs` from `--retain`.
    pub async fn create_schema(
        &self,
        on_cluster: Option<&str>,
        ttl_secs: Option<i64>,
    ) -> Result<(), ChError> {
        if on_cluster.is_none() {
            // NB: the first request as short as the probe: `record` goes on with a warning past it.
            return self
                .create_all(None, ttl_secs, PROBE_TIMEOUT, WRITE_TIMEOUT)
                .await;
        }
        // NB: a DDL ON CLUSTER waits for every replica (the server's distributed_ddl_task_timeout,
        // 180 s by default) and may say nothing meanwhile: whether the server answers at all is
        // asked first, within the probe's time, and the DDL gets a client of longer limits.
        self.within(
            Op::Write,
            Some(PROBE_TIMEOUT),
            self.bare.query("SELECT 1").execute(),
        )
        .await?;
        let limits = Limits {
            connect: CONNECT_TIMEOUT,
            idle: Some(DDL_ON_CLUSTER_TIMEOUT),
        };
        ClickHouse::with_limits(&self.url, limits, None)
            .create_all(
                on_cluster,
                ttl_secs,
                DDL_ON_CLUSTER_TIMEOUT,
                DDL_ON_CLUSTER_TIMEOUT,
            )
            .await
    }

    /// The database, then the tables: the first statement within `first`, each other within `each`.
    async fn create_all(
        &self,
        on_cluster: Option<&str>,
        ttl_secs: Option<i64>,
        first: Duration,
        each: Duration,
    ) -> Result<(), ChError> {
        // NB: the database first, from a client that names none (a request
        // naming a database that does not exist fails before it runs).
        let on = on_cluster
            .map(|c| format!(" ON CLUSTER {c}"))
            .unwrap_or_default();
        let create = self.bare.query(&format!(
            "CREATE DATABASE IF NOT EXISTS {}{on}",
            self.url.database
        ));
        self.within(Op::Write, Some(first), create.execute())
            .await?;
        for stmt in schema_statements(on_cluster, ttl_secs) {
            self.within(Op::Write, Some(each), self.client.query(&stmt).execute())
                .await?;
        }
        Ok(())
    }

    /// Whether the tables are there: Ok, or the refusal that says what to do.
    pub async fn probe(&self) -> Result<(), ChError> {
        let probe = self.fetch_capped(Op::Probe, self.client.query(SQL_PROBE), 16 * 1024);
        match tokio::time::timeout(PROBE_TIMEOUT, probe).await {
            Ok(done) => done.map(|_| ()),
            Err(_) => Err(ChError::Unavailable {
                url: self.url.shown(),
                detail: format!(
                    "no answer to the start probe in {} s",
                    PROBE_TIMEOUT.as_secs()
                ),
            }),
        }
    }

    /// Inserts every part of a batch. The token of each insert is made of
    /// what it holds, so a batch sent again (a retry, a replay after a
    /// crash) is dropped by ClickHouse's insert deduplication, and whatever
    /// slips through (a batch cut differently) is one row again after
    /// ReplacingMergeTree's merge and for every `FINAL` read.
    pub async fn send(&self, tag: &str, batch: &Batch) -> Result<(), ChError> {
        for part in &batch.parts {
            let token = format!(
                "{tag}:{}:{}-{}:{:016x}",
                part.table.name,
                batch.first,
                batch.last,
                crate::units::fnv1a_bytes(&part.data)
            );
            let mut insert = self
                .client
                .insert_formatted_with(part.table.insert.trim_end())
                .with_setting("insert_deduplication_token", token)
                .with_setting("insert_deduplicate", "1");
            // NB: an insert given up is sent again whole; its token makes that harmless.
            self.within(Op::Write, Some(WRITE_TIMEOUT), async {
                insert
                    .send(bytes::Bytes::copy_from_slice(&part.data))
                    .await?;
                insert.end().await
            })
            .await?;
        }
        Ok(())
    }

    /// The clusters this database holds: (uid, label).
    pub async fn clusters(&self) -> Result<Vec<(String, String)>, ChError> {
        let read = self.fetch_capped(Op::Read, self.client.query(SQL_CLUSTERS), SMALL_REPLY_CAP);
        let bytes = match tokio::time::timeout(CLUSTERS_TIMEOUT, read).await {
            Ok(done) => done?,
            Err(_) => {
                return Err(ChError::Unavailable {
                    url: self.url.shown(),
                    detail: format!(
                        "no list of its clusters in {} s",
                        CLUSTERS_TIMEOUT.as_secs()
                    ),
                });
            }
        };
        let (mut at, mut out) = (0usize, Vec::new());
        while at < bytes.len() {
            let uid = super::rowbinary::read(&bytes, &mut at, "cluster", super::tables::Ty::Str);
            let label = super::rowbinary::read(&bytes, &mut at, "label", super::tables::Ty::Str);
            match (uid, label) {
                (Ok(rusqlite::types::Value::Text(u)), Ok(rusqlite::types::Value::Text(l))) => {
                    out.push((u, l))
                }
                _ => break,
            }
        }
        Ok(out)
    }

    /// A table's rows of these clusters, as RowBinary; of these namespaces
    /// only, for a table that has one (its statement takes three values).
    pub async fn read(
        &self,
        table: &Table,
        clusters: &[String],
        namespaces: Option<&[String]>,
    ) -> Result<bytes::Bytes, ChError> {
        let mut query = self.client.query(table.read).bind(clusters);
        if table.read.matches('?').count() == 3 {
            query = query
                .bind(namespaces.is_none())
                .bind(namespaces.unwrap_or_default());
        }
        // NB: the same refusal of writes as `sql` on SQLite, by the server itself.
        let mut cursor = query
            .with_setting("readonly", "1")
            .fetch_bytes("RowBinary")
            .map_err(|e| self.explain(Op::Read, e))?;
        self.within(Op::Read, Some(READ_TIMEOUT), cursor.collect())
            .await
    }

    /// A reading statement of ours (`queries/clickhouse/`), to bind and fetch.
    pub fn query(&self, sql: &str) -> clickhouse::query::Query {
        self.client.query(sql)
    }

    /// A statement's rows as RowBinary, `readonly=1`.
    pub async fn fetch(&self, query: clickhouse::query::Query) -> Result<bytes::Bytes, ChError> {
        let mut cursor = query
            .with_setting("readonly", "1")
            .fetch_bytes("RowBinary")
            .map_err(|e| self.explain(Op::Read, e))?;
        self.within(Op::Read, Some(READ_TIMEOUT), cursor.collect())
            .await
    }

    /// `sql --store`: one reading statement, its rows as JSON arrays, the
    /// column names first; `readonly=1`, so the server refuses a write too.
    pub async fn select_json(
        &self,
        sql: &str,
        timeout_secs: Option<i64>,
    ) -> Result<String, ChError> {
        let mut q = self
            .client
            .query(sql)
            .with_setting("readonly", "1")
            .with_setting("output_format_json_quote_64bit_integers", "0");
        if let Some(secs) = timeout_secs {
            q = q.with_setting("max_execution_time", secs.to_string());
        }
        let mut cursor = q
            .fetch_bytes("JSONCompactEachRowWithNames")
            .map_err(|e| self.explain(Op::Statement, e))?;
        let bytes = self
            .within(Op::Statement, self.statement_timeout, cursor.collect())
            .await?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }
}

/// The DDL with its markers replaced: `on_cluster` (a validated name) and a TTL in seconds.
/// The shipped tables first ([`TABLES`], schema.sql), then the derived ones (latest.sql).
pub fn schema_statements(on_cluster: Option<&str>, ttl_secs: Option<i64>) -> Vec<String> {
    let mut out = Vec::new();
    for stmt in SCHEMA.split("\n;\n").chain(DERIVED.split("\n;\n")) {
        // NB: the statement starts after its comment lines.
        let Some(at) = stmt.find("CREATE ").or_else(|| stmt.find("INSERT INTO ")) else {
            continue;
        };
        let stmt = &stmt[at..];
        let name = stmt
            .trim_start_matches("CREATE TABLE IF NOT EXISTS ")
            .split_whitespace()
            .next()
            .unwrap_or_default();
        let on = on_cluster.map_or(String::new(), |c| format!("ON CLUSTER {c}"));
        // NB: a MergeTree that is not replicated deduplicates inserts only
        // with a window; the replicated ones have one by default.
        let settings = match on_cluster {
            Some(_) => "",
            None => "SETTINGS non_replicated_deduplication_window = 1000",
        };
        let engine = |version: &str| match on_cluster {
            Some(_) => format!(
                "ReplicatedReplacingMergeTree('/clickhouse/tables/{{shard}}/{{database}}/{name}', '{{replica}}', {version})"
            ),
            None => format!("ReplacingMergeTree({version})"),
        };
        let mut s = stmt
            .replace("@ON_CLUSTER@", &on)
            .replace("@ENGINE@", &engine("ver"))
            .replace("@ENGINE(at)@", &engine("at"))
            .replace("@SETTINGS@", settings);
        while let Some(start) = s.find("@TTL(") {
            let end = s[start..].find(")@").map_or(s.len(), |e| start + e + 2);
            let column = &s[start + 5..end - 2];
            let ttl = match ttl_secs {
                Some(secs) if secs > 0 => {
                    format!("TTL toDateTime({column}) + INTERVAL {secs} SECOND")
                }
                _ => String::new(),
            };
            s.replace_range(start..end, &ttl);
        }
        out.push(s);
    }
    out
}

/// Whether `name` may follow ON CLUSTER.
pub fn valid_cluster_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Every table the schema makes, for tests and docs.
pub fn table_names() -> Vec<&'static str> {
    TABLES.iter().map(|t| t.name).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_is_made_single_or_replicated_with_or_without_ttl() {
        let single = schema_statements(None, Some(86400));
        // The shipped tables, then latest_versions, its one-off fill and its view.
        assert_eq!(single.len(), TABLES.len() + 3);
        let latest = &single[TABLES.len()..];
        assert!(latest[0].starts_with("CREATE TABLE IF NOT EXISTS latest_versions  AS versions"));
        assert!(latest[0].contains("ReplacingMergeTree(at)") && !latest[0].contains("TTL"));
        assert!(latest[1].starts_with("INSERT INTO latest_versions SELECT"));
        assert!(latest[2].contains("MATERIALIZED VIEW IF NOT EXISTS latest_versions_fill"));
        assert!(single.iter().all(|s| !s.contains('@')));
        assert!(single[0].contains("ReplacingMergeTree(ver)"));
        assert!(
            single
                .iter()
                .any(|s| s.contains("TTL toDateTime(last) + INTERVAL 86400 SECOND"))
        );
        let replicated = schema_statements(Some("fleet"), None);
        assert!(
            replicated
                .iter()
                .filter(|s| s.starts_with("CREATE"))
                .all(|s| s.contains("ON CLUSTER fleet"))
        );
        assert!(replicated.iter().all(|s| !s.contains("TTL")));
        assert!(replicated[0].contains("ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/clusters', '{replica}', ver)"));
        assert!(replicated[TABLES.len()].contains(
            "ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/latest_versions', '{replica}', at)"
        ));
        assert!(replicated[TABLES.len() + 2].contains("ON CLUSTER fleet TO latest_versions"));
        assert!(!valid_cluster_name("a b"));
    }

    /// An error and its causes, as hyper's are chained.
    #[derive(Debug)]
    struct Chain(&'static str, Option<Box<Chain>>);

    impl std::fmt::Display for Chain {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }

    impl std::error::Error for Chain {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.1.as_deref().map(|c| c as _)
        }
    }

    fn said(op: Op, text: &str) -> String {
        let url = ClickHouseUrl::parse("clickhouse://diag:pw@ch:8123/diag", None).unwrap();
        let e = clickhouse::error::Error::BadResponse(text.to_string());
        explain(&url, op, &e).to_string()
    }

    /// Regression (issue 44.10): every refusal said what a shipper needs, so a
    /// read refused said "grant INSERT" and a typo in the user's own statement
    /// "create them with --ship-create-schema".
    #[test]
    fn a_refused_read_and_an_unknown_table_in_a_statement_get_their_own_hint() {
        let denied = "Code: 497. DB::Exception: diag: Not enough privileges. (ACCESS_DENIED)";
        for op in [Op::Read, Op::Statement] {
            let e = said(op, denied);
            assert!(e.contains("grant SELECT") && !e.contains("INSERT"), "{e}");
        }
        assert!(said(Op::Write, denied).contains("grant INSERT"));
        let unknown = "Code: 60. DB::Exception: Unknown table expression identifier 'ocurrences'. (UNKNOWN_TABLE)";
        let e = said(Op::Statement, unknown);
        assert!(
            e.contains("SHOW TABLES") && !e.contains("create-schema"),
            "{e}"
        );
        assert!(said(Op::Probe, unknown).contains("--ship-create-schema"));
        assert!(said(Op::Read, unknown).contains("--ship-create-schema"));
    }

    /// Regression (issue 44.10): a typo in the host read "does not answer: client error (Connect)".
    #[test]
    fn a_host_name_that_does_not_resolve_is_said_so() {
        let url = ClickHouseUrl::parse("clickhouse://clickhuose:8123/diag", None).unwrap();
        let dns = Chain(
            "network error: client error (Connect)",
            Some(Box::new(Chain(
                "client error (Connect)",
                Some(Box::new(Chain(
                    "dns error",
                    Some(Box::new(Chain(
                        "failed to lookup address information: Name or service not known",
                        None,
                    ))),
                ))),
            ))),
        );
        let e = explain(&url, Op::Read, &dns);
        assert!(e.retry());
        let e = e.to_string();
        assert!(
            e.contains("the host name \"clickhuose\" cannot be resolved")
                && e.contains("Name or service not known"),
            "{e}"
        );
        let refused = Chain(
            "network error: client error (Connect)",
            Some(Box::new(Chain(
                "client error (Connect)",
                Some(Box::new(Chain(
                    "tcp connect error: Connection refused (os error 111)",
                    None,
                ))),
            ))),
        );
        let e = explain(&url, Op::Write, &refused).to_string();
        assert!(e.contains("Connection refused"), "{e}");
        assert!(!e.contains("cannot be resolved"), "{e}");
    }

    /// Regression (issue 44.4): a ClickHouse exception's text reached the status line raw.
    #[test]
    fn an_exception_text_is_escaped() {
        let e = said(
            Op::Write,
            "Code: 62. DB::Exception: bad \u{1b}]0;owned\u{7} query",
        );
        assert!(!e.contains('\u{1b}') && !e.contains('\u{7}'), "{e:?}");
        assert!(e.contains("\\x1b]0;owned\\x07"), "{e:?}");
    }

    #[test]
    fn an_exception_code_is_read_from_the_reply() {
        assert_eq!(
            code_of("bad response: Code: 60. DB::Exception: Unknown table"),
            Some(60)
        );
        assert_eq!(code_of("refusing"), None);
    }
}
