//! The OTLP logs destination: `otlp+http://host:4318` (or `otlp+https://`),
//! OTLP/HTTP with gzipped protobuf bodies built from the `opentelemetry-proto`
//! messages, sent by our own hyper client so that each answer is read: a batch
//! counts as shipped only when every request of it got a 2xx whose
//! `partial_success` rejected nothing.
//!
//! Only occurrences, object versions and gaps become log records (their own
//! statements, [`OTLP_TABLES`], read from the same outbox as ClickHouse's);
//! the outbox's other keys (objects, relations, update counts, sessions, …)
//! send nothing here. The vocabulary is the collector's `k8seventsreceiver`
//! for Events, `kubectl_diag.*` for the rest (docs/schema.md, "OTLP logs").

use std::borrow::Cow;
use std::collections::HashMap;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use opentelemetry_proto::tonic::collector::logs::v1::{
    ExportLogsServiceRequest, ExportLogsServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::InstrumentationScope;
#[cfg(test)]
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
#[cfg(test)]
use opentelemetry_proto::tonic::logs::v1::{LogRecord, ResourceLogs, ScopeLogs};
#[cfg(test)]
use opentelemetry_proto::tonic::resource::v1::Resource;
use prost::Message as _;
use rusqlite::types::ValueRef;

use super::clickhouse::ChError;
use super::outbox::Batch;
use super::tables::{Table, Ty};

/// The outbox codes of the rows that become records (migration 8's triggers).
pub const CODE_OCCURRENCE: i64 = 1;
pub const CODE_VERSION: i64 = 4;
pub const CODE_GAP: i64 = 7;

/// A request body gzipped, as it is posted. NB: written by the outbox
/// reader (a blocking thread), not by the async sender.
fn gzip(protobuf: &[u8]) -> std::io::Result<Bytes> {
    use std::io::Write as _;
    // NB: room for what level 1 leaves of our records (about a fifth): no regrowth.
    let mut gz = flate2::write::GzEncoder::new(
        Vec::with_capacity(protobuf.len() / 4 + 64),
        flate2::Compression::fast(),
    );
    gz.write_all(protobuf)?;
    Ok(Bytes::from(gz.finish()?))
}

/// How many records one request carries at most (a batch of the outbox may be several requests).
pub const RECORDS_PER_REQUEST: usize = 2_000;

/// How long one request may take before it counts as unanswered.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// How long the start probe may take: `record` goes on with a warning past it.
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// The most read of an answer's body, success or not: an ExportLogsServiceResponse
/// or an error's text is a few hundred bytes (issue 44.7: a 200 streamed endlessly
/// grew the recorder to 6.5 GB).
pub const REPLY_CAP: usize = 16 * 1024;

/// The connect and idle limits of the OTLP client.
const LIMITS: super::http::Limits = super::http::Limits {
    connect: super::http::CONNECT_TIMEOUT,
    idle: Some(Duration::from_secs(30)),
};

/// The longest Retry-After honoured (a longer one waits this long, then asks again).
const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

use Ty::*;

const fn otlp_table(
    name: &'static str,
    code: i64,
    select: &'static str,
    columns: &'static [(&'static str, Ty)],
) -> Table {
    Table {
        name,
        code,
        select,
        insert: "",
        read: "",
        stage: "",
        columns,
    }
}

const OCCURRENCE_COLUMNS: &[(&str, Ty)] = &[
    ("cluster", Str),
    ("cluster_name", Str),
    ("event_uid", Uid),
    ("event_namespace", Id),
    ("event_name", Str),
    ("count", Int),
    ("n", Int),
    ("first", Time),
    ("last", Time),
    ("message", Id),
    ("type", Id),
    ("reason", Id),
    ("action", Id),
    ("controller", Id),
    ("instance", Id),
    ("host", Id),
    ("kind", Id),
    ("namespace", Id),
    ("name", Id),
    ("uid", Str),
    ("api_version", Id),
    ("field_path", Id),
    ("start", Time),
];

const VERSION_COLUMNS: &[(&str, Ty)] = &[
    ("cluster", Str),
    ("cluster_name", Str),
    ("kind", Id),
    ("namespace", Id),
    ("name", Id),
    ("uid", Str),
    ("api_version", Id),
    ("id", Int),
    ("at", Time),
    ("state", Id),
    ("writers", Id),
    ("generation", Int),
    ("observed_generation", NInt),
    ("diff", NId),
    ("resource_version", NStr),
];

const GAP_COLUMNS: &[(&str, Ty)] = &[
    ("cluster", Str),
    ("cluster_name", Str),
    ("id", Int),
    ("resource", Str),
    ("start", Time),
    ("finish", Time),
    ("reason", Str),
    ("detail", Str),
];

/// What the OTLP destination reads from the outbox: one statement per kind
/// of record, each reading all its record says (`queries/ship/otlp/`).
pub const OTLP_TABLES: &[Table] = &[
    otlp_table(
        "occurrences",
        CODE_OCCURRENCE,
        include_str!("../../queries/ship/otlp/occurrences.sql"),
        OCCURRENCE_COLUMNS,
    ),
    otlp_table(
        "versions",
        CODE_VERSION,
        include_str!("../../queries/ship/otlp/versions.sql"),
        VERSION_COLUMNS,
    ),
    otlp_table(
        "gaps",
        CODE_GAP,
        include_str!("../../queries/ship/otlp/gaps.sql"),
        GAP_COLUMNS,
    ),
];

// ---------------------------------------------------------------- the URL

/// An OTLP/HTTP logs endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OtlpUrl {
    pub secure: bool,
    pub host: String,
    pub port: u16,
    /// The path requests are posted to (default `/v1/logs`).
    pub path: String,
}

impl OtlpUrl {
    /// `otlp+http://host[:port][/path]` or `otlp+https://…`; port 4318 (http) or
    /// 443 (https) when left out, path `/v1/logs` when left out (or `/`).
    pub fn parse(text: &str) -> Result<OtlpUrl, super::url::UrlError> {
        let fail = |why: &str| super::url::UrlError::new(text, why);
        let (secure, rest) = if let Some(r) = text.strip_prefix("otlp+https://") {
            (true, r)
        } else if let Some(r) = text.strip_prefix("otlp+http://") {
            (false, r)
        } else {
            return Err(fail(
                "not an OTLP URL: write otlp+http://host[:port][/path] or otlp+https://… (e.g. otlp+http://collector:4318)",
            ));
        };
        if rest.contains('?') || rest.contains('#') {
            return Err(fail(
                "a query or fragment is not understood: give credentials with --ship-header/--header",
            ));
        }
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, ""),
        };
        if authority.contains('@') {
            return Err(fail(
                "credentials do not go in the URL: give them as a header (--ship-header-file/--header-file)",
            ));
        }
        let (host, port) = match authority.rsplit_once(':') {
            Some((h, p)) if !h.is_empty() && !p.contains(']') => {
                let port = p
                    .parse::<u16>()
                    .map_err(|_| fail("the port is not a number: give one such as 4318"))?;
                (h.to_string(), port)
            }
            _ => (authority.to_string(), if secure { 443 } else { 4318 }),
        };
        if host.is_empty() {
            return Err(fail("no host: write otlp+http://HOST:4318"));
        }
        let path = if path.is_empty() || path == "/" {
            "/v1/logs".to_string()
        } else {
            path.to_string()
        };
        Ok(OtlpUrl {
            secure,
            host,
            port,
            path,
        })
    }

    /// As it is shown and stored (it holds no secret: headers are never part of it).
    pub fn shown(&self) -> String {
        format!(
            "otlp+{}://{}:{}{}",
            if self.secure { "https" } else { "http" },
            self.host,
            self.port,
            self.path
        )
    }

    /// The HTTP URL requests go to.
    pub fn http(&self) -> String {
        format!(
            "{}://{}:{}{}",
            if self.secure { "https" } else { "http" },
            self.host,
            self.port,
            self.path
        )
    }
}

// ---------------------------------------------------------------- headers

/// A header whose name is not one. NB: the name is not quoted: `api-key s3cretTOKEN: x`
/// (a space for the colon) puts the secret before the first colon.
const NOT_A_NAME: &str = "the text before the first ':' is not a header name (its text is not shown): write 'Name: value', the name in letters, digits and '-'";

/// Headers from `--ship-header 'Name: value'` (each) and a header file (one per
/// line; blank lines and lines starting with `#` skipped). The value is never
/// part of an error message.
pub fn parse_headers(
    given: &[String],
    file: Option<&std::path::Path>,
    flag: &str,
    file_flag: &str,
) -> anyhow::Result<Vec<(String, String)>> {
    let mut lines: Vec<(String, String)> = given
        .iter()
        .enumerate()
        .map(|(i, h)| (format!("{flag} #{}", i + 1), h.clone()))
        .collect();
    if let Some(path) = file {
        let text = std::fs::read_to_string(path).map_err(|e| {
            anyhow::anyhow!(
                "{file_flag} {}: cannot read it ({e}); give a file of 'Name: value' lines",
                path.display()
            )
        })?;
        for (i, line) in text.lines().enumerate() {
            let line = line.trim_end_matches('\r');
            if line.trim().is_empty() || line.trim_start().starts_with('#') {
                continue;
            }
            lines.push((
                format!("{file_flag} {} line {}", path.display(), i + 1),
                line.to_string(),
            ));
        }
    }
    let mut out = Vec::new();
    for (whence, line) in lines {
        let Some((name, value)) = line.split_once(':') else {
            anyhow::bail!("{whence}: not 'Name: value' (no colon)");
        };
        let (name, value) = (name.trim(), value.trim());
        if http::HeaderName::from_bytes(name.as_bytes()).is_err() {
            anyhow::bail!("{whence}: {NOT_A_NAME}");
        }
        if http::HeaderValue::from_str(value).is_err() {
            anyhow::bail!(
                "{whence}: the value of {name} is not a valid header value (its text is not shown)"
            );
        }
        let lower = name.to_ascii_lowercase();
        if matches!(
            lower.as_str(),
            "content-type" | "content-encoding" | "content-length" | "host" | "transfer-encoding"
        ) {
            anyhow::bail!("{whence}: {name} is set by kubectl-diag itself");
        }
        out.push((name.to_string(), value.to_string()));
    }
    Ok(out)
}

// ---------------------------------------------------------------- log.record.uid

/// RFC 9562's namespace for names that are URLs.
const NAMESPACE_URL: [u8; 16] = [
    0x6b, 0xa7, 0xb8, 0x11, 0x9d, 0xad, 0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8,
];

/// UUID version 5 (SHA-1) of `name` in the URL namespace, as Python's
/// `uuid.uuid5(uuid.NAMESPACE_URL, name)` gives it.
pub fn uuid5(name: &str) -> String {
    uuid5_of(&[name.as_bytes()])
}

/// [`uuid5`] of the name the parts make, joined without a copy.
fn uuid5_of(parts: &[&[u8]]) -> String {
    let mut ctx = ring::digest::Context::new(&ring::digest::SHA1_FOR_LEGACY_USE_ONLY);
    ctx.update(&NAMESPACE_URL);
    for p in parts {
        ctx.update(p);
    }
    let d = ctx.finish();
    let mut b = [0u8; 16];
    b.copy_from_slice(&d.as_ref()[..16]);
    b[6] = (b[6] & 0x0f) | 0x50;
    b[8] = (b[8] & 0x3f) | 0x80;
    // NB: one allocation: this runs once a record (a format! a byte was a tenth of the shipper's CPU).
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(36);
    for (n, x) in b.iter().enumerate() {
        if matches!(n, 4 | 6 | 8 | 10) {
            out.push('-');
        }
        out.push(char::from(HEX[usize::from(x >> 4)]));
        out.push(char::from(HEX[usize::from(x & 0x0f)]));
    }
    out
}

/// The `log.record.uid` of an occurrence row: cluster uid, Event uid, the row's count.
pub fn occurrence_uid(cluster: &str, event_uid: &str, count: i64) -> String {
    // NB: no format!: this runs once a record (issue 32).
    let mut digits = [0u8; 20];
    uuid5_of(&[
        b"kubectl-diag:occurrence/",
        cluster.as_bytes(),
        b"/",
        event_uid.as_bytes(),
        b"/",
        decimal(count, &mut digits),
    ])
}

/// `n` in decimal, as `format!("{n}")` writes it, in `buf`.
fn decimal(n: i64, buf: &mut [u8; 20]) -> &[u8] {
    let mut at = buf.len();
    let mut m = n.unsigned_abs();
    loop {
        at -= 1;
        buf[at] = b'0' + (m % 10) as u8;
        m /= 10;
        if m == 0 {
            break;
        }
    }
    if n < 0 {
        // NB: i64::MIN has 19 digits; 20 bytes hold its sign too.
        at -= 1;
        buf[at] = b'-';
    }
    &buf[at..]
}

/// Of an object version: cluster uid, the object (its uid, or kind/namespace/name
/// when it has none), and its resourceVersion (or, when the version has none,
/// `at:` its time in ms and `:` the version's row id).
pub fn version_uid(
    cluster: &str,
    object: (&str, &str, &str, &str),
    resource_version: Option<&str>,
    at: i64,
    id: i64,
) -> String {
    let (uid, kind, namespace, name) = object;
    let who = if uid.is_empty() {
        format!("{kind}/{namespace}/{name}")
    } else {
        uid.to_string()
    };
    let which = match resource_version {
        Some(rv) if !rv.is_empty() => rv.to_string(),
        _ => format!("at:{at}:{id}"),
    };
    uuid5(&format!("kubectl-diag:version/{cluster}/{who}/{which}"))
}

/// Of a gap: cluster uid, resource, start (ms), reason.
pub fn gap_uid(cluster: &str, resource: &str, start: i64, reason: &str) -> String {
    uuid5(&format!(
        "kubectl-diag:gap/{cluster}/{resource}/{start}/{reason}"
    ))
}

// ---------------------------------------------------------------- records

/// The attribute names this module writes for an Event occurrence, as the
/// collector's k8seventsreceiver names them (checked against its source by a test).
pub mod names {
    pub const CLUSTER_UID: &str = "k8s.cluster.uid";
    pub const CLUSTER_NAME: &str = "k8s.cluster.name";
    pub const SERVICE_NAME: &str = "service.name";
    pub const NODE_NAME: &str = "k8s.node.name";
    pub const OBJECT_KIND: &str = "k8s.object.kind";
    pub const OBJECT_NAME: &str = "k8s.object.name";
    pub const OBJECT_UID: &str = "k8s.object.uid";
    pub const OBJECT_FIELDPATH: &str = "k8s.object.fieldpath";
    pub const OBJECT_API_VERSION: &str = "k8s.object.api_version";
    pub const OBJECT_RESOURCE_VERSION: &str = "k8s.object.resource_version";
    pub const EVENT_REASON: &str = "k8s.event.reason";
    pub const EVENT_ACTION: &str = "k8s.event.action";
    pub const EVENT_START_TIME: &str = "k8s.event.start_time";
    pub const EVENT_NAME: &str = "k8s.event.name";
    pub const EVENT_UID: &str = "k8s.event.uid";
    pub const EVENT_COUNT: &str = "k8s.event.count";
    pub const EVENT_REPORTING_CONTROLLER: &str = "k8s.event.reporting_controller";
    pub const EVENT_REPORTING_INSTANCE: &str = "k8s.event.reporting_instance";
    pub const NAMESPACE_NAME: &str = "k8s.namespace.name";
    pub const RECORD_UID: &str = "log.record.uid";
}

/// An attribute's value as a record holds it: text borrowed from the batch
/// where it can be (most of it: names, reasons, messages), made only where
/// it is computed (times, uids).
#[derive(Debug, Clone, PartialEq)]
pub enum Val<'a> {
    S(Cow<'a, str>),
    I(i64),
}

fn st<'a>(v: impl Into<Cow<'a, str>>) -> Val<'a> {
    Val::S(v.into())
}

/// One log record as read from a batch: what the request bodies are written
/// from ([`Body`]), and what the `opentelemetry-proto` messages the tests
/// measure them by are made of ([`Rec::to_prost`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Rec<'a> {
    pub resource: Vec<(&'static str, Val<'a>)>,
    pub attributes: Vec<(&'static str, Val<'a>)>,
    pub time_unix_nano: u64,
    pub observed_time_unix_nano: u64,
    pub severity_number: i32,
    pub severity_text: Cow<'a, str>,
    pub body: Cow<'a, str>,
}

// NB: the messages are the tests' yardstick only: requests are written by [`Body`].
#[cfg(test)]
impl Rec<'_> {
    /// The record and its resource as the `opentelemetry-proto` messages.
    pub fn to_prost(&self) -> Record {
        fn kvs(list: &[(&'static str, Val<'_>)]) -> Vec<KeyValue> {
            list.iter()
                .map(|(k, v)| KeyValue {
                    key: (*k).to_string(),
                    value: Some(any(v)),
                    ..Default::default()
                })
                .collect()
        }
        fn any(v: &Val<'_>) -> AnyValue {
            AnyValue {
                value: Some(match v {
                    Val::S(s) => any_value::Value::StringValue(s.to_string()),
                    Val::I(n) => any_value::Value::IntValue(*n),
                }),
            }
        }
        Record {
            resource: kvs(&self.resource),
            record: LogRecord {
                time_unix_nano: self.time_unix_nano,
                observed_time_unix_nano: self.observed_time_unix_nano,
                severity_number: self.severity_number,
                severity_text: self.severity_text.to_string(),
                body: Some(any(&Val::S(self.body.clone()))),
                attributes: kvs(&self.attributes),
                ..Default::default()
            },
        }
    }
}

/// Epoch ms as RFC 3339 in UTC with milliseconds.
fn rfc3339(ms: i64) -> String {
    use chrono::{Datelike as _, Timelike as _};
    use std::fmt::Write as _;
    // NB: written field by field: a `format("%Y…")` parses its pattern on every call,
    // and this runs for every record.
    let Some(t) = chrono::DateTime::from_timestamp_millis(ms) else {
        return String::new();
    };
    let mut out = String::with_capacity(24);
    let _ = write!(
        out,
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        t.year(),
        t.month(),
        t.day(),
        t.hour(),
        t.minute(),
        t.second(),
        t.timestamp_subsec_millis()
    );
    out
}

/// Epoch ms as Go's `time.Time.String()` of a `metav1.Time` (what the collector
/// writes in k8s.event.start_time: whole seconds, `+0000 UTC`).
fn go_time(ms: i64) -> String {
    use chrono::{Datelike as _, Timelike as _};
    use std::fmt::Write as _;
    let Some(t) = chrono::DateTime::from_timestamp_millis(ms) else {
        return String::new();
    };
    let mut out = String::with_capacity(29);
    let _ = write!(
        out,
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02} +0000 UTC",
        t.year(),
        t.month(),
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    );
    out
}

fn nanos(ms: i64) -> u64 {
    u64::try_from(ms).unwrap_or(0).saturating_mul(1_000_000)
}

/// The collector's severity number for an Event type (k8s_event_to_logdata.go's
/// severityMap, matched case-insensitively); 0 for a type it does not know.
fn severity_number(event_type: &str) -> i32 {
    const MAP: [(&str, i32); 4] = [
        ("normal", 9),    // SEVERITY_NUMBER_INFO
        ("warning", 13),  // SEVERITY_NUMBER_WARN
        ("error", 17),    // SEVERITY_NUMBER_ERROR
        ("critical", 21), // SEVERITY_NUMBER_FATAL
    ];
    MAP.iter()
        .find(|(t, _)| t.eq_ignore_ascii_case(event_type))
        .map_or(0, |(_, n)| *n)
}

/// The collector's severity for an Event type: (number, text); (0, "") for a
/// type it does not know.
pub fn severity(event_type: &str) -> (i32, String) {
    match severity_number(event_type) {
        0 => (0, String::new()),
        n => (n, event_type.to_string()),
    }
}

/// The index of column `name` in `columns`; a name not there fails the build.
const fn column_index(columns: &[(&str, Ty)], name: &str) -> usize {
    let mut i = 0;
    'columns: while i < columns.len() {
        let (a, b) = (columns[i].0.as_bytes(), name.as_bytes());
        if a.len() == b.len() {
            let mut j = 0;
            while j < a.len() {
                if a[j] != b[j] {
                    i += 1;
                    continue 'columns;
                }
                j += 1;
            }
            return i;
        }
        i += 1;
    }
    panic!("no such column")
}

/// The index of column `$name` of `$columns`, found when building.
/// NB: by name at run time was a tenth of the record writer (issue 32).
macro_rules! col {
    ($columns:expr, $name:literal) => {{
        const I: usize = column_index($columns, $name);
        I
    }};
}

// The cluster's columns come first in every OTLP table ([`cluster_resource`]).
const _: () = {
    let cols = [OCCURRENCE_COLUMNS, VERSION_COLUMNS, GAP_COLUMNS];
    let mut t = 0;
    while t < cols.len() {
        assert!(column_index(cols[t], "cluster") == 0);
        assert!(column_index(cols[t], "cluster_name") == 1);
        t += 1;
    }
};

/// One row as read from SQLite, its text borrowed from it.
struct Row<'r, 'a> {
    values: &'r [ValueRef<'a>],
}

impl<'a> Row<'_, 'a> {
    fn get(&self, i: usize) -> ValueRef<'a> {
        self.values.get(i).copied().unwrap_or(ValueRef::Null)
    }

    /// Text, borrowed from the row (copied only when it is not UTF-8).
    fn s(&self, i: usize) -> Cow<'a, str> {
        match self.get(i) {
            // NB: `from_utf8` first: its ASCII path is several times `from_utf8_lossy`'s.
            ValueRef::Text(t) | ValueRef::Blob(t) => match std::str::from_utf8(t) {
                Ok(s) => Cow::Borrowed(s),
                Err(_) => String::from_utf8_lossy(t),
            },
            ValueRef::Integer(n) => Cow::Owned(n.to_string()),
            _ => Cow::Borrowed(""),
        }
    }

    fn ns(&self, i: usize) -> Option<Cow<'a, str>> {
        match self.get(i) {
            ValueRef::Null => None,
            _ => Some(self.s(i)),
        }
    }

    fn i(&self, i: usize) -> i64 {
        match self.get(i) {
            ValueRef::Integer(n) => n,
            _ => 0,
        }
    }

    fn ni(&self, i: usize) -> Option<i64> {
        match self.get(i) {
            ValueRef::Integer(n) => Some(n),
            _ => None,
        }
    }
}

/// A record and the resource it belongs to, as `opentelemetry-proto` messages.
#[cfg(test)]
pub struct Record {
    pub resource: Vec<KeyValue>,
    pub record: LogRecord,
}

/// The cluster's attributes, with room for `more`.
fn cluster_resource<'a>(row: &Row<'_, 'a>, more: usize) -> Vec<(&'static str, Val<'a>)> {
    let mut out = Vec::with_capacity(3 + more);
    out.extend([
        (names::CLUSTER_UID, Val::S(row.s(0))),
        (names::CLUSTER_NAME, Val::S(row.s(1))),
        (names::SERVICE_NAME, st("kubectl-diag")),
    ]);
    out
}

fn occurrence<'a>(row: &Row<'_, 'a>, now_ns: u64) -> Rec<'a> {
    macro_rules! at {
        ($n:literal) => {
            col!(OCCURRENCE_COLUMNS, $n)
        };
    }
    use names::*;
    let cluster = row.s(at!("cluster"));
    let event_uid = row.s(at!("event_uid"));
    let count = row.i(at!("count"));
    let n = row.i(at!("n"));
    let record_uid = occurrence_uid(&cluster, &event_uid, count);
    // NB: as the recording keeps it (store::compact_event_name): client-go's
    // `<object>.<hex>` as the integer of its hex part.
    let event_name = match row.get(at!("event_name")) {
        ValueRef::Integer(v) => Cow::Owned(format!("{}.{:x}", row.s(at!("name")), v as u64)),
        _ => row.s(at!("event_name")),
    };
    let mut resource = cluster_resource(row, 6);
    // NB: as the collector, the involved object and the reporting node are the
    // record's resource; the object's resourceVersion is not recorded, so left out.
    resource.extend([
        (NODE_NAME, Val::S(row.s(at!("host")))),
        (OBJECT_KIND, Val::S(row.s(at!("kind")))),
        (OBJECT_NAME, Val::S(row.s(at!("name")))),
        (OBJECT_UID, Val::S(row.s(at!("uid")))),
        (OBJECT_FIELDPATH, Val::S(row.s(at!("field_path")))),
        (OBJECT_API_VERSION, Val::S(row.s(at!("api_version")))),
    ]);
    let mut attributes = Vec::with_capacity(14);
    attributes.extend([
        (EVENT_REASON, Val::S(row.s(at!("reason")))),
        (EVENT_ACTION, Val::S(row.s(at!("action")))),
        (EVENT_START_TIME, st(go_time(row.i(at!("start"))))),
        (EVENT_NAME, Val::S(event_name)),
        (EVENT_UID, Val::S(event_uid)),
        (EVENT_REPORTING_CONTROLLER, Val::S(row.s(at!("controller")))),
        (EVENT_REPORTING_INSTANCE, Val::S(row.s(at!("instance")))),
        (NAMESPACE_NAME, Val::S(row.s(at!("namespace")))),
    ]);
    if count != 0 {
        attributes.push((EVENT_COUNT, Val::I(count)));
    }
    attributes.push((RECORD_UID, st(record_uid)));
    attributes.push(("kubectl_diag.kind", st("occurrence")));
    if n > 1 {
        attributes.push(("kubectl_diag.occurrences", Val::I(n)));
        attributes.push(("kubectl_diag.first", st(rfc3339(row.i(at!("first"))))));
        attributes.push(("kubectl_diag.last", st(rfc3339(row.i(at!("last"))))));
    }
    let event_type = row.s(at!("type"));
    let severity_number = severity_number(&event_type);
    Rec {
        resource,
        attributes,
        time_unix_nano: nanos(row.i(at!("last"))),
        observed_time_unix_nano: now_ns,
        severity_number,
        severity_text: if severity_number == 0 {
            Cow::Borrowed("")
        } else {
            event_type
        },
        body: row.s(at!("message")),
    }
}

fn version<'a>(row: &Row<'_, 'a>, now_ns: u64) -> Rec<'a> {
    macro_rules! at {
        ($n:literal) => {
            col!(VERSION_COLUMNS, $n)
        };
    }
    use names::*;
    let cluster = row.s(at!("cluster"));
    let (kind, namespace, name, uid) = (
        row.s(at!("kind")),
        row.s(at!("namespace")),
        row.s(at!("name")),
        row.s(at!("uid")),
    );
    let rv = row.ns(at!("resource_version"));
    let record_uid = version_uid(
        &cluster,
        (&uid, &kind, &namespace, &name),
        rv.as_deref(),
        row.i(at!("at")),
        row.i(at!("id")),
    );
    let object = if namespace.is_empty() {
        format!("{kind} {name}")
    } else {
        format!("{kind} {namespace}/{name}")
    };
    let diff = row.ns(at!("diff"));
    let body = match &diff {
        Some(_) => format!("{object} changed its spec"),
        None => format!("{object} changed"),
    };
    let mut resource = cluster_resource(row, 5);
    resource.extend([
        (OBJECT_KIND, Val::S(kind)),
        (OBJECT_NAME, Val::S(name)),
        (OBJECT_UID, Val::S(uid)),
        (OBJECT_API_VERSION, Val::S(row.s(at!("api_version")))),
    ]);
    if let Some(rv) = rv {
        resource.push((OBJECT_RESOURCE_VERSION, Val::S(rv)));
    }
    let mut attributes = vec![
        (RECORD_UID, st(record_uid)),
        ("kubectl_diag.kind", st("version")),
        (NAMESPACE_NAME, Val::S(namespace)),
        ("kubectl_diag.state", Val::S(row.s(at!("state")))),
        ("kubectl_diag.writers", Val::S(row.s(at!("writers")))),
        ("kubectl_diag.generation", Val::I(row.i(at!("generation")))),
    ];
    if let Some(og) = row.ni(at!("observed_generation")) {
        attributes.push(("kubectl_diag.observed_generation", Val::I(og)));
    }
    if let Some(d) = diff {
        attributes.push(("kubectl_diag.diff", Val::S(d)));
    }
    Rec {
        resource,
        attributes,
        time_unix_nano: nanos(row.i(at!("at"))),
        observed_time_unix_nano: now_ns,
        severity_number: 9,
        severity_text: Cow::Borrowed("INFO"),
        body: Cow::Owned(body),
    }
}

fn gap<'a>(row: &Row<'_, 'a>, now_ns: u64) -> Rec<'a> {
    macro_rules! at {
        ($n:literal) => {
            col!(GAP_COLUMNS, $n)
        };
    }
    use names::*;
    let cluster = row.s(at!("cluster"));
    let (resource_name, reason) = (row.s(at!("resource")), row.s(at!("reason")));
    let (start, finish) = (row.i(at!("start")), row.i(at!("finish")));
    let detail = row.s(at!("detail"));
    let mut body = format!(
        "not recorded: {resource_name} from {} to {} ({reason})",
        rfc3339(start),
        rfc3339(finish)
    );
    if !detail.is_empty() {
        body.push_str(&format!(": {detail}"));
    }
    let attributes = vec![
        (
            RECORD_UID,
            st(gap_uid(&cluster, &resource_name, start, &reason)),
        ),
        ("kubectl_diag.kind", st("gap")),
        ("kubectl_diag.gap.start", st(rfc3339(start))),
        ("kubectl_diag.gap.end", st(rfc3339(finish))),
        ("kubectl_diag.gap.reason", Val::S(reason)),
        ("kubectl_diag.gap.resource", Val::S(resource_name)),
        ("kubectl_diag.gap.detail", Val::S(detail)),
    ];
    Rec {
        resource: cluster_resource(row, 0),
        attributes,
        time_unix_nano: nanos(start),
        observed_time_unix_nano: now_ns,
        severity_number: 13,
        severity_text: Cow::Borrowed("WARN"),
        body: Cow::Owned(body),
    }
}

/// The log record of one row of an OTLP table ([`OTLP_TABLES`]), its
/// values in the table's column order, text borrowed from them.
pub fn record<'a>(table: &'static Table, values: &[ValueRef<'a>], now_ns: u64) -> Rec<'a> {
    let row = Row { values };
    match table.code {
        CODE_OCCURRENCE => occurrence(&row, now_ns),
        CODE_VERSION => version(&row, now_ns),
        _ => gap(&row, now_ns),
    }
}

/// The log records of rows of `table` as `opentelemetry-proto` messages.
#[cfg(test)]
pub fn records(
    table: &'static Table,
    rows: &[Vec<rusqlite::types::Value>],
    now_ns: u64,
) -> Vec<Record> {
    rows.iter()
        .map(|row| {
            let values: Vec<ValueRef<'_>> = row.iter().map(ValueRef::from).collect();
            record(table, &values, now_ns).to_prost()
        })
        .collect()
}

/// One request as `opentelemetry-proto` messages: records grouped by their
/// resource (same attributes, one ResourceLogs). What [`Body`] writes, as
/// prost would encode it.
#[cfg(test)]
pub fn request(records: impl IntoIterator<Item = Record>) -> ExportLogsServiceRequest {
    let mut groups: Vec<ResourceLogs> = Vec::new();
    let mut index: HashMap<Vec<u8>, usize> = HashMap::new();
    for r in records {
        let key = Resource {
            attributes: r.resource.clone(),
            ..Default::default()
        }
        .encode_to_vec();
        let at = match index.get(key.as_slice()) {
            Some(at) => *at,
            None => {
                index.insert(key, groups.len());
                groups.push(ResourceLogs {
                    resource: Some(Resource {
                        attributes: r.resource,
                        ..Default::default()
                    }),
                    scope_logs: vec![ScopeLogs {
                        scope: Some(scope()),
                        ..Default::default()
                    }],
                    ..Default::default()
                });
                groups.len() - 1
            }
        };
        groups[at].scope_logs[0].log_records.push(r.record);
    }
    ExportLogsServiceRequest {
        resource_logs: groups,
    }
}

fn scope() -> InstrumentationScope {
    InstrumentationScope {
        name: "kubectl-diag".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        ..Default::default()
    }
}

/// Protobuf written straight from the records, as prost writes the
/// `opentelemetry-proto` messages (fields in tag order, defaults left out).
mod wire {
    use prost::encoding::encoded_len_varint;

    use super::Val;

    // The wire types this writer uses.
    const VARINT: u32 = 0;
    const FIXED64: u32 = 1;
    const LEN: u32 = 2;

    /// NB: prost's `encode_varint` goes through `BufMut` a byte at a time,
    /// with a capacity check each; it was a tenth of the record writer (issue 32).
    #[inline]
    fn encode_varint(mut n: u64, out: &mut Vec<u8>) {
        out.reserve(10);
        while n >= 0x80 {
            out.push((n as u8) | 0x80);
            n >>= 7;
        }
        out.push(n as u8);
    }

    #[inline]
    fn encode_key(tag: u32, wire: u32, out: &mut Vec<u8>) {
        encode_varint(u64::from(tag << 3 | wire), out);
    }

    pub fn bytes_field(tag: u32, bytes: &[u8], out: &mut Vec<u8>) {
        encode_key(tag, LEN, out);
        encode_varint(bytes.len() as u64, out);
        out.extend_from_slice(bytes);
    }

    fn field_len(len: usize) -> usize {
        1 + encoded_len_varint(len as u64) + len
    }

    fn any_len(v: &Val<'_>) -> usize {
        match v {
            Val::S(s) => field_len(s.len()),
            Val::I(n) => 1 + encoded_len_varint(*n as u64),
        }
    }

    /// An AnyValue as field `tag`.
    pub fn any(tag: u32, v: &Val<'_>, out: &mut Vec<u8>) {
        encode_key(tag, LEN, out);
        encode_varint(any_len(v) as u64, out);
        match v {
            Val::S(s) => bytes_field(1, s.as_bytes(), out),
            Val::I(n) => {
                encode_key(3, VARINT, out);
                encode_varint(*n as u64, out);
            }
        }
    }

    /// A KeyValue as field `tag`.
    pub fn key_value(tag: u32, key: &str, v: &Val<'_>, out: &mut Vec<u8>) {
        let key_len = if key.is_empty() {
            0
        } else {
            field_len(key.len())
        };
        encode_key(tag, LEN, out);
        encode_varint((key_len + field_len(any_len(v))) as u64, out);
        if !key.is_empty() {
            bytes_field(1, key.as_bytes(), out);
        }
        any(2, v, out);
    }

    pub fn fixed64(tag: u32, n: u64, out: &mut Vec<u8>) {
        if n != 0 {
            encode_key(tag, FIXED64, out);
            out.extend_from_slice(&n.to_le_bytes());
        }
    }

    pub fn varint(tag: u32, n: u64, out: &mut Vec<u8>) {
        if n != 0 {
            encode_key(tag, VARINT, out);
            encode_varint(n, out);
        }
    }

    /// The framing of a length-delimited field of `len` bytes.
    pub fn frame(tag: u32, len: usize, out: &mut Vec<u8>) {
        encode_key(tag, LEN, out);
        encode_varint(len as u64, out);
    }

    pub fn framed_len(len: usize) -> usize {
        field_len(len)
    }
}

/// The body of one ExportLogsServiceRequest, written record by record: each
/// record's resource is written once as the key of its group, each record
/// once into its group, and both copied once more into the body.
///
/// NB: before, records were built as `opentelemetry-proto` messages (a String
/// per attribute, from a copy of the row read back from a copy of the SQLite
/// row) and encoded by prost; at 1,000 records a second that made the
/// shipper cost a third more CPU than recording alone (issue 32).
pub struct Body {
    groups: Vec<(Vec<u8>, Vec<u8>)>,
    index: HashMap<Vec<u8>, usize, foldhash::fast::RandomState>,
    key: Vec<u8>,
    scratch: Vec<u8>,
    scope: Vec<u8>,
    /// Buffers of groups already written, emptied, for the next groups.
    /// NB: a batch of 5,000 records has some 500 groups; fresh buffers each
    /// batch were page faults and frees (issue 32).
    spare: Vec<Vec<u8>>,
    /// What [`Body::finish`] writes.
    out: Vec<u8>,
    /// Records written since the last [`Body::finish`].
    pub records: usize,
}

impl Default for Body {
    fn default() -> Body {
        Body {
            groups: Vec::new(),
            index: HashMap::default(),
            key: Vec::new(),
            scratch: Vec::new(),
            scope: scope().encode_to_vec(),
            spare: Vec::new(),
            out: Vec::new(),
            records: 0,
        }
    }
}

impl Body {
    fn buffer(&mut self, from: &[u8]) -> Vec<u8> {
        let mut b = self.spare.pop().unwrap_or_default();
        b.extend_from_slice(from);
        b
    }

    pub fn push(&mut self, r: &Rec<'_>) {
        self.key.clear();
        for (k, v) in &r.resource {
            wire::key_value(1, k, v, &mut self.key);
        }
        let at = match self.index.get(self.key.as_slice()) {
            Some(at) => *at,
            None => {
                let next = self.buffer(&[]);
                let key = std::mem::replace(&mut self.key, next);
                let (index_key, records) = (self.buffer(&key), self.buffer(&[]));
                self.index.insert(index_key, self.groups.len());
                self.groups.push((key, records));
                self.groups.len() - 1
            }
        };
        let out = &mut self.scratch;
        out.clear();
        wire::fixed64(1, r.time_unix_nano, out);
        wire::varint(2, r.severity_number as u64, out);
        if !r.severity_text.is_empty() {
            wire::bytes_field(3, r.severity_text.as_bytes(), out);
        }
        wire::any(5, &Val::S(Cow::Borrowed(&r.body)), out);
        for (k, v) in &r.attributes {
            wire::key_value(6, k, v, out);
        }
        wire::fixed64(11, r.observed_time_unix_nano, out);
        wire::bytes_field(2, out, &mut self.groups[at].1);
        self.records += 1;
    }

    /// The request body of what was pushed since the last call; starts over.
    /// NB: written into a buffer kept for the next call (a fresh megabyte per
    /// request was page faults, issue 32).
    pub fn finish(&mut self) -> &[u8] {
        let scope_len = wire::framed_len(self.scope.len());
        let size: usize = self
            .groups
            .iter()
            .map(|(res, recs)| res.len() + recs.len() + scope_len + 16)
            .sum();
        let out = &mut self.out;
        out.clear();
        out.reserve(size);
        for (mut resource, mut records) in self.groups.drain(..) {
            let scope_logs = scope_len + records.len();
            let resource_logs = wire::framed_len(resource.len()) + wire::framed_len(scope_logs);
            wire::frame(1, resource_logs, out);
            wire::frame(1, resource.len(), out);
            out.extend_from_slice(&resource);
            wire::frame(2, scope_logs, out);
            wire::bytes_field(1, &self.scope, out);
            out.extend_from_slice(&records);
            resource.clear();
            records.clear();
            self.spare.extend([resource, records]);
        }
        for (mut key, _) in self.index.drain() {
            key.clear();
            self.spare.push(key);
        }
        self.records = 0;
        &self.out
    }
}

// ---------------------------------------------------------------- the client

type Client = hyper_util::client::legacy::Client<
    super::http::Connector<
        hyper_rustls::HttpsConnector<hyper_util::client::legacy::connect::HttpConnector>,
    >,
    Full<Bytes>,
>;

/// An OTLP/HTTP logs destination.
pub struct Otlp {
    url: OtlpUrl,
    headers: Vec<(http::HeaderName, http::HeaderValue)>,
    client: Client,
    /// The body writer and the strings read, kept from one batch to the next.
    reading: std::sync::Mutex<(Body, super::outbox::StringCache)>,
}

impl Otlp {
    pub fn new(url: OtlpUrl, headers: &[(String, String)]) -> Result<Otlp, super::url::UrlError> {
        let fail = |why: String| super::url::UrlError::new(&url.shown(), why);
        let mut hs = Vec::new();
        for (n, v) in headers {
            let name = http::HeaderName::from_bytes(n.as_bytes())
                .map_err(|_| fail(format!("header #{}: {}", hs.len() + 1, NOT_A_NAME)))?;
            let mut value = http::HeaderValue::from_str(v).map_err(|_| {
                fail(format!(
                    "header #{}: the value is not a valid header value (its text is not shown)",
                    hs.len() + 1
                ))
            })?;
            value.set_sensitive(true);
            hs.push((name, value));
        }
        // NB: the system's roots (a collector behind a private CA), else the compiled-in ones.
        let connector = super::http::connector(LIMITS, true, Default::default());
        let client =
            hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
                .pool_idle_timeout(Duration::from_secs(30))
                .build(connector);
        Ok(Otlp {
            url,
            headers: hs,
            client,
            reading: std::sync::Mutex::default(),
        })
    }

    pub fn url(&self) -> &OtlpUrl {
        &self.url
    }

    /// An empty request: the endpoint answers, and takes our headers.
    pub async fn probe(&self) -> Result<(), ChError> {
        let empty = gzip(&ExportLogsServiceRequest::default().encode_to_vec()).map_err(|e| {
            ChError::Unavailable {
                url: self.url.shown(),
                detail: format!("compressing: {e}"),
            }
        })?;
        self.post(empty, 0, PROBE_TIMEOUT).await
    }

    /// The next batch after `after`, its records written as request bodies
    /// of [`RECORDS_PER_REQUEST`] records at most, or None when the outbox
    /// holds nothing newer.
    ///
    /// NB: written straight from SQLite's rows: through RowBinary and back, as
    /// ClickHouse is sent, was a fifth of the shipper's CPU (issue 32).
    pub fn take(
        &self,
        conn: &rusqlite::Connection,
        after: i64,
        limit: i64,
    ) -> Result<Option<Batch>, super::outbox::OutboxError> {
        let now_ns = u64::try_from(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0),
        )
        .unwrap_or(u64::MAX);
        // NB: a panic elsewhere that poisoned it leaves a usable Body.
        let mut reading = self.reading.lock().unwrap_or_else(|p| p.into_inner());
        let (body, strings) = &mut *reading;
        let mut bodies = Vec::new();
        let range =
            super::outbox::read(conn, after, limit, OTLP_TABLES, strings, |table, values| {
                body.push(&record(table, values, now_ns));
                if body.records == RECORDS_PER_REQUEST {
                    bodies.push((gzip(body.finish())?, RECORDS_PER_REQUEST));
                }
                Ok(())
            });
        // NB: before `range?`: a batch that failed half-way leaves nothing for the next.
        let rest = (body.records > 0).then(|| (body.records, gzip(body.finish())));
        let range = range?;
        if let Some((n, gz)) = rest {
            bodies.push((gz?, n));
        }
        Ok(range.map(|(first, last)| Batch {
            first,
            last,
            parts: Vec::new(),
            bodies,
        }))
    }

    /// Sends a batch's bodies; Ok only when every request was taken whole.
    pub async fn send(&self, batch: &Batch) -> Result<(), ChError> {
        for (bytes, n) in &batch.bodies {
            self.post(bytes.clone(), *n, REQUEST_TIMEOUT).await?;
        }
        Ok(())
    }

    /// Posts one request body (gzipped protobuf).
    async fn post(&self, body: Bytes, records: usize, limit: Duration) -> Result<(), ChError> {
        let shown = self.url.shown();
        let unavailable = |detail: String| ChError::Unavailable {
            url: shown.clone(),
            detail,
        };
        let mut builder = http::Request::post(self.url.http())
            .header(http::header::CONTENT_TYPE, "application/x-protobuf")
            .header(http::header::CONTENT_ENCODING, "gzip")
            .header(
                http::header::USER_AGENT,
                concat!("kubectl-diag/", env!("CARGO_PKG_VERSION")),
            );
        for (n, v) in &self.headers {
            builder = builder.header(n, v);
        }
        let request = builder
            .body(Full::new(body))
            .map_err(|e| unavailable(format!("building the request: {e}")))?;
        let answer = tokio::time::timeout(limit, async {
            let response = self.client.request(request).await.map_err(|e| {
                unavailable(
                    crate::render::escape(&super::clickhouse::unreached(&self.url.host, &e))
                        .into_owned(),
                )
            })?;
            let (parts, body) = response.into_parts();
            // NB: at most REPLY_CAP of it; the rest is never read (the connection is dropped).
            let (bytes, over) = super::http::read_capped(body, REPLY_CAP)
                .await
                .map_err(|e| {
                    unavailable(format!(
                        "reading the answer: {}",
                        crate::render::escape(&super::clickhouse::unreached(&self.url.host, &e))
                    ))
                })?;
            Ok::<_, ChError>((parts, bytes, over))
        })
        .await
        .map_err(|_| unavailable(format!("no answer in {} s", limit.as_secs())))??;
        let (parts, bytes, over) = answer;
        let status = parts.status;
        let cut = if over {
            format!(
                " (the answer's body is over {} KiB: not read past that)",
                REPLY_CAP / 1024
            )
        } else {
            String::new()
        };
        if status.is_success() && over {
            // NB: not an OTLP answer; what it took is unknown, so the batch is sent again.
            return Err(ChError::Refused {
                url: shown,
                detail: format!("HTTP {status}{cut}"),
                hint: "; an OTLP/HTTP logs endpoint answers a short ExportLogsServiceResponse: is the URL a collector's?",
            });
        }
        if status.is_success() {
            let reply = ExportLogsServiceResponse::decode(bytes.as_ref()).unwrap_or_default();
            // NB: a warning with nothing rejected is a success (OTLP spec), and so is a
            // body that is not a response message (an empty one, say).
            if let Some(p) = reply.partial_success
                && p.rejected_log_records > 0
            {
                return Err(partially_rejected(shown, records, &p));
            }
            return Ok(());
        }
        let detail = {
            let text = String::from_utf8_lossy(&bytes);
            let text: String = text.chars().filter(|c| !c.is_control()).take(200).collect();
            // NB: bidirectional and other formatting characters are not `is_control`.
            let text = crate::render::escape(&text);
            format!(
                "HTTP {status}{}{cut}",
                if text.is_empty() {
                    String::new()
                } else {
                    format!(": {text}")
                }
            )
        };
        let code = status.as_u16();
        match code {
            // NB: the OTLP spec's retryable answers; Retry-After honoured when given.
            429 | 502 | 503 | 504 => {
                let after = parts
                    .headers
                    .get(http::header::RETRY_AFTER)
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.trim().parse::<u64>().ok())
                    .map(|s| Duration::from_secs(s).min(MAX_RETRY_AFTER));
                Err(match after {
                    Some(after) => ChError::Busy {
                        url: shown,
                        detail,
                        after,
                    },
                    None => unavailable(detail),
                })
            }
            500..=599 => Err(unavailable(detail)),
            401 | 403 => Err(ChError::Refused {
                url: shown,
                detail,
                hint: "; check the credentials given with --ship-header/--ship-header-file (--header/--header-file for ship)",
            }),
            404 | 405 => Err(ChError::Refused {
                url: shown,
                detail,
                hint: "; is the path right? OTLP/HTTP logs are posted to /v1/logs",
            }),
            _ => Err(ChError::Refused {
                url: shown,
                detail,
                hint: "",
            }),
        }
    }
}

/// A 200 whose `partial_success` rejected records: a refusal, its message
/// escaped (the receiver's text reaches the status line and stderr) and cut.
fn partially_rejected(
    url: String,
    records: usize,
    p: &opentelemetry_proto::tonic::collector::logs::v1::ExportLogsPartialSuccess,
) -> ChError {
    let message: String = p.error_message.chars().take(200).collect();
    let message = crate::render::escape(&message);
    let said = if message.is_empty() {
        String::new()
    } else {
        format!(": {message}")
    };
    // NB: the start probe sends no record: "rejected 1 of 0" said nothing.
    if records == 0 {
        return ChError::Refused {
            url,
            detail: format!(
                "answered the start probe (an empty request) with {} rejected record(s){said}",
                p.rejected_log_records
            ),
            hint: "; the collector refuses even an empty request: check its configuration and the --ship-header/--header credentials",
        };
    }
    ChError::Refused {
        url,
        detail: format!(
            "rejected {} of {records} record(s){said}",
            p.rejected_log_records
        ),
        hint: "; the batch is sent again until it is taken whole",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_partly_rejected_says_how_many_of_how_many_escaped() {
        use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsPartialSuccess;
        let p = ExportLogsPartialSuccess {
            rejected_log_records: 2,
            error_message: "bad\n\u{1b}[31mred\u{202e}".into(),
        };
        let e = partially_rejected("otlp+http://c:4318/v1/logs".into(), 10, &p).to_string();
        assert!(
            e.contains("rejected 2 of 10 record(s): bad\\n\\x1b[31mred\\u{202e}"),
            "{e}"
        );
    }

    /// Regression (issue 44.3): a header written with a space for its colon printed its secret.
    #[test]
    fn a_malformed_header_never_prints_its_text() {
        for bad in ["api-key s3cretTOKEN: x", "Authorization Bearer s3cretTOKEN"] {
            let e = parse_headers(
                &[bad.to_string()],
                None,
                "--ship-header",
                "--ship-header-file",
            )
            .unwrap_err()
            .to_string();
            assert!(e.starts_with("--ship-header #1: "), "{e}");
            assert!(!e.contains("s3cret"), "{e}");
        }
        let e = parse_headers(
            &["X: a\u{1}s3cret".to_string()],
            None,
            "--header",
            "--header-file",
        )
        .unwrap_err()
        .to_string();
        assert!(!e.contains("s3cret"), "{e}");
    }

    /// Regression (issue 44.3): an `api_key` in the query was printed.
    #[test]
    fn an_otlp_url_error_never_prints_its_query_or_credentials() {
        for bad in [
            "otlp+https://collector/v1/logs?api_key=s3cretPW",
            "otlp+http://u:s3cretPW@collector:4318",
            "otlp+http://s3cretPW@collector:4318",
            "otlp+http://collector:s3cretPW/v1/logs",
        ] {
            let e = OtlpUrl::parse(bad).unwrap_err().to_string();
            assert!(!e.contains("s3cret"), "{e}");
            assert!(e.contains("collector"), "{e}");
        }
    }

    #[test]
    fn urls_default_their_port_and_path_and_refuse_credentials() {
        let u = OtlpUrl::parse("otlp+http://collector").unwrap();
        assert_eq!(u.shown(), "otlp+http://collector:4318/v1/logs");
        assert_eq!(u.http(), "http://collector:4318/v1/logs");
        let u = OtlpUrl::parse("otlp+https://otlp.example.com/otlp/v1/logs").unwrap();
        assert_eq!(u.shown(), "otlp+https://otlp.example.com:443/otlp/v1/logs");
        let u = OtlpUrl::parse("otlp+http://127.0.0.1:14318/").unwrap();
        assert_eq!(u.http(), "http://127.0.0.1:14318/v1/logs");
        let e = OtlpUrl::parse("otlp+http://user:secret@host:4318").unwrap_err();
        assert!(!e.to_string().contains("secret"), "{e}");
        assert!(OtlpUrl::parse("otlp+http://host:port").is_err());
        assert!(OtlpUrl::parse("otlp+http://host/v1/logs?key=1").is_err());
        assert!(OtlpUrl::parse("http://host:4318").is_err());
    }

    #[test]
    fn headers_parse_from_flags_and_files_and_never_show_values() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("h");
        std::fs::write(
            &f,
            "# key\n\nAuthorization: Bearer s3cret\r\nX-Scope-OrgID: team-a\n",
        )
        .unwrap();
        let h = parse_headers(
            &["api-key: abc".into()],
            Some(&f),
            "--ship-header",
            "--ship-header-file",
        )
        .unwrap();
        assert_eq!(
            h,
            vec![
                ("api-key".into(), "abc".into()),
                ("Authorization".into(), "Bearer s3cret".into()),
                ("X-Scope-OrgID".into(), "team-a".into())
            ]
        );
        let e = parse_headers(
            &["novalue-s3cret".into()],
            None,
            "--ship-header",
            "--ship-header-file",
        )
        .unwrap_err();
        assert!(!e.to_string().contains("s3cret"), "{e}");
        let e = parse_headers(
            &["X: bad\u{7f}s3cret".into()],
            None,
            "--ship-header",
            "--ship-header-file",
        )
        .unwrap_err();
        assert!(!e.to_string().contains("s3cret"), "{e}");
        assert!(parse_headers(&["Content-Type: text/plain".into()], None, "a", "b").is_err());
    }

    #[test]
    fn decimals_are_written_as_format_writes_them() {
        for n in [0, 1, 9, 10, 12345, -1, -907, i64::MAX, i64::MIN] {
            let mut buf = [0u8; 20];
            assert_eq!(decimal(n, &mut buf), n.to_string().as_bytes(), "{n}");
        }
    }

    #[test]
    fn record_uids_are_uuid5_of_the_documented_names() {
        // Python 3: uuid.uuid5(uuid.NAMESPACE_URL, "http://www.example.com/").
        assert_eq!(
            uuid5("http://www.example.com/"),
            "fcde3c85-2270-590f-9e7c-ee003d65e0e2"
        );
        assert_eq!(
            occurrence_uid("c", "e", 3),
            uuid5("kubectl-diag:occurrence/c/e/3")
        );
        assert_eq!(
            version_uid("c", ("u", "Pod", "ns", "p"), Some("42"), 1, 2),
            uuid5("kubectl-diag:version/c/u/42")
        );
        assert_eq!(
            version_uid("c", ("", "Pod", "ns", "p"), None, 1, 2),
            uuid5("kubectl-diag:version/c/Pod/ns/p/at:1:2")
        );
        assert_eq!(
            gap_uid("c", "events", 5, "relist"),
            uuid5("kubectl-diag:gap/c/events/5/relist")
        );
    }

    #[test]
    fn times_are_written_as_chronos_patterns_write_them() {
        for ms in [
            0,
            1,
            999,
            1_700_000_000_000,
            1_795_000_012_345,
            4_102_444_799_999,
        ] {
            let t = chrono::DateTime::from_timestamp_millis(ms).unwrap();
            assert_eq!(rfc3339(ms), t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string());
            assert_eq!(
                go_time(ms),
                t.format("%Y-%m-%d %H:%M:%S +0000 UTC").to_string()
            );
        }
        assert_eq!(rfc3339(1_700_000_000_007), "2023-11-14T22:13:20.007Z");
    }

    #[test]
    fn severities_follow_the_collector() {
        assert_eq!(severity("Normal"), (9, "Normal".into()));
        assert_eq!(severity("Warning"), (13, "Warning".into()));
        assert_eq!(severity("weird"), (0, String::new()));
    }

    #[test]
    fn every_otlp_select_reads_as_many_columns_as_its_table_has() {
        crate::ship::tables::assert_selects_match(OTLP_TABLES);
    }

    /// The attribute names of an Event's record are the collector's: the names its
    /// k8seventsreceiver writes (tests/fixtures/otlp/k8seventsreceiver-attributes.txt,
    /// copied from its source; the file's header cites it), each where it writes it.
    #[test]
    fn event_attribute_names_match_the_collectors_k8seventsreceiver() {
        let fixture = include_str!("../../tests/fixtures/otlp/k8seventsreceiver-attributes.txt");
        let mut want_resource = Vec::new();
        let mut want_record = Vec::new();
        for line in fixture
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        {
            let (place, name) = line.split_once(char::is_whitespace).unwrap();
            match place {
                "resource" => want_resource.push(name.trim().to_string()),
                "record" => want_record.push(name.trim().to_string()),
                other => panic!("{other}"),
            }
        }
        // One occurrence row, its values as the outbox reader gives them (ids resolved).
        let table = &OTLP_TABLES[0];
        let row: Vec<rusqlite::types::Value> = table
            .columns
            .iter()
            .map(|(name, ty)| match ty.wire() {
                Ty::Str => rusqlite::types::Value::Text(format!("{name}-value")),
                _ => rusqlite::types::Value::Integer(match *name {
                    "count" => 4,
                    "n" => 2,
                    _ => 1_700_000_000_000,
                }),
            })
            .collect();
        let recs = records(table, &[row], 5);
        assert_eq!(recs.len(), 1);
        let res: Vec<&str> = recs[0].resource.iter().map(|k| k.key.as_str()).collect();
        let rec: Vec<&str> = recs[0]
            .record
            .attributes
            .iter()
            .map(|k| k.key.as_str())
            .collect();
        // NB: the involved object's resourceVersion is not recorded (docs/schema.md).
        for name in want_resource
            .iter()
            .filter(|n| *n != "k8s.object.resource_version")
        {
            assert!(
                res.contains(&name.as_str()),
                "resource attribute {name} missing: {res:?}"
            );
        }
        for name in &want_record {
            assert!(
                rec.contains(&name.as_str()),
                "record attribute {name} missing: {rec:?}"
            );
        }
        // Ours are only what the collector does not have.
        for name in rec.iter().chain(&res) {
            let ours = name.starts_with("kubectl_diag.")
                || matches!(
                    *name,
                    "log.record.uid" | "k8s.cluster.uid" | "k8s.cluster.name" | "service.name"
                );
            assert!(
                ours || want_resource.iter().chain(&want_record).any(|w| w == name),
                "{name} is neither the collector's nor ours"
            );
        }
        assert_eq!(recs[0].record.severity_number, 0); // "type-value" is no Event type
        assert_eq!(recs[0].record.time_unix_nano, 1_700_000_000_000_000_000);
        let attr = |k: &str| {
            recs[0]
                .record
                .attributes
                .iter()
                .find(|a| a.key == k)
                .and_then(|a| a.value.clone())
                .and_then(|v| v.value)
        };
        assert_eq!(attr("k8s.event.count"), Some(any_value::Value::IntValue(4)));
        assert_eq!(
            attr("kubectl_diag.occurrences"),
            Some(any_value::Value::IntValue(2))
        );
        assert_eq!(
            attr("k8s.event.start_time"),
            Some(any_value::Value::StringValue(
                "2023-11-14 22:13:20 +0000 UTC".into()
            ))
        );
        assert_eq!(
            attr("log.record.uid"),
            Some(any_value::Value::StringValue(occurrence_uid(
                "cluster-value",
                "event_uid-value",
                4
            )))
        );
    }

    /// Records of three resources, one of them twice, with every kind of value.
    fn three_resources() -> Vec<Rec<'static>> {
        let r = |obj: &'static str, n: i64| Rec {
            resource: vec![("k8s.object.name", st(obj)), ("n", Val::I(n))],
            attributes: vec![
                ("a", st("x")),
                ("b", Val::I(n)),
                ("c", st("")),
                ("d", Val::I(-3)),
                ("", st("no key")),
            ],
            time_unix_nano: 7,
            observed_time_unix_nano: 11,
            severity_number: 13,
            severity_text: Cow::Borrowed("Warning"),
            body: Cow::Owned(format!("{obj} {n}")),
        };
        vec![r("a", 1), r("b", 2), r("a", 1), r("c", 300)]
    }

    #[test]
    fn records_of_one_resource_share_one_resource_logs() {
        let req = request(three_resources().iter().map(Rec::to_prost));
        assert_eq!(req.resource_logs.len(), 3);
        assert_eq!(req.resource_logs[0].scope_logs[0].log_records.len(), 2);
    }

    /// The body written straight from the records is, byte for byte, what
    /// prost writes for the `opentelemetry-proto` messages of the same records.
    #[test]
    fn bodies_encode_as_prost_encodes_the_messages() {
        let recs = three_resources();
        let mut body = Body::default();
        for r in &recs {
            body.push(r);
        }
        assert_eq!(body.records, 4);
        let want = request(recs.iter().map(Rec::to_prost)).encode_to_vec();
        assert_eq!(body.finish(), want);
        // It starts over, and an empty one is the empty request.
        assert_eq!(body.records, 0);
        assert_eq!(
            body.finish(),
            ExportLogsServiceRequest::default().encode_to_vec()
        );
        // Defaults are left out as prost leaves them out; long values take longer lengths.
        let plain = Rec {
            resource: vec![],
            attributes: vec![("long", st("y".repeat(300)))],
            time_unix_nano: 0,
            observed_time_unix_nano: 0,
            severity_number: 0,
            severity_text: Cow::Borrowed(""),
            body: Cow::Borrowed(""),
        };
        body.push(&plain);
        body.push(&recs[1]);
        let want = request([plain.to_prost(), recs[1].to_prost()]).encode_to_vec();
        assert_eq!(body.finish(), want);
    }

    /// A batch of real rows (occurrences, versions, gaps) written both ways.
    #[test]
    fn a_batch_encodes_as_prost_encodes_its_records() {
        let mut tables = Vec::new();
        for table in OTLP_TABLES {
            let rows: Vec<Vec<rusqlite::types::Value>> = (0..3i64)
                .map(|row| {
                    table
                        .columns
                        .iter()
                        .map(|(name, ty)| match ty.wire() {
                            Ty::Str => rusqlite::types::Value::Text(format!("{name}-{}", row % 2)),
                            Ty::NStr | Ty::NInt if row == 1 => rusqlite::types::Value::Null,
                            Ty::NStr => rusqlite::types::Value::Text(format!("{name}-é")),
                            _ => rusqlite::types::Value::Integer(1_700_000_000_000 + row),
                        })
                        .collect()
                })
                .collect();
            tables.push((table, rows));
        }
        let mut body = Body::default();
        let push_all = |body: &mut Body| {
            for (table, rows) in &tables {
                for row in rows {
                    let values: Vec<ValueRef<'_>> = row.iter().map(ValueRef::from).collect();
                    body.push(&record(table, &values, 42));
                }
            }
        };
        push_all(&mut body);
        assert_eq!(body.records, 9);
        let want = request(
            tables
                .iter()
                .flat_map(|(table, rows)| records(table, rows, 42)),
        )
        .encode_to_vec();
        assert_eq!(body.finish(), want);
        // The same Body, its buffers reused, writes the next batch alike.
        push_all(&mut body);
        assert_eq!(body.records, 9);
        assert_eq!(body.finish(), want);
    }

    /// Read from a real recording: strings resolved by id, the Event's uid
    /// written from its 16 bytes, its client-go name rebuilt, a version's diff.
    #[test]
    fn a_recorded_occurrence_reads_back_with_its_strings_and_uid() {
        use crate::model::{EventChange, EventObservation, ObjectRef};
        let (_d, mut w) = crate::store::testing::recording();
        let url = "otlp+http://h:4318/v1/logs".to_string();
        let (reg, _) = super::super::outbox::register(w.connection(), &[url], 1).unwrap();
        let uid = "0f8e2a5c-1b2d-4e3f-8a9b-0c1d2e3f4a5b";
        let mut b = w.begin().unwrap();
        for count in [1, 2] {
            b.apply(&EventChange::Upsert(Box::new(EventObservation {
                uid: uid.into(),
                namespace: "shop".into(),
                name: "web-1.187c3a4b5d6e7f80".into(),
                involved: ObjectRef {
                    kind: "Pod".into(),
                    namespace: "shop".into(),
                    name: "web-1".into(),
                    uid: "pod-uid".into(),
                    api_version: "v1".into(),
                    ..Default::default()
                },
                reason: "BackOff".into(),
                type_: "Warning".into(),
                message: "Back-off restarting failed container".into(),
                reporting_controller: "kubelet".into(),
                source_host: "node-a".into(),
                first: 1_000,
                last: 1_000 * count,
                count,
                ..Default::default()
            })))
            .unwrap();
        }
        b.commit().unwrap();
        let conn = w.connection();
        super::super::outbox::prepare(conn).unwrap();
        let otlp = Otlp::new(OtlpUrl::parse("otlp+http://h:4318").unwrap(), &[]).unwrap();
        let batch = otlp
            .take(conn, reg[0].cursor, super::super::outbox::BATCH_KEYS)
            .unwrap()
            .unwrap();
        assert_eq!(batch.rows(), 2);
        let mut protobuf = Vec::new();
        std::io::Read::read_to_end(
            &mut flate2::read::GzDecoder::new(&batch.bodies[0].0[..]),
            &mut protobuf,
        )
        .unwrap();
        let sent = ExportLogsServiceRequest::decode(protobuf.as_slice()).unwrap();
        let text = |kvs: &[KeyValue], key: &str| -> String {
            let v = kvs.iter().find(|kv| kv.key == key).unwrap();
            match v.value.as_ref().and_then(|a| a.value.as_ref()) {
                Some(any_value::Value::StringValue(s)) => s.clone(),
                Some(any_value::Value::IntValue(n)) => n.to_string(),
                other => panic!("{key}: {other:?}"),
            }
        };
        let group = &sent.resource_logs[0];
        let resource = &group.resource.as_ref().unwrap().attributes;
        assert_eq!(text(resource, "k8s.object.kind"), "Pod");
        assert_eq!(text(resource, "k8s.object.name"), "web-1");
        assert_eq!(text(resource, "k8s.object.api_version"), "v1");
        assert_eq!(text(resource, "k8s.node.name"), "node-a");
        let records = &group.scope_logs[0].log_records;
        assert_eq!(records.len(), 2);
        let last = &records[1].attributes;
        assert_eq!(text(last, "k8s.event.uid"), uid);
        assert_eq!(text(last, "k8s.event.name"), "web-1.187c3a4b5d6e7f80");
        assert_eq!(text(last, "k8s.event.reason"), "BackOff");
        assert_eq!(text(last, "k8s.event.reporting_controller"), "kubelet");
        assert_eq!(text(last, "k8s.namespace.name"), "shop");
        assert_eq!(text(last, "k8s.event.count"), "2");
        assert_eq!(text(last, "log.record.uid"), occurrence_uid("uid", uid, 2));
        // The Event's start: its first occurrence's time, for the row of count 2
        // too (read from the row of count 1, not its own).
        for r in records {
            assert_eq!(
                text(&r.attributes, "k8s.event.start_time"),
                "1970-01-01 00:00:01 +0000 UTC"
            );
        }
        assert_eq!(records[1].severity_text, "Warning");
        assert_eq!(
            records[1].body.as_ref().and_then(|a| a.value.clone()),
            Some(any_value::Value::StringValue(
                "Back-off restarting failed container".into()
            ))
        );
    }

    /// A server answering each request with the next of `answers` (status line, headers, body).
    fn canned(answers: Vec<Vec<u8>>) -> u16 {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            let mut answers = answers.into_iter();
            for mut conn in listener.incoming().flatten() {
                let Some(answer) = answers.next() else { return };
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                loop {
                    let n = conn.read(&mut chunk).unwrap_or(0);
                    buf.extend_from_slice(&chunk[..n]);
                    let text = String::from_utf8_lossy(&buf).to_ascii_lowercase();
                    if let Some(end) = text.find("\r\n\r\n") {
                        let len: usize = text
                            .lines()
                            .find_map(|l| l.strip_prefix("content-length:"))
                            .map_or(0, |v| v.trim().parse().unwrap());
                        if buf.len() >= end + 4 + len || n == 0 {
                            break;
                        }
                    } else if n == 0 {
                        break;
                    }
                }
                let _ = conn.write_all(&answer);
            }
        });
        port
    }

    fn answer(status: &str, headers: &str, body: &[u8]) -> Vec<u8> {
        let mut a = format!(
            "HTTP/1.1 {status}\r\nContent-Type: application/x-protobuf\r\nConnection: close\r\n{headers}Content-Length: {}\r\n\r\n",
            body.len()
        )
        .into_bytes();
        a.extend_from_slice(body);
        a
    }

    #[tokio::test]
    async fn answers_are_read_as_the_otlp_spec_says() {
        use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsPartialSuccess;
        let rejected = ExportLogsServiceResponse {
            partial_success: Some(ExportLogsPartialSuccess {
                rejected_log_records: 3,
                error_message: "too old\u{1b}]0;owned\u{7}\u{1b}[2J".into(),
            }),
        }
        .encode_to_vec();
        let warned = ExportLogsServiceResponse {
            partial_success: Some(ExportLogsPartialSuccess {
                rejected_log_records: 0,
                error_message: "took all, but".into(),
            }),
        }
        .encode_to_vec();
        let port = canned(vec![
            answer("200 OK", "", &[0x0a, 0x00]),
            answer("200 OK", "", &warned),
            answer("200 OK", "", &rejected),
            answer("429 Too Many Requests", "Retry-After: 7\r\n", b""),
            answer("503 Service Unavailable", "", b""),
            answer("400 Bad Request", "", b"bad"),
            answer("401 Unauthorized", "", b""),
        ]);
        let otlp = Otlp::new(
            OtlpUrl::parse(&format!("otlp+http://127.0.0.1:{port}")).unwrap(),
            &[("Authorization".into(), "Bearer s3cret".into())],
        )
        .unwrap();
        assert!(
            otlp.probe().await.is_ok(),
            "an empty partial_success is success"
        );
        assert!(
            otlp.probe().await.is_ok(),
            "a warning that rejected nothing is success"
        );
        // Regression (issue 44.10): the start probe said "rejected 3 of 0 record(s)".
        let e = otlp.probe().await.unwrap_err();
        assert!(
            matches!(e, ChError::Refused { .. })
                && e.to_string().contains(
                    "answered the start probe (an empty request) with 3 rejected record(s)"
                ),
            "{e}"
        );
        // Regression (issue 44.4): the receiver's error_message reached the status line raw.
        assert!(!e.to_string().contains('\u{1b}'), "{e:?}");
        assert!(
            e.to_string().contains("too old\\x1b]0;owned\\x07\\x1b[2J"),
            "{e:?}"
        );
        let e = otlp.probe().await.unwrap_err();
        assert!(e.retry() && e.wait(0) == Duration::from_secs(7), "{e}");
        let e = otlp.probe().await.unwrap_err();
        assert!(
            matches!(e, ChError::Unavailable { .. }) && e.wait(2) == super::super::backoff(2),
            "{e}"
        );
        let e = otlp.probe().await.unwrap_err();
        assert!(!e.retry() && e.to_string().contains("400"), "{e}");
        let e = otlp.probe().await.unwrap_err();
        assert!(!e.retry() && e.to_string().contains("--ship-header"), "{e}");
        assert!(!e.to_string().contains("s3cret"));
    }
}
