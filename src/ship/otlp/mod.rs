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
        stage_table: "",
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
    ("seen", Int),
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
        include_str!("../../../queries/ship/otlp/occurrences.sql"),
        OCCURRENCE_COLUMNS,
    ),
    otlp_table(
        "versions",
        CODE_VERSION,
        include_str!("../../../queries/ship/otlp/versions.sql"),
        VERSION_COLUMNS,
    ),
    otlp_table(
        "gaps",
        CODE_GAP,
        include_str!("../../../queries/ship/otlp/gaps.sql"),
        GAP_COLUMNS,
    ),
];

mod client;
mod ids;
mod record;
mod url;
mod wire;

pub use client::*;
pub use ids::*;
pub use record::*;
pub use url::*;
pub use wire::*;

#[cfg(test)]
mod tests;
