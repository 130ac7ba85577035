//! A row of the outbox as a log record: its attributes, body, times and severity, in
//! the collector's `k8seventsreceiver` vocabulary for Events and `kubectl_diag.*` for the rest.

use super::*;

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

pub(super) fn st<'a>(v: impl Into<Cow<'a, str>>) -> Val<'a> {
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
pub(super) fn rfc3339(ms: i64) -> String {
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
pub(super) fn go_time(ms: i64) -> String {
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

pub(super) fn nanos(ms: i64) -> u64 {
    u64::try_from(ms).unwrap_or(0).saturating_mul(1_000_000)
}

/// The collector's severity number for an Event type (k8s_event_to_logdata.go's
/// severityMap, matched case-insensitively); 0 for a type it does not know.
pub(super) fn severity_number(event_type: &str) -> i32 {
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
pub(super) const fn column_index(columns: &[(&str, Ty)], name: &str) -> usize {
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
pub(super) struct Row<'r, 'a> {
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
pub(super) fn cluster_resource<'a>(row: &Row<'_, 'a>, more: usize) -> Vec<(&'static str, Val<'a>)> {
    let mut out = Vec::with_capacity(3 + more);
    out.extend([
        (names::CLUSTER_UID, Val::S(row.s(0))),
        (names::CLUSTER_NAME, Val::S(row.s(1))),
        (names::SERVICE_NAME, st("kubectl-diag")),
    ]);
    out
}

pub(super) fn occurrence<'a>(row: &Row<'_, 'a>, now_ns: u64) -> Rec<'a> {
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

pub(super) fn version<'a>(row: &Row<'_, 'a>, now_ns: u64) -> Rec<'a> {
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
    let provenance = crate::model::provenance::StoredSeen::read(row.i(at!("seen"))).provenance;
    if let Some(said) = provenance.said() {
        attributes.push(("kubectl_diag.provenance", st(said)));
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

pub(super) fn gap<'a>(row: &Row<'_, 'a>, now_ns: u64) -> Rec<'a> {
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

pub(super) fn scope() -> InstrumentationScope {
    InstrumentationScope {
        name: "kubectl-diag".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        ..Default::default()
    }
}
