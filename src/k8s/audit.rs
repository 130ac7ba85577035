//! kube-apiserver audit log entries as they come in files, decoded into one
//! plain [`AuditEntry`] whatever the exporter:
//!
//! - the apiserver's own log backend (`--audit-log-path`, JSON): one
//!   `audit.k8s.io/v1` `Event` per line, or an `EventList`
//!   (k8s.io/apiserver/pkg/apis/audit/v1/types.go);
//! - Google Cloud Logging (GKE): a `LogEntry` whose `protoPayload` is a
//!   `google.cloud.audit.AuditLog` with `serviceName: k8s.io` (a JSON array
//!   from `gcloud logging read --format=json`, or JSON lines from a sink);
//! - CloudWatch Logs (EKS): the audit event as a JSON string in `message`
//!   (`aws logs filter-log-events`/`get-log-events` output, one event per
//!   line, or its `events` array), and the S3 export's
//!   `TIMESTAMP {json}` lines.
//!
//! Request and response bodies stay raw ([`RawValue`]): most entries are reads
//! or carry none, and the importer decodes only what it stores.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use super::event::parse_k8s_time;

/// One audit entry, whatever file it came from.
///
/// Serialisable so that an import can sort a log larger than memory by time
/// (`commands::import::audit::Sorter`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct AuditEntry {
    /// `auditID` (Cloud Logging: `gke:` and the entry's `insertId`).
    pub id: String,
    /// `ResponseComplete` is the one stage the importer reads.
    pub complete: bool,
    pub verb: String,
    /// The authenticated user (`user.username`, with the IAM identity
    /// behind it where the authenticator names one).
    pub user: String,
    /// `impersonatedUser.username`: whom the request acted as. When set, it
    /// is the person the write is told as ([`AuditEntry::person`]).
    pub impersonated: String,
    pub user_agent: String,
    pub source_ip: String,
    pub group: String,
    pub version: String,
    pub resource: String,
    pub subresource: String,
    pub namespace: String,
    pub name: String,
    pub uid: String,
    /// The HTTP status; 0 when the entry has none (a Metadata-level entry of
    /// a stage before the response).
    pub code: u16,
    /// `responseStatus.reason` (`Forbidden`, `Conflict`) and its message.
    pub reason: String,
    pub message: String,
    /// Epoch ms: `stageTimestamp`, else `requestReceivedTimestamp`, else
    /// the `timestamp` of older audit versions (v1alpha1, v1beta1) or of the
    /// exporter's envelope. 0: the entry has no time that can be read (no
    /// zone, no time at all); an import skips it, counted, never at 1970.
    pub at: i64,
    /// The cluster the entry says it is of, as the exporter names it
    /// (GKE: `gke_PROJECT_LOCATION_CLUSTER`, the name kubectl's context for
    /// it has); empty when the entry does not say (the apiserver's own log).
    pub cluster: String,
    /// `authorization.k8s.io/decision` (`allow`, `forbid`) and `.../reason`.
    pub decision: String,
    pub decision_reason: String,
    /// `?fieldManager=` of the request URI (kubectl sets it: `kubectl-edit`).
    pub field_manager: String,
    pub request: Option<Box<RawValue>>,
    pub response: Option<Box<RawValue>>,
}

impl AuditEntry {
    /// A write that the importer stores: everything but reads.
    pub fn is_write(&self) -> bool {
        matches!(
            self.verb.as_str(),
            "create" | "update" | "patch" | "delete" | "deletecollection"
        )
    }

    /// The apiserver refused it.
    pub fn refused(&self) -> bool {
        self.code >= 400
    }

    /// Who refused it, as far as the entry tells: authorization (the
    /// authorizer's decision `forbid`), an admission plugin or policy named
    /// in the answer, validation, or the object itself (a conflict); empty
    /// when the entry does not say.
    pub fn refused_by(&self) -> String {
        if !self.refused() {
            return String::new();
        }
        if self.decision == "forbid" {
            return if self.decision_reason.is_empty() {
                "authorization".into()
            } else {
                format!("authorization ({})", self.decision_reason)
            };
        }
        let m = self.message.as_str();
        let quoted = |after: &str, close: char| {
            m.split_once(after)
                .and_then(|(_, rest)| rest.split_once(close))
                .map(|(name, _)| name.to_string())
        };
        if let Some(hook) = quoted("admission webhook \"", '"') {
            return format!("admission webhook {hook}");
        }
        if let Some(policy) = quoted("ValidatingAdmissionPolicy '", '\'') {
            return format!("admission policy {policy}");
        }
        if m.contains("violates PodSecurity") {
            return "admission (PodSecurity)".into();
        }
        if m.contains("exceeded quota") || m.contains("failed quota") {
            return "admission (ResourceQuota)".into();
        }
        if m.contains("LimitRange")
            || m.contains("usage per Container")
            || m.contains("usage per Pod")
        {
            return "admission (LimitRanger)".into();
        }
        match (self.code, self.reason.as_str()) {
            (409, _) | (_, "Conflict") | (_, "AlreadyExists") => "the object (conflict)".into(),
            (422, _) | (_, "Invalid") => "validation".into(),
            (403, _) if self.decision == "allow" => "admission".into(),
            (401, _) => "authentication".into(),
            (429, _) => "priority and fairness (429)".into(),
            _ => String::new(),
        }
    }

    /// A request that reads, refused or not.
    pub fn is_read(&self) -> bool {
        matches!(self.verb.as_str(), "get" | "list" | "watch")
    }

    /// A request that opens a session into a Pod (`kubectl exec`, `attach`,
    /// `port-forward`): whatever its verb (a websocket upgrade is a `get`),
    /// who did it matters.
    pub fn is_session(&self) -> bool {
        self.resource == "pods"
            && matches!(self.subresource.as_str(), "exec" | "attach" | "portforward")
    }

    /// The person the write is told as: the impersonated user when there is
    /// one (whom the request acted as), else the authenticated one.
    pub fn person(&self) -> &str {
        if self.impersonated.is_empty() {
            &self.user
        } else {
            &self.impersonated
        }
    }

    /// Who made it, as the recording names a writer from an audit log: the
    /// person (or service account) the request acted as, the authenticated
    /// user behind an impersonation, and the field manager or, lacking one,
    /// the user agent's first word, e.g. `alice@example.com (kubectl-edit)`,
    /// `carol@example.com [impersonated by admin] (kubectl)`.
    pub fn writer(&self, manager: &str) -> String {
        crate::model::Writer {
            person: self.person().to_string(),
            impersonator: if self.impersonated.is_empty() {
                String::new()
            } else {
                self.user.clone()
            },
            manager: if manager.is_empty() {
                self.field_manager.clone()
            } else {
                manager.to_string()
            },
            user_agent: user_agent_product(&self.user_agent),
            mark: None,
        }
        .label()
    }
}

/// `kubectl/v1.31.0 (linux/amd64) kubernetes/abc` -> `kubectl`.
pub fn user_agent_product(ua: &str) -> String {
    ua.split(['/', ' ']).next().unwrap_or_default().to_string()
}

/// Why a document is not an audit entry this reader knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotAudit {
    /// Not JSON of any audit shape (the reason serde gave, or what it is).
    Shape(String),
    /// An `EventList`: its items are the entries (read as a document).
    List,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct WireUser {
    username: String,
    extra: std::collections::BTreeMap<String, Vec<String>>,
}

impl WireUser {
    /// The user name, with the IAM identity behind it where the
    /// authenticator names one (EKS: every IAM user mapped to
    /// `kubernetes-admin` is told apart only by `extra.arn`).
    fn label(self) -> String {
        let arn = ["canonicalArn", "arn"]
            .iter()
            .find_map(|k| self.extra.get(*k).and_then(|v| v.first()))
            .filter(|a| !a.is_empty() && !self.username.contains(a.as_str()));
        match arn {
            Some(a) => format!("{} [{a}]", self.username),
            None => self.username,
        }
    }
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct WireRef {
    resource: String,
    namespace: String,
    name: String,
    uid: String,
    api_group: String,
    api_version: String,
    subresource: String,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct WireStatus {
    code: u16,
    reason: String,
    message: String,
}

/// An `audit.k8s.io/v1` Event, with the bodies left raw.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct WireAudit {
    #[serde(rename = "auditID")]
    audit_id: String,
    stage: String,
    #[serde(rename = "requestURI")]
    request_uri: String,
    verb: String,
    user: WireUser,
    impersonated_user: Option<WireUser>,
    #[serde(rename = "sourceIPs")]
    source_ips: Vec<String>,
    user_agent: String,
    object_ref: Option<WireRef>,
    response_status: Option<WireStatus>,
    request_object: Option<Box<RawValue>>,
    response_object: Option<Box<RawValue>>,
    request_received_timestamp: String,
    stage_timestamp: String,
    /// v1alpha1 and v1beta1 entries: the only time some carry.
    timestamp: String,
    annotations: std::collections::BTreeMap<String, String>,
}

/// The object's name from a request URI, where `objectRef` lacks it:
/// `/apis/apps/v1/namespaces/shop/deployments/web/scale?x` -> `web`.
fn name_from_uri(uri: &str, resource: &str) -> String {
    let path = uri.split('?').next().unwrap_or_default();
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    parts
        .iter()
        .rposition(|p| *p == resource)
        .and_then(|i| parts.get(i + 1))
        .map(|n| percent_decode(n))
        .unwrap_or_default()
}

impl WireAudit {
    fn into_entry(self) -> AuditEntry {
        let r = self.object_ref.unwrap_or_default();
        let status = self.response_status.unwrap_or_default();
        let at = parse_k8s_time(&self.stage_timestamp)
            .or_else(|| parse_k8s_time(&self.request_received_timestamp))
            .or_else(|| parse_k8s_time(&self.timestamp))
            .unwrap_or(0);
        let name = if r.name.is_empty() && !r.resource.is_empty() {
            name_from_uri(&self.request_uri, &r.resource)
        } else {
            r.name
        };
        AuditEntry {
            id: self.audit_id,
            // NB: an entry with no stage at all (a hand-made or trimmed one) is
            // taken as complete: it is the only one of its request.
            complete: self.stage.is_empty() || self.stage == "ResponseComplete",
            verb: self.verb,
            user: self.user.label(),
            impersonated: self
                .impersonated_user
                .map(WireUser::label)
                .unwrap_or_default(),
            user_agent: self.user_agent,
            source_ip: self.source_ips.into_iter().next().unwrap_or_default(),
            group: r.api_group,
            version: r.api_version,
            resource: r.resource,
            subresource: r.subresource,
            namespace: r.namespace,
            name,
            uid: r.uid,
            code: status.code,
            reason: status.reason,
            message: status.message,
            at,
            cluster: String::new(),
            decision: self
                .annotations
                .get("authorization.k8s.io/decision")
                .cloned()
                .unwrap_or_default(),
            decision_reason: self
                .annotations
                .get("authorization.k8s.io/reason")
                .cloned()
                .unwrap_or_default(),
            field_manager: query_param(&self.request_uri, "fieldManager"),
            request: self.request_object,
            response: self.response_object,
        }
    }
}

/// One query parameter of a request URI, percent-decoded.
fn query_param(uri: &str, key: &str) -> String {
    let Some((_, query)) = uri.split_once('?') else {
        return String::new();
    };
    query
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .find(|(k, _)| *k == key)
        .map(|(_, v)| percent_decode(v))
        .unwrap_or_default()
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = (bytes[i] == b'%')
            .then(|| bytes.get(i + 1..i + 3))
            .flatten()
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (hex, bytes[i]) {
            (Some(b), _) => {
                out.push(b);
                i += 3;
            }
            (None, b'+') => {
                out.push(b' ');
                i += 1;
            }
            (None, b) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Cloud Logging's `LogEntry` of a GKE audit entry.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct WireLogEntry {
    insert_id: String,
    timestamp: String,
    proto_payload: Option<WireAuditLog>,
    operation: Option<WireOperation>,
    resource: WireMonitored,
    /// GKE copies the apiserver's annotations here
    /// (`authorization.k8s.io/decision`).
    labels: std::collections::BTreeMap<String, String>,
}

/// The LogEntry's monitored resource: `k8s_cluster` with `project_id`,
/// `location` and `cluster_name`.
#[derive(Deserialize, Default)]
#[serde(default)]
struct WireMonitored {
    labels: std::collections::BTreeMap<String, String>,
}

impl WireMonitored {
    /// `gke_PROJECT_LOCATION_CLUSTER`, the context name `gcloud container
    /// clusters get-credentials` writes; the cluster name alone when the
    /// project or location is missing; empty when no cluster is named.
    fn cluster(&self) -> String {
        let label = |k: &str| self.labels.get(k).map(String::as_str).unwrap_or_default();
        match (
            label("project_id"),
            label("location"),
            label("cluster_name"),
        ) {
            (_, _, "") => String::new(),
            ("", _, c) | (_, "", c) => c.to_string(),
            (p, l, c) => format!("gke_{p}_{l}_{c}"),
        }
    }
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct WireOperation {
    id: String,
    first: bool,
    last: bool,
}

/// `google.cloud.audit.AuditLog` as GKE fills it in.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct WireAuditLog {
    service_name: String,
    method_name: String,
    resource_name: String,
    authentication_info: WireAuthentication,
    request_metadata: WireRequestMetadata,
    status: Option<WireRpcStatus>,
    request: Option<Box<RawValue>>,
    response: Option<Box<RawValue>>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct WireAuthentication {
    principal_email: String,
    principal_subject: String,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct WireRequestMetadata {
    caller_ip: String,
    caller_supplied_user_agent: String,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct WireRpcStatus {
    code: i32,
    message: String,
}

/// The HTTP status a `google.rpc.Code` stands for (google/rpc/code.proto's
/// table), and the Kubernetes reason beside it.
fn rpc_to_http(code: i32) -> (u16, &'static str) {
    match code {
        0 => (200, ""),
        1 => (499, "Canceled"),
        3 => (400, "BadRequest"),
        4 => (504, "Timeout"),
        5 => (404, "NotFound"),
        6 => (409, "AlreadyExists"),
        7 => (403, "Forbidden"),
        8 => (429, "TooManyRequests"),
        9 => (400, "FailedPrecondition"),
        10 => (409, "Conflict"),
        11 => (400, "OutOfRange"),
        12 => (501, "NotImplemented"),
        14 => (503, "ServiceUnavailable"),
        16 => (401, "Unauthorized"),
        _ => (500, "InternalError"),
    }
}

impl WireLogEntry {
    /// GKE's methodName is `io.k8s.<group>.<version>.<resource>[.<subresource>].<verb>`
    /// and its resourceName `<group>/<version>/namespaces/<ns>/<resource>/<name>[/<sub>]`
    /// (`core` for the core group).
    fn into_entry(self) -> Option<AuditEntry> {
        let p = self.proto_payload?;
        if p.service_name != "k8s.io" {
            return None;
        }
        let verb = p
            .method_name
            .rsplit('.')
            .next()
            .unwrap_or_default()
            .to_string();
        let parts: Vec<&str> = p.resource_name.split('/').collect();
        let (group, version, rest) = match parts.as_slice() {
            [g, v, rest @ ..] => (*g, *v, rest),
            _ => ("", "", &[][..]),
        };
        let (namespace, rest) = match rest {
            ["namespaces", ns, rest @ ..] if !rest.is_empty() => (*ns, rest),
            _ => ("", rest),
        };
        let (resource, name, subresource) = match rest {
            [r] => (*r, "", ""),
            [r, n] => (*r, *n, ""),
            [r, n, s, ..] => (*r, *n, *s),
            _ => ("", "", ""),
        };
        // NB: `status` holds a google.rpc code, not the HTTP one; a Status in
        // `response` has the apiserver's own code and reason.
        let answered = p
            .response
            .as_ref()
            .and_then(|r| serde_json::from_str::<WireStatus>(r.get()).ok())
            .filter(|s| s.code >= 400);
        let (code, reason, message) = match (answered, p.status) {
            (Some(s), _) => (s.code, s.reason, s.message),
            (None, Some(s)) if s.code != 0 => {
                let (code, reason) = rpc_to_http(s.code);
                (code, reason.to_string(), s.message)
            }
            _ => (200, String::new(), String::new()),
        };
        let user = if p.authentication_info.principal_email.is_empty() {
            p.authentication_info.principal_subject
        } else {
            p.authentication_info.principal_email
        };
        // NB: GKE writes one entry per request, at its end; operation.first and
        // .last split only long-running ones (watches), which are reads.
        let complete = self.operation.as_ref().is_none_or(|o| o.last || !o.first);
        let id = match self.operation {
            Some(o) if !o.id.is_empty() => o.id,
            _ => format!("gke:{}", self.insert_id),
        };
        Some(AuditEntry {
            id,
            complete,
            verb,
            user,
            impersonated: String::new(),
            user_agent: p.request_metadata.caller_supplied_user_agent,
            source_ip: p.request_metadata.caller_ip,
            group: if group == "core" { "" } else { group }.to_string(),
            version: version.to_string(),
            resource: resource.to_string(),
            subresource: subresource.to_string(),
            namespace: namespace.to_string(),
            name: name.to_string(),
            uid: String::new(),
            code,
            reason,
            message,
            at: parse_k8s_time(&self.timestamp).unwrap_or(0),
            cluster: self.resource.cluster(),
            decision: self
                .labels
                .get("authorization.k8s.io/decision")
                .cloned()
                .unwrap_or_default(),
            decision_reason: self
                .labels
                .get("authorization.k8s.io/reason")
                .cloned()
                .unwrap_or_default(),
            field_manager: String::new(),
            request: p.request,
            response: p.response,
        })
    }
}

/// What one JSON document of an audit file is.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct Probe {
    kind: String,
    api_version: String,
    #[serde(rename = "auditID")]
    audit_id: Option<serde::de::IgnoredAny>,
    proto_payload: Option<serde::de::IgnoredAny>,
    message: Option<String>,
    /// AKS diagnostic logs (storage account, Event Hubs): the apiserver's
    /// line in `properties.log`.
    properties: Option<WireProperties>,
    /// The Azure resource id of the managed cluster (storage, Event Hubs;
    /// Log Analytics has it as `ResourceId` and `_ResourceId`).
    resource_id: String,
    #[serde(rename = "ResourceId")]
    resource_id_column: String,
    /// AzureDiagnostics (Log Analytics, legacy): the line in `log_s`.
    #[serde(rename = "log_s")]
    log_s: Option<String>,
    /// Log Analytics' `AKSAudit` table: the entry's fields as columns.
    #[serde(rename = "AuditId")]
    audit_id_column: Option<serde::de::IgnoredAny>,
    /// CloudWatch Logs Insights: the line in `@message` (text, or the
    /// object some exports make of it), the log group in `@log`.
    #[serde(rename = "@message")]
    at_message: Option<Value>,
    #[serde(rename = "@log")]
    at_log: String,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct WireProperties {
    log: Option<String>,
}

/// The cluster an Azure resource id names:
/// `/SUBSCRIPTIONS/…/PROVIDERS/MICROSOFT.CONTAINERSERVICE/MANAGEDCLUSTERS/NAME` -> `name`
/// (Azure resource ids are case-insensitive; one export upper-cases them).
fn aks_cluster(resource_id: &str) -> String {
    let lower = resource_id.to_ascii_lowercase();
    lower
        .split_once("/managedclusters/")
        .map(|(_, rest)| rest.split('/').next().unwrap_or_default().to_string())
        .unwrap_or_default()
}

/// The cluster a CloudWatch log group names: `/aws/eks/NAME/cluster`,
/// with or without the account in front (`123456789012:/aws/eks/…`).
fn eks_cluster(log: &str) -> String {
    log.split_once("/aws/eks/")
        .and_then(|(_, rest)| rest.strip_suffix("/cluster"))
        .unwrap_or_default()
        .to_string()
}

/// An apiserver line carried as text by an exporter, decoded, with the
/// cluster the exporter names.
fn carried(line: &str, cluster: String, what: &str) -> Result<Option<AuditEntry>, NotAudit> {
    match serde_json::from_str::<WireAudit>(line) {
        Ok(w) if !w.audit_id.is_empty() => {
            let mut e = w.into_entry();
            e.cluster = cluster;
            Ok(Some(e))
        }
        Ok(_) => Ok(None),
        Err(e) => Err(NotAudit::Shape(format!(
            "its {what} is not an audit event: {e}"
        ))),
    }
}

/// A time as the Azure portal's CSV export writes it, in UTC (its header
/// says ` [UTC]`): `11/29/2026, 3:01:12.363 AM` -> RFC 3339.
fn azure_portal_time(t: &str) -> Option<String> {
    chrono::NaiveDateTime::parse_from_str(t.trim(), "%m/%d/%Y, %I:%M:%S%.f %p")
        .ok()
        .map(|n| {
            n.and_utc()
                .to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
        })
}

/// A row of Log Analytics' `AKSAudit` table as the apiserver's entry: the
/// columns are the entry's fields, PascalCase; dynamic columns may come as
/// JSON text.
fn aks_audit_row(doc: &str) -> Result<AuditEntry, NotAudit> {
    let row: serde_json::Map<String, Value> =
        serde_json::from_str(doc).map_err(|e| NotAudit::Shape(e.to_string()))?;
    let get = |k: &str| -> Value {
        if k.ends_with("Time")
            && let Some(Value::String(t)) = row.get(k)
            && parse_k8s_time(t).is_none()
            && let Some(rfc) = azure_portal_time(t)
        {
            return Value::String(rfc);
        }
        match row.get(k) {
            Some(Value::String(s)) if s.trim_start().starts_with(['{', '[']) => {
                serde_json::from_str(s).unwrap_or(Value::String(s.clone()))
            }
            Some(v) => v.clone(),
            None => Value::Null,
        }
    };
    let mut native = serde_json::Map::new();
    for (column, field) in [
        ("AuditId", "auditID"),
        ("Stage", "stage"),
        ("RequestUri", "requestURI"),
        ("Verb", "verb"),
        ("User", "user"),
        ("ImpersonatedUser", "impersonatedUser"),
        ("SourceIps", "sourceIPs"),
        ("UserAgent", "userAgent"),
        ("ObjectRef", "objectRef"),
        ("ResponseStatus", "responseStatus"),
        ("RequestObject", "requestObject"),
        ("ResponseObject", "responseObject"),
        ("RequestReceivedTime", "requestReceivedTimestamp"),
        ("StageReceivedTime", "stageTimestamp"),
        ("Annotations", "annotations"),
    ] {
        let v = get(column);
        if !v.is_null() && v != Value::String(String::new()) {
            native.insert(field.into(), v);
        }
    }
    let wire: WireAudit = serde_json::from_value(Value::Object(native))
        .map_err(|e| NotAudit::Shape(format!("an AKSAudit row: {e}")))?;
    let mut e = wire.into_entry();
    let id = ["_ResourceId", "ResourceId"]
        .iter()
        .find_map(|k| row.get(*k).and_then(Value::as_str))
        .unwrap_or_default();
    e.cluster = aks_cluster(id);
    Ok(e)
}

/// Whether a document looks like any audit shape (for telling an audit log
/// from an Event dump by content).
pub fn looks_like_audit(doc: &str) -> bool {
    let Ok(p) = serde_json::from_str::<Probe>(doc) else {
        return false;
    };
    p.audit_id.is_some()
        || p.proto_payload.is_some()
        || p.audit_id_column.is_some()
        || p.properties
            .as_ref()
            .is_some_and(|p| p.log.as_deref().is_some_and(|l| l.contains("\"auditID\"")))
        || p.log_s
            .as_deref()
            .is_some_and(|l| l.contains("\"auditID\""))
        || p.at_message
            .as_ref()
            .is_some_and(|m| m.to_string().contains("auditID"))
        || p.api_version.starts_with("audit.k8s.io/")
        || (p.kind.is_empty()
            && p.message
                .as_deref()
                .is_some_and(|m| m.trim_start().starts_with('{') && m.contains("\"auditID\"")))
}

/// Decodes one JSON document (an object) of any audit shape into its entry:
/// `None` for a document of a known shape that is not a Kubernetes audit
/// entry (another service's Cloud Logging entry).
pub fn decode(doc: &str) -> Result<Option<AuditEntry>, NotAudit> {
    // NB: the log backend begins every line so (Go writes TypeMeta first): no
    // need to read the line twice to tell its shape.
    if doc.starts_with(r#"{"kind":"Event","apiVersion":"audit.k8s.io/"#) {
        let wire: WireAudit =
            serde_json::from_str(doc).map_err(|e| NotAudit::Shape(e.to_string()))?;
        return Ok(Some(wire.into_entry()));
    }
    let probe: Probe = serde_json::from_str(doc).map_err(|e| NotAudit::Shape(e.to_string()))?;
    if probe.kind == "EventList" {
        return Err(NotAudit::List);
    }
    if probe.audit_id.is_some() || probe.api_version.starts_with("audit.k8s.io/") {
        let wire: WireAudit =
            serde_json::from_str(doc).map_err(|e| NotAudit::Shape(e.to_string()))?;
        return Ok(Some(wire.into_entry()));
    }
    if probe.proto_payload.is_some() {
        let wire: WireLogEntry =
            serde_json::from_str(doc).map_err(|e| NotAudit::Shape(e.to_string()))?;
        return Ok(wire.into_entry());
    }
    if let Some(log) = probe.properties.and_then(|p| p.log) {
        return carried(&log, aks_cluster(&probe.resource_id), "properties.log");
    }
    if let Some(log) = probe.log_s {
        return carried(&log, aks_cluster(&probe.resource_id_column), "log_s");
    }
    if probe.audit_id_column.is_some() {
        return aks_audit_row(doc).map(Some);
    }
    if let Some(message) = probe.at_message {
        let cluster = eks_cluster(&probe.at_log);
        return match message {
            Value::String(line) => carried(&line, cluster, "@message"),
            object @ Value::Object(_) => carried(&object.to_string(), cluster, "@message"),
            _ => Err(NotAudit::Shape("its @message is not an audit event".into())),
        };
    }
    if let Some(message) = probe.message {
        // CloudWatch Logs: the apiserver's line, as a string.
        return match serde_json::from_str::<WireAudit>(&message) {
            Ok(w) if !w.audit_id.is_empty() => Ok(Some(w.into_entry())),
            Ok(_) => Ok(None),
            Err(e) => Err(NotAudit::Shape(format!(
                "its message is not an audit event: {e}"
            ))),
        };
    }
    Err(NotAudit::Shape(if probe.kind.is_empty() {
        "it has no auditID, protoPayload or message".into()
    } else {
        format!("it is a {}, not an audit event", probe.kind)
    }))
}

/// A line of CloudWatch Logs' export to S3: `2026-11-29T03:00:00.000Z {…}`.
/// Returns the JSON part.
pub fn strip_export_timestamp(line: &str) -> Option<&str> {
    let (stamp, rest) = line.split_once(' ')?;
    (stamp.len() >= 20 && parse_k8s_time(stamp).is_some() && rest.trim_start().starts_with('{'))
        .then(|| rest.trim_start())
}

#[cfg(test)]
mod tests {
    use super::*;

    const NATIVE: &str = r#"{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"RequestResponse","auditID":"6c1f","stage":"ResponseComplete","requestURI":"/apis/apps/v1/namespaces/shop/deployments/web?fieldManager=kubectl-edit","verb":"patch","user":{"username":"alice","groups":["dev","system:authenticated"]},"sourceIPs":["10.0.0.7"],"userAgent":"kubectl/v1.31.0 (linux/amd64) kubernetes/abc","objectRef":{"resource":"deployments","namespace":"shop","name":"web","apiGroup":"apps","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":200},"requestObject":{"spec":{"replicas":3}},"responseObject":{"kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":"web"}},"requestReceivedTimestamp":"2026-11-29T03:00:00.100000Z","stageTimestamp":"2026-11-29T03:00:00.130000Z"}"#;

    #[test]
    fn the_log_backends_line() {
        assert!(looks_like_audit(NATIVE));
        let e = decode(NATIVE).unwrap().unwrap();
        assert_eq!(e.id, "6c1f");
        assert!(e.complete && e.is_write() && !e.refused());
        assert_eq!(
            (
                e.group.as_str(),
                e.resource.as_str(),
                e.namespace.as_str(),
                e.name.as_str()
            ),
            ("apps", "deployments", "shop", "web")
        );
        assert_eq!(e.field_manager, "kubectl-edit");
        assert_eq!(e.writer(""), "alice (kubectl-edit)");
        assert_eq!(e.at, parse_k8s_time("2026-11-29T03:00:00.13Z").unwrap());
        assert!(e.response.unwrap().get().contains("Deployment"));
    }

    #[test]
    fn the_writer_without_a_field_manager_is_the_user_agents_product() {
        let e = AuditEntry {
            user: "system:serviceaccount:ci:bot".into(),
            user_agent: "argocd-application-controller/v2.9 (linux)".into(),
            impersonated: "bob".into(),
            ..AuditEntry::default()
        };
        // NB: the person is whom the request acted as (issue 48), the
        // authenticated user beside it.
        assert_eq!(
            e.writer(""),
            "bob [impersonated by system:serviceaccount:ci:bot] (argocd-application-controller)"
        );
        assert_eq!(
            e.writer("helm"),
            "bob [impersonated by system:serviceaccount:ci:bot] (helm)"
        );
        assert_eq!(e.person(), "bob");
    }

    #[test]
    fn a_cloud_logging_entry_of_gke() {
        let doc = r#"{"insertId":"abc123","logName":"projects/p/logs/cloudaudit.googleapis.com%2Factivity",
          "protoPayload":{"@type":"type.googleapis.com/google.cloud.audit.AuditLog","serviceName":"k8s.io",
          "methodName":"io.k8s.core.v1.pods.create","resourceName":"core/v1/namespaces/shop/pods/web-1",
          "authenticationInfo":{"principalEmail":"alice@example.com"},
          "requestMetadata":{"callerIp":"10.0.0.7","callerSuppliedUserAgent":"kubectl/v1.31.0"},
          "status":{"code":7,"message":"pods \"web-1\" is forbidden: exceeded quota"}},
          "resource":{"type":"k8s_cluster","labels":{"cluster_name":"prod"}},
          "timestamp":"2026-11-29T03:00:00.5Z"}"#;
        assert!(looks_like_audit(doc));
        let e = decode(doc).unwrap().unwrap();
        assert_eq!(e.id, "gke:abc123");
        assert_eq!(
            (e.verb.as_str(), e.resource.as_str(), e.group.as_str()),
            ("create", "pods", "")
        );
        assert_eq!((e.namespace.as_str(), e.name.as_str()), ("shop", "web-1"));
        assert_eq!((e.code, e.reason.as_str()), (403, "Forbidden"));
        assert!(e.refused());
        assert_eq!(e.user, "alice@example.com");
    }

    #[test]
    fn gke_subresources_and_cluster_scoped_names() {
        let doc = r#"{"insertId":"x","protoPayload":{"serviceName":"k8s.io",
          "methodName":"io.k8s.apps.v1.deployments.scale.patch",
          "resourceName":"apps/v1/namespaces/shop/deployments/web/scale"},"timestamp":"2026-11-29T03:00:00Z"}"#;
        let e = decode(doc).unwrap().unwrap();
        assert_eq!(
            (e.resource.as_str(), e.name.as_str(), e.subresource.as_str()),
            ("deployments", "web", "scale")
        );
        assert_eq!(e.code, 200);
        let node = r#"{"insertId":"y","protoPayload":{"serviceName":"k8s.io",
          "methodName":"io.k8s.core.v1.nodes.patch","resourceName":"core/v1/nodes/n1"},"timestamp":"2026-11-29T03:00:00Z"}"#;
        let e = decode(node).unwrap().unwrap();
        assert_eq!(
            (e.namespace.as_str(), e.resource.as_str(), e.name.as_str()),
            ("", "nodes", "n1")
        );
        let other = r#"{"insertId":"z","protoPayload":{"serviceName":"compute.googleapis.com"}}"#;
        assert!(decode(other).unwrap().is_none());
    }

    #[test]
    fn a_cloudwatch_line_carries_the_event_in_message() {
        let doc = serde_json::json!({
            "timestamp": 1764385200000_i64,
            "message": NATIVE,
            "logStreamName": "kube-apiserver-audit-1",
            "eventId": "3",
        })
        .to_string();
        assert!(looks_like_audit(&doc));
        assert_eq!(decode(&doc).unwrap().unwrap().id, "6c1f");
        let line = format!("2026-11-29T03:00:00.131Z {NATIVE}");
        assert_eq!(strip_export_timestamp(&line), Some(NATIVE));
        assert_eq!(strip_export_timestamp("LAST SEEN TYPE"), None);
    }

    #[test]
    fn an_event_dump_is_not_an_audit_log() {
        let core = r#"{"kind":"Event","apiVersion":"v1","metadata":{"name":"a"},"reason":"X","message":"m"}"#;
        assert!(!looks_like_audit(core));
        assert!(decode(core).is_err());
    }

    #[test]
    fn field_manager_is_percent_decoded() {
        assert_eq!(
            query_param("/api/v1/pods?fieldManager=my%20tool&x=1", "fieldManager"),
            "my tool"
        );
        assert_eq!(
            query_param("/api/v1/pods?fieldManager=a%2", "fieldManager"),
            "a%2"
        );
        assert_eq!(query_param("/api/v1/pods", "fieldManager"), "");
    }
}
