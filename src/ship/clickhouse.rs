//! The ClickHouse destination and store: the schema, inserts of batches with
//! a deterministic deduplication token, and reads of whole tables back for
//! `--store`. Over HTTP with the official `clickhouse` crate (RowBinary).

use clickhouse::Client;

use super::outbox::Batch;
use super::tables::{TABLES, Table};
use super::url::ClickHouseUrl;

const SCHEMA: &str = include_str!("../../queries/clickhouse/schema.sql");
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

/// A connection to one database.
pub struct ClickHouse {
    client: Client,
    url: ClickHouseUrl,
    /// The strings the outbox reader read, kept from one batch to the next.
    pub strings: std::sync::Mutex<super::outbox::StringCache>,
}

impl ClickHouse {
    pub fn new(url: &ClickHouseUrl) -> ClickHouse {
        let mut client = Client::default()
            .with_url(url.http())
            .with_user(url.user.clone())
            .with_database(url.database.clone())
            // NB: plain RowBinary; the columns are checked against the
            // schema by a unit test, not fetched before every insert.
            .with_validation(false);
        if !url.password.is_empty() {
            client = client.with_password(url.password.clone());
        }
        ClickHouse {
            client,
            url: url.clone(),
            strings: std::sync::Mutex::default(),
        }
    }

    pub fn url(&self) -> &ClickHouseUrl {
        &self.url
    }

    fn explain(&self, e: clickhouse::error::Error) -> ChError {
        let url = self.url.shown();
        let text = e.to_string();
        let detail = text.lines().next().unwrap_or_default().trim().to_string();
        match code_of(&text) {
            Some(516 | 192 | 193 | 194 | 195 | 196 | 197) => ChError::Refused {
                url,
                detail,
                hint: ": check the user and password (URL, KUBECTL_DIAG_CLICKHOUSE_PASSWORD or --ship-password-file)",
            },
            Some(60 | 16 | 47 | 81) => ChError::Refused {
                url,
                detail,
                hint: ": the kubectl-diag database or tables are missing or older; create them with record --ship-create-schema or ship --create-schema (or from queries/clickhouse/schema.sql)",
            },
            Some(164 | 497) => ChError::Refused {
                url,
                detail,
                hint: ": the user may not write there; grant INSERT on the database's tables",
            },
            Some(_) => ChError::Refused {
                url,
                detail,
                hint: "",
            },
            None => ChError::Unavailable { url, detail },
        }
    }

    /// Creates the tables (`IF NOT EXISTS`): `on_cluster` for a ClickHouse
    /// cluster (then with Replicated engines), `ttl_secs` from `--retain`.
    pub async fn create_schema(
        &self,
        on_cluster: Option<&str>,
        ttl_secs: Option<i64>,
    ) -> Result<(), ChError> {
        // NB: the database first, from a client that names none (a request
        // naming a database that does not exist fails before it runs).
        let bare = Client::default()
            .with_url(self.url.http())
            .with_user(self.url.user.clone())
            .with_password(self.url.password.clone())
            .with_validation(false);
        let on = on_cluster
            .map(|c| format!(" ON CLUSTER {c}"))
            .unwrap_or_default();
        bare.query(&format!(
            "CREATE DATABASE IF NOT EXISTS {}{on}",
            self.url.database
        ))
        .execute()
        .await
        .map_err(|e| self.explain(e))?;
        for stmt in schema_statements(on_cluster, ttl_secs) {
            self.client
                .query(&stmt)
                .execute()
                .await
                .map_err(|e| self.explain(e))?;
        }
        Ok(())
    }

    /// Whether the tables are there: Ok, or the refusal that says what to do.
    pub async fn probe(&self) -> Result<(), ChError> {
        self.client
            .query(SQL_PROBE)
            .fetch_bytes("RowBinary")
            .map_err(|e| self.explain(e))?
            .collect()
            .await
            .map(|_| ())
            .map_err(|e| self.explain(e))
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
            insert
                .send(bytes::Bytes::copy_from_slice(&part.data))
                .await
                .map_err(|e| self.explain(e))?;
            insert.end().await.map_err(|e| self.explain(e))?;
        }
        Ok(())
    }

    /// The clusters this database holds: (uid, label).
    pub async fn clusters(&self) -> Result<Vec<(String, String)>, ChError> {
        let bytes = self
            .client
            .query(SQL_CLUSTERS)
            .fetch_bytes("RowBinary")
            .map_err(|e| self.explain(e))?
            .collect()
            .await
            .map_err(|e| self.explain(e))?;
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
        query
            // NB: the same refusal of writes as `sql` on SQLite, by the server itself.
            .with_setting("readonly", "1")
            .fetch_bytes("RowBinary")
            .map_err(|e| self.explain(e))?
            .collect()
            .await
            .map_err(|e| self.explain(e))
    }

    /// A reading statement of ours (`queries/clickhouse/`), to bind and fetch.
    pub fn query(&self, sql: &str) -> clickhouse::query::Query {
        self.client.query(sql)
    }

    /// A statement's rows as RowBinary, `readonly=1`.
    pub async fn fetch(&self, query: clickhouse::query::Query) -> Result<bytes::Bytes, ChError> {
        query
            .with_setting("readonly", "1")
            .fetch_bytes("RowBinary")
            .map_err(|e| self.explain(e))?
            .collect()
            .await
            .map_err(|e| self.explain(e))
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
        let bytes = q
            .fetch_bytes("JSONCompactEachRowWithNames")
            .map_err(|e| self.explain(e))?
            .collect()
            .await
            .map_err(|e| self.explain(e))?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }
}

/// The DDL with its markers replaced: `on_cluster` (a validated name) and a TTL in seconds.
pub fn schema_statements(on_cluster: Option<&str>, ttl_secs: Option<i64>) -> Vec<String> {
    let mut out = Vec::new();
    for stmt in SCHEMA.split("\n;\n") {
        let Some(at) = stmt.find("CREATE TABLE") else {
            continue;
        };
        let stmt = &stmt[at..];
        let name = stmt
            .trim_start_matches("CREATE TABLE IF NOT EXISTS ")
            .split_whitespace()
            .next()
            .unwrap_or_default();
        let (on, engine, settings) = match on_cluster {
            Some(c) => (
                format!("ON CLUSTER {c}"),
                format!(
                    "ReplicatedReplacingMergeTree('/clickhouse/tables/{{shard}}/{{database}}/{name}', '{{replica}}', ver)"
                ),
                String::new(),
            ),
            None => (
                String::new(),
                "ReplacingMergeTree(ver)".to_string(),
                // NB: a MergeTree that is not replicated deduplicates inserts
                // only with a window; the replicated ones have one by default.
                "SETTINGS non_replicated_deduplication_window = 1000".to_string(),
            ),
        };
        let mut s = stmt
            .replace("@ON_CLUSTER@", &on)
            .replace("@ENGINE@", &engine)
            .replace("@SETTINGS@", &settings);
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
        assert_eq!(single.len(), TABLES.len());
        assert!(single.iter().all(|s| !s.contains('@')));
        assert!(single[0].contains("ReplacingMergeTree(ver)"));
        assert!(
            single
                .iter()
                .any(|s| s.contains("TTL toDateTime(last) + INTERVAL 86400 SECOND"))
        );
        let replicated = schema_statements(Some("fleet"), None);
        assert!(replicated.iter().all(|s| s.contains("ON CLUSTER fleet")));
        assert!(replicated.iter().all(|s| !s.contains("TTL")));
        assert!(replicated[0].contains("ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/clusters', '{replica}', ver)"));
        assert!(!valid_cluster_name("a b"));
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
