//! `import` of kube-apiserver audit logs: the writes of the past, with the
//! people who made them, stored as the recorder stores what it watches.
//!
//! Every audit file of one `import` is read first, then its entries are
//! stored in time order (the order of the files, of their lines, newest
//! first or shuffled, does not matter: [`Sorter`]), one cluster at a time:
//! an entry that names its cluster (GKE's `resource.labels`, ...) goes to
//! that cluster, the others to `--cluster`, else to the recorded cluster
//! whose objects they are (matched by uid), else to `imported`.
//!
//! Of each entry only a `ResponseComplete` stage is read; every write is a
//! fact with its provenance, stored once (by its `auditID`, across files and
//! imports):
//! - a request the apiserver refused (4xx/5xx), a write or a read: a
//!   [`Refusal`], with who refused it (authorization, admission, the object);
//! - a write of an Event: its occurrences, through the Events' own
//!   exactly-once rule;
//! - any other write: an object version, from `responseObject`
//!   (RequestResponse level), else from a full `requestObject` (create,
//!   update), else from a patch or a scale applied to the last whole version
//!   this import read of the object (stored, and counted as from a patch).
//!   Its writer is the person (the impersonated user first) with the field
//!   manager or user agent beside it;
//! - a write it cannot make a version of (a Metadata-level entry, a patch
//!   of an object never seen whole, `exec`, an eviction): a [`Touch`]: who,
//!   what, when, with which answer, and what the entry tells of the change.
//!   A version after touches is not told as its writer's alone: what its
//!   patch did not set is a version of its own, by the touches' writers
//!   (`[inferred]`).
//!
//! Next to a recording of the same cluster, a write the recorder stored (the
//! same object at the same resourceVersion) gains its person and adds
//! nothing; a write while a recorder session ran but not stored by it (a
//! state the watch coalesced) adds nothing either. The rules and their
//! limits: docs/schema.md, "Imports of audit logs".

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::io::{BufRead, Read, Write};

use anyhow::Context;
use kube::core::ApiResource;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use crate::k8s::audit::{self, AuditEntry};
use crate::k8s::event::WireEvent;
use crate::k8s::object::{Decode, WireObject};
use crate::model::writer::{Mark, Writer as Who};
use crate::model::{EventChange, ObjectChange, Provenance, Seen, Touch, TouchWhy};
use crate::store::audit::Refusal;
use crate::store::writer::{Batch, Writer};

/// What one audit file held, and what of it was stored.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Summary {
    pub entries: u64,
    pub first: Option<i64>,
    pub last: Option<i64>,
    pub writes: u64,
    pub versions: u64,
    /// Versions made from a patch or a scale applied to an earlier version.
    pub from_patches: u64,
    /// Versions of what writes without a body changed, inferred from the
    /// next whole version.
    pub inferred: u64,
    /// Writes kept as touches (no version can be made of them).
    pub touches: u64,
    /// Status writes and bindings with nothing to make a version of: counted.
    pub status_writes: u64,
    /// Writes the recording had stored already: their writer named.
    pub merged: u64,
    /// Writes while a recorder ran that it did not store as a version.
    pub covered: u64,
    pub refused: u64,
    /// Of `refused`, reads (a controller that may not list what it needs).
    pub refused_reads: u64,
    pub event_writes: u64,
    pub occurrences: u64,
    /// Entries an import took before (this file twice, or files that overlap).
    pub duplicates: u64,
    /// Event writes with nothing to store (no body at this level).
    pub bodiless: u64,
    /// Entries with no time that can be read: skipped.
    pub untimed: u64,
    /// The last line was cut short (a log being written): left out.
    pub torn: bool,
    /// Entries per resource (`deployments.apps`), of any verb.
    pub resources: BTreeMap<String, u64>,
    /// The clusters its entries were stored under.
    pub clusters: BTreeSet<String>,
    /// Which shapes the file held (`apiserver log`, `Cloud Logging`, ...).
    pub shape: &'static str,
}

/// Resources whose absence from a whole audit log says the policy dropped
/// them, said in the summary.
const EXPECTED: &[&str] = &[
    "pods",
    "deployments.apps",
    "replicasets.apps",
    "events",
    "nodes",
];

impl Summary {
    fn saw(&mut self, e: &AuditEntry) {
        self.entries += 1;
        if e.at > 0 {
            self.first = Some(self.first.map_or(e.at, |f| f.min(e.at)));
            self.last = Some(self.last.map_or(e.at, |l| l.max(e.at)));
        }
        let key = if e.group.is_empty() {
            e.resource.clone()
        } else {
            format!("{}.{}", e.resource, e.group)
        };
        if !key.is_empty() {
            *self.resources.entry(key).or_default() += 1;
        }
    }

    /// The lines `import` prints for this file.
    pub fn lines(&self, file: &str) -> Vec<String> {
        let time = |t: Option<i64>| {
            t.and_then(chrono::DateTime::from_timestamp_millis)
                .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
                .unwrap_or_else(|| "?".into())
        };
        let clusters = if self.clusters.is_empty() {
            "no cluster".to_string()
        } else {
            let names: Vec<String> = self.clusters.iter().map(|c| format!("{c:?}")).collect();
            format!("cluster {}", names.join(", "))
        };
        let mut lines = vec![format!(
            "{file}: audit log ({}), {} entries from {} to {}: {} write(s) stored under {clusters}: \
             {} object version(s) ({} from patches), {} touch(es) without a body, {} Event write(s) \
             ({} new occurrence(s)), {} refused",
            self.shape,
            self.entries,
            time(self.first),
            time(self.last),
            self.writes,
            self.versions,
            self.from_patches,
            self.touches,
            self.event_writes,
            self.occurrences,
            self.refused,
        )];
        if self.refused_reads > 0 {
            lines.push(format!(
                "{file}: {} refused read(s) (get, list, watch) kept with the refusals: a \
                 controller refused what it reads does nothing",
                self.refused_reads
            ));
        }
        if self.merged + self.covered > 0 {
            lines.push(format!(
                "{file}: {} write(s) the recording holds already (their writer now names the user), \
                 {} more made while the recorder ran (states it did not keep): nothing added for them",
                self.merged, self.covered
            ));
        }
        if self.duplicates > 0 {
            lines.push(format!(
                "{file}: {} write(s) imported before (by auditID): not stored again",
                self.duplicates
            ));
        }
        if self.touches > 0 {
            lines.push(format!(
                "{file}: {} write(s) kept as touches: who, what and when, without the object (Metadata \
                 level, a patch of an object not seen whole before it, exec, an eviction); a policy \
                 with level RequestResponse for them keeps their versions",
                self.touches
            ));
        }
        if self.status_writes > 0 {
            lines.push(format!(
                "{file}: {} status write(s) with no object to make a version of (what kubelets \
                 and controllers write all day): counted, not kept",
                self.status_writes
            ));
        }
        if self.inferred > 0 {
            lines.push(format!(
                "{file}: {} change(s) made by writes the log holds no body of, inferred from the \
                 next whole version and told as theirs ([inferred])",
                self.inferred
            ));
        }
        if self.bodiless > 0 {
            lines.push(format!(
                "{file}: {} Event write(s) carry no Event at their audit level: stored as nothing \
                 but this count",
                self.bodiless
            ));
        }
        if self.untimed > 0 {
            lines.push(format!(
                "{file}: {} entr(y/ies) carry no time that can be read (no stageTimestamp, \
                 requestReceivedTimestamp or timestamp, or one without a zone): skipped",
                self.untimed
            ));
        }
        let missing: Vec<&str> = EXPECTED
            .iter()
            .copied()
            .filter(|r| !self.resources.contains_key(*r))
            .collect();
        if self.entries > 0 && !missing.is_empty() {
            lines.push(format!(
                "{file}: no entries at all for {}: the audit policy dropped them (or nothing touched \
                 them); what happened to them is not in this file",
                missing.join(", ")
            ));
        }
        lines
    }
}

/// What the import keeps of the objects it read whole, to apply a later
/// patch or scale to: bounded by bytes, the oldest let go first.
#[derive(Default)]
struct Bases {
    by_uid: HashMap<String, (String, String)>,
    order: VecDeque<String>,
    bytes: usize,
    /// (resource.group, namespace, name) -> uid
    uids: HashMap<(String, String, String), String>,
    /// Spec writes kept as touches since the object's last version, of
    /// objects with a base: (time, writer). The next whole version is not
    /// theirs alone.
    pending: HashMap<(String, String, String), Vec<(i64, String)>>,
}

const BASES_MAX_BYTES: usize = 32 << 20;

impl Bases {
    fn key(e: &AuditEntry) -> (String, String, String) {
        (
            format!("{}.{}", e.resource, e.group),
            e.namespace.clone(),
            e.name.clone(),
        )
    }

    fn uid(&self, e: &AuditEntry) -> Option<&String> {
        self.uids.get(&Self::key(e))
    }

    /// The last whole body of an object, with its apiVersion.
    fn get(&self, uid: &str) -> Option<&(String, String)> {
        self.by_uid.get(uid)
    }

    fn put(&mut self, e: &AuditEntry, uid: &str, api_version: &str, body: String) {
        self.uids.insert(Self::key(e), uid.to_string());
        self.bytes += body.len();
        if let Some((_, old)) = self
            .by_uid
            .insert(uid.to_string(), (api_version.to_string(), body))
        {
            self.bytes -= old.len();
        } else {
            self.order.push_back(uid.to_string());
        }
        while self.bytes > BASES_MAX_BYTES {
            let Some(oldest) = self.order.pop_front() else {
                break;
            };
            if let Some((_, b)) = self.by_uid.remove(&oldest) {
                self.bytes -= b.len();
            }
        }
    }

    /// A spec write kept as a touch, of an object with a base.
    fn pending(&mut self, e: &AuditEntry, at: i64, who: &str) {
        if self.uid(e).is_some() {
            self.pending
                .entry(Self::key(e))
                .or_default()
                .push((at, who.to_string()));
        }
    }

    fn take_pending(&mut self, e: &AuditEntry) -> Vec<(i64, String)> {
        self.pending.remove(&Self::key(e)).unwrap_or_default()
    }

    fn forget(&mut self, e: &AuditEntry, uid: &str) {
        self.pending.remove(&Self::key(e));
        self.uids.remove(&Self::key(e));
        if let Some((_, b)) = self.by_uid.remove(uid) {
            self.bytes -= b.len();
        }
    }
}

/// The audit entries of one cluster being stored, in time order.
pub struct AuditImport<'b, 'w, 's> {
    batch: &'b mut Batch<'w>,
    keep: Decode,
    /// Whether a recorder ever wrote this cluster: else no write can be one
    /// it stored, and nothing is looked up for it.
    recorded: bool,
    /// Types already saved for resolving names (`timeline widgets/cart`).
    types: std::collections::HashSet<(String, String)>,
    bases: Bases,
    /// One per file; `file` is the one the entry being stored came from.
    summaries: &'s mut [Summary],
    file: usize,
}

/// Resources whose writes are not facts about objects anyone asks about:
/// reviews (a question, not a write), token requests, and Leases
/// (heartbeats, a write every few seconds per holder). Counted as writes.
fn not_an_object(e: &AuditEntry) -> bool {
    e.resource.ends_with("reviews")
        || (e.resource == "leases" && e.group == "coordination.k8s.io")
        || (e.resource == "serviceaccounts" && e.subresource == "token")
}

/// Whether a write may change an object's spec (not its status).
fn spec_write(e: &AuditEntry) -> bool {
    matches!(e.verb.as_str(), "update" | "patch") && matches!(e.subresource.as_str(), "" | "scale")
}

/// Leaf paths a merge patch sets, with short values: `spec.replicas=0`.
fn patched_paths(prefix: &str, v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                if k.starts_with('$') {
                    continue;
                }
                let path = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                patched_paths(&path, v, out);
            }
        }
        Value::Array(items)
            if items.iter().all(|i| i.get("name").is_some()) && !items.is_empty() =>
        {
            for item in items {
                let name = item.get("name").and_then(Value::as_str).unwrap_or_default();
                let mut rest = item.clone();
                if let Some(m) = rest.as_object_mut() {
                    m.remove("name");
                }
                patched_paths(&format!("{prefix}[{name}]"), &rest, out);
            }
        }
        Value::Null => out.push(format!("{prefix} removed")),
        other => {
            let text = match other {
                Value::String(s) => s.clone(),
                v => v.to_string(),
            };
            if text.chars().count() > 64 {
                out.push(format!("{prefix} set"));
            } else {
                out.push(format!("{prefix} → {text}"));
            }
        }
    }
}

/// The replicas a write of the `scale` subresource left: the answered
/// Scale's (whose `spec` is empty for 0: `replicas` is omitted when zero),
/// else the request's.
fn scale_replicas(response: Option<&Value>, request: Option<&Value>) -> Option<Value> {
    if let Some(r) = response.filter(|r| r.get("kind").and_then(Value::as_str) == Some("Scale")) {
        return match r.pointer("/spec/replicas") {
            Some(n) => Some(n.clone()),
            None if r.get("spec").is_some_and(Value::is_object) => Some(Value::from(0)),
            None => None,
        };
    }
    request.and_then(|q| q.pointer("/spec/replicas")).cloned()
}

/// The scaled object's uid and the resourceVersion a write of the `scale`
/// subresource gave it, from the answered Scale (its metadata is the
/// object's).
fn scale_identity(response: Option<&Value>) -> Option<(String, String)> {
    let r = response.filter(|r| r.get("kind").and_then(Value::as_str) == Some("Scale"))?;
    let field = |name: &str| {
        r.pointer(&format!("/metadata/{name}"))
            .and_then(Value::as_str)
            .filter(|v| !v.is_empty())
            .map(str::to_string)
    };
    Some((field("uid")?, field("resourceVersion")?))
}

/// What a write the import keeps as a touch tells of its change, read off
/// the body it has (a Scale, a patch, DeleteOptions, a Binding): empty
/// when it has none.
fn touch_detail(e: &AuditEntry) -> String {
    let request = parse_body(&e.request);
    let response = parse_body(&e.response);
    match (e.subresource.as_str(), e.verb.as_str()) {
        ("scale", _) => scale_replicas(response.as_ref(), request.as_ref())
            .map(|r| format!("spec.replicas → {r}"))
            .unwrap_or_default(),
        ("binding", _) => request
            .as_ref()
            .and_then(|b| b.pointer("/target/name"))
            .and_then(Value::as_str)
            .map(|n| format!("to Node {n}"))
            .unwrap_or_default(),
        ("", "delete" | "deletecollection") => request
            .as_ref()
            .and_then(|o| o.get("propagationPolicy"))
            .and_then(Value::as_str)
            .map(|p| format!("propagationPolicy {p}"))
            .unwrap_or_default(),
        (_, "patch") => match request {
            Some(Value::Array(ops)) => ops
                .iter()
                .filter_map(|op| {
                    let path = op.get("path")?.as_str()?;
                    let kind = op.get("op")?.as_str()?;
                    Some(format!("{kind} {path}"))
                })
                .take(4)
                .collect::<Vec<_>>()
                .join("; "),
            Some(patch @ Value::Object(_)) => {
                let mut paths = Vec::new();
                patched_paths("", &patch, &mut paths);
                // NB: an apply or a patch names metadata it only restates.
                paths.retain(|p| {
                    !p.starts_with("metadata.")
                        && !p.starts_with("apiVersion")
                        && !p.starts_with("kind")
                });
                let more = paths.len().saturating_sub(4);
                paths.truncate(4);
                let mut text = paths.join("; ");
                if more > 0 {
                    text.push_str(&format!("; {more} more"));
                }
                text
            }
            _ => String::new(),
        },
        _ => String::new(),
    }
}

/// Puts back, in `doc` (the object after a patch), the values `base` had
/// wherever `patch` set one: what is left of the difference from `base`
/// was changed by someone else.
fn revert_patched(doc: &mut Value, base: &Value, patch: &Value) {
    match patch {
        Value::Object(p) => {
            let Value::Object(d) = doc else { return };
            for (k, v) in p {
                if k.starts_with('$') {
                    continue;
                }
                let b = base.get(k);
                match (d.get_mut(k), b, v) {
                    (
                        Some(dv @ Value::Object(_)),
                        Some(bv @ Value::Object(_)),
                        Value::Object(_),
                    )
                    | (Some(dv @ Value::Array(_)), Some(bv @ Value::Array(_)), Value::Array(_)) => {
                        revert_patched(dv, bv, v)
                    }
                    (_, Some(bv), _) => {
                        d.insert(k.clone(), bv.clone());
                    }
                    (_, None, _) => {
                        d.remove(k);
                    }
                }
            }
        }
        Value::Array(p) if p.iter().all(|i| i.get("name").is_some()) => {
            let (Value::Array(d), Value::Array(b)) = (doc, base) else {
                return;
            };
            for item in p {
                let name = item.get("name");
                let Some(target) = d.iter_mut().find(|t| t.get("name") == name) else {
                    continue;
                };
                match b.iter().find(|t| t.get("name") == name) {
                    Some(before) => revert_patched(target, before, item),
                    None => *target = Value::Null,
                }
            }
            d.retain(|v| !v.is_null());
        }
        _ => *doc = base.clone(),
    }
}

/// [`revert_patched`] for an RFC 6902 patch.
fn revert_json_patch(doc: &mut Value, base: &Value, ops: &[Value]) {
    for op in ops {
        let Some(path) = op.get("path").and_then(Value::as_str) else {
            continue;
        };
        match (base.pointer(path).cloned(), doc.pointer_mut(path)) {
            (Some(b), Some(d)) => *d = b,
            (None, Some(_)) => {
                if let Some((parent, last)) = path.rsplit_once('/')
                    && let Some(Value::Object(m)) = doc.pointer_mut(parent)
                {
                    m.remove(&last.replace("~1", "/").replace("~0", "~"));
                }
            }
            _ => {}
        }
    }
}

/// Whether a JSON body is a whole object (not a `Status`, a `Scale` or a patch).
fn whole(v: &Value) -> bool {
    v.get("metadata")
        .and_then(|m| m.get("uid"))
        .and_then(Value::as_str)
        .is_some_and(|u| !u.is_empty())
        && v.get("kind")
            .and_then(Value::as_str)
            .is_some_and(|k| !matches!(k, "Status" | "Scale" | "DeleteOptions" | "Eviction"))
}

/// RFC 7386 merge patch (and close enough for a strategic merge patch of
/// the fields a timeline shows: lists are replaced whole).
fn merge_patch(target: &mut Value, patch: &Value) {
    match (target, patch) {
        (Value::Object(t), Value::Object(p)) => {
            for (k, v) in p {
                if k.starts_with("$") {
                    continue;
                }
                if v.is_null() {
                    t.remove(k);
                } else {
                    merge_patch(t.entry(k.clone()).or_insert(Value::Null), v);
                }
            }
        }
        (t, p) => *t = p.clone(),
    }
}

/// RFC 6902 JSON patch: `add`, `replace` and `remove` of object members
/// and array items; other operations are skipped.
fn json_patch(target: &mut Value, ops: &[Value]) {
    for op in ops {
        let (Some(kind), Some(path)) = (
            op.get("op").and_then(Value::as_str),
            op.get("path").and_then(Value::as_str),
        ) else {
            continue;
        };
        let Some((parent, last)) = path.rsplit_once('/') else {
            continue;
        };
        let last = last.replace("~1", "/").replace("~0", "~");
        let Some(p) = target.pointer_mut(parent) else {
            continue;
        };
        match (kind, p) {
            ("add" | "replace", Value::Object(m)) => {
                if let Some(v) = op.get("value") {
                    m.insert(last, v.clone());
                }
            }
            ("remove", Value::Object(m)) => {
                m.remove(&last);
            }
            ("add" | "replace", Value::Array(a)) => {
                let Some(v) = op.get("value") else { continue };
                match (last.as_str(), last.parse::<usize>()) {
                    ("-", _) => a.push(v.clone()),
                    (_, Ok(i)) if kind == "add" && i <= a.len() => a.insert(i, v.clone()),
                    (_, Ok(i)) if i < a.len() => a[i] = v.clone(),
                    _ => {}
                }
            }
            ("remove", Value::Array(a)) => {
                if let Ok(i) = last.parse::<usize>()
                    && i < a.len()
                {
                    a.remove(i);
                }
            }
            _ => {}
        }
    }
}

/// The spec of a stored base body, as JSON text.
fn base_spec(base: &str) -> Option<String> {
    serde_json::from_str::<Value>(base)
        .ok()
        .and_then(|b| b.get("spec").map(Value::to_string))
}

/// What a field the log does not show had before: `?`.
const UNKNOWN: &str = "?";

/// Sets `?` in `doc` wherever a merge (or strategic merge) patch set a
/// value; lists of named items are followed by name, other lists are `?`
/// whole.
fn unknown_where_patched(doc: &mut Value, patch: &Value) {
    match (doc, patch) {
        (Value::Object(d), Value::Object(p)) => {
            for (k, v) in p {
                if k.starts_with('$') {
                    continue;
                }
                if let Some(target) = d.get_mut(k) {
                    unknown_where_patched(target, v);
                }
            }
        }
        (Value::Array(d), Value::Array(p)) if p.iter().all(|i| i.get("name").is_some()) => {
            for item in p {
                let name = item.get("name");
                if let Some(target) = d.iter_mut().find(|t| t.get("name") == name) {
                    // The name is the merge key, not a value the patch set.
                    let mut set = item.clone();
                    if let Some(m) = set.as_object_mut() {
                        m.remove("name");
                    }
                    unknown_where_patched(target, &set);
                }
            }
        }
        (_, Value::Object(p)) if p.is_empty() => {}
        (d, _) => *d = Value::from(UNKNOWN),
    }
}

fn parse_body(raw: &Option<Box<serde_json::value::RawValue>>) -> Option<Value> {
    raw.as_ref()
        .and_then(|r| serde_json::from_str(r.get()).ok())
}

impl<'b, 'w, 's> AuditImport<'b, 'w, 's> {
    pub fn new(
        batch: &'b mut Batch<'w>,
        keep: Decode,
        summaries: &'s mut [Summary],
    ) -> anyhow::Result<Self> {
        Ok(AuditImport {
            recorded: batch.ever_recorded()?,
            types: Default::default(),
            batch,
            keep,
            bases: Bases::default(),
            summaries,
            file: 0,
        })
    }

    /// The summary of the file the entry being stored came from.
    fn sum(&mut self) -> &mut Summary {
        &mut self.summaries[self.file]
    }

    /// Stores what one entry (of file `file`) says, by the rules of the
    /// module doc. Entries come in time order.
    pub fn entry(&mut self, e: AuditEntry, file: usize) -> anyhow::Result<()> {
        self.file = file;
        if !e.complete || e.id.is_empty() || !(e.is_write() || e.refused() || e.is_session()) {
            return Ok(());
        }
        if self.batch.audit_taken(&e.id)? {
            self.sum().duplicates += 1;
            return Ok(());
        }
        if e.refused() {
            if !self.batch.audit_take(&e.id, e.at)? {
                self.sum().duplicates += 1;
                return Ok(());
            }
            self.sum().writes += u64::from(!e.is_read());
            self.sum().refused += 1;
            self.sum().refused_reads += u64::from(e.is_read());
            let message = crate::k8s::event::cut_message(e.message.clone());
            return Ok(self.batch.refusal(&Refusal {
                at: e.at,
                verb: e.verb.clone(),
                user: e.writer(""),
                group: e.group.clone(),
                resource: e.resource.clone(),
                subresource: e.subresource.clone(),
                namespace: e.namespace.clone(),
                // NB: a refused create names no object in objectRef (RBAC said no
                // before the body was read); the body names it, when kept.
                name: if e.name.is_empty() {
                    parse_body(&e.request)
                        .and_then(|b| {
                            b.pointer("/metadata/name")
                                .and_then(Value::as_str)
                                .map(str::to_string)
                        })
                        .unwrap_or_default()
                } else {
                    e.name.clone()
                },
                code: e.code,
                reason: e.reason.clone(),
                message,
                refused_by: e.refused_by(),
            })?);
        }
        self.sum().writes += u64::from(e.is_write());
        if e.resource == "events" && matches!(e.group.as_str(), "" | "events.k8s.io") {
            if !self.batch.audit_take(&e.id, e.at)? {
                self.sum().duplicates += 1;
                return Ok(());
            }
            return self.event(&e);
        }
        if not_an_object(&e) {
            return Ok(());
        }
        if e.is_session() {
            return self.touch(&e, TouchWhy::Session);
        }
        self.object(e)
    }

    /// Keeps a write no version can be made of (see [`Touch`]).
    fn touch(&mut self, e: &AuditEntry, why: TouchWhy) -> anyhow::Result<()> {
        // NB: a status write without its object says only that a kubelet or a
        // controller did its job: most of a Metadata-level log, read by nobody
        // (changes and timelines leave them out). Counted, not kept: a million
        // of them would be 150 MB of rows.
        if e.subresource == "status" {
            self.sum().status_writes += 1;
            return Ok(());
        }
        let why = match why {
            TouchWhy::NoBase if e.request.is_none() && e.response.is_none() => TouchWhy::Metadata,
            TouchWhy::NoBase
                if e.verb != "patch" && e.subresource.is_empty() && e.response.is_none() =>
            {
                TouchWhy::RequestOnly
            }
            TouchWhy::NoBase if matches!(e.subresource.as_str(), "eviction" | "binding") => {
                TouchWhy::Subresource
            }
            other => other,
        };
        let t = Touch {
            at: e.at,
            verb: e.verb.clone(),
            user: e.writer(""),
            group: e.group.clone(),
            resource: e.resource.clone(),
            subresource: e.subresource.clone(),
            namespace: e.namespace.clone(),
            // NB: a create at Metadata level of an object whose name the
            // apiserver generates names none anywhere in its entry.
            name: if e.name.is_empty() {
                "(generated name)".into()
            } else {
                e.name.clone()
            },
            code: e.code,
            detail: touch_detail(e),
            why,
        };
        if !self.batch.touch(&e.id, &t)? {
            self.sum().duplicates += 1;
            return Ok(());
        }
        self.sum().touches += 1;
        if spec_write(e) {
            self.bases.pending(e, e.at, &t.user);
        }
        if matches!(e.verb.as_str(), "delete" | "deletecollection") && e.subresource.is_empty() {
            // NB: a later create of the same name is another object.
            if let Some(uid) = self.bases.uid(e).cloned() {
                self.bases.forget(e, &uid);
            }
        }
        Ok(())
    }

    fn event(&mut self, e: &AuditEntry) -> anyhow::Result<()> {
        self.sum().event_writes += 1;
        let body = e
            .response
            .as_ref()
            .or(e.request.as_ref().filter(|_| e.verb != "patch"));
        let wire = body.and_then(|b| serde_json::from_str::<WireEvent>(b.get()).ok());
        let Some(o) = wire.and_then(WireEvent::into_observation) else {
            self.sum().bodiless += 1;
            return Ok(());
        };
        if o.reason.is_empty() && o.involved.name.is_empty() {
            self.sum().bodiless += 1;
            return Ok(());
        }
        self.sum().occurrences += self
            .batch
            .apply(&EventChange::Upsert(Box::new(o)))?
            .occurrences;
        Ok(())
    }

    /// The object as this write left it: (body, made from a patch).
    fn body(&self, e: &AuditEntry) -> Option<(Value, bool)> {
        let response = parse_body(&e.response);
        if let Some(r) = response.as_ref().filter(|r| whole(r)) {
            return Some((r.clone(), false));
        }
        let request = parse_body(&e.request);
        if matches!(e.verb.as_str(), "create" | "update")
            && e.subresource.is_empty()
            && let Some(r) = request.as_ref().filter(|r| whole(r))
        {
            return Some((r.clone(), false));
        }
        let uid = if e.uid.is_empty() {
            self.bases.uid(e)?.clone()
        } else {
            e.uid.clone()
        };
        let (_, base) = self.bases.get(&uid)?;
        let mut doc: Value = serde_json::from_str(base).ok()?;
        match (e.subresource.as_str(), e.verb.as_str()) {
            ("scale", _) => {
                let replicas = scale_replicas(response.as_ref(), request.as_ref())?;
                merge_patch(
                    &mut doc,
                    &serde_json::json!({"spec": {"replicas": replicas}}),
                );
            }
            ("", "patch") | ("status", "patch") => match request? {
                Value::Array(ops) => json_patch(&mut doc, &ops),
                patch => merge_patch(&mut doc, &patch),
            },
            _ => return None,
        }
        let spec_moved = base_spec(base) != doc.get("spec").map(Value::to_string);
        if let Some(m) = doc.get_mut("metadata").and_then(Value::as_object_mut) {
            // NB: the patched version is not the stored one's: no resourceVersion
            // matches it, and managedFields would name the earlier writer.
            m.remove("resourceVersion");
            m.remove("managedFields");
            // A change of the spec moves the generation (the apiserver's rule for
            // every type with a status): else the next whole version would show
            // a generation change by whoever wrote it, a status writer.
            if spec_moved && let Some(g) = m.get("generation").and_then(Value::as_i64) {
                m.insert("generation".into(), Value::from(g + 1));
            }
        }
        Some((doc, true))
    }

    /// The body that is the object as stored, when the entry has one that
    /// needs nothing done to it (not a Secret): read once, no JSON tree.
    fn whole_text(e: &AuditEntry) -> Option<(String, WireObject)> {
        let request = (matches!(e.verb.as_str(), "create" | "update") && e.subresource.is_empty())
            .then_some(e.request.as_ref())
            .flatten();
        [e.response.as_ref(), request]
            .into_iter()
            .flatten()
            .find_map(|raw| {
                let wire = serde_json::from_str::<WireObject>(raw.get()).ok()?;
                let kind = wire.kind.as_deref().unwrap_or_default();
                let uid = wire.metadata.uid.as_deref().unwrap_or_default();
                (!uid.is_empty()
                    && !kind.is_empty()
                    && !matches!(
                        kind,
                        "Status" | "Scale" | "DeleteOptions" | "Eviction" | "Secret"
                    ))
                .then(|| (raw.get().to_string(), wire))
            })
    }

    fn object(&mut self, mut e: AuditEntry) -> anyhow::Result<()> {
        if self.merged_scale(&e)? {
            return Ok(());
        }
        let deleting = matches!(e.verb.as_str(), "delete" | "deletecollection");
        let (text, wire, patched) = match Self::whole_text(&e) {
            Some((text, wire)) => (text, wire, false),
            None => {
                let Some((mut doc, patched)) = self.body(&e) else {
                    if deleting && let Some(uid) = self.bases.uid(&e).cloned() {
                        if !self.take(&e)? {
                            return Ok(());
                        }
                        return self.deleted(&e, &uid);
                    }
                    return self.touch(&e, TouchWhy::NoBase);
                };
                if doc.get("kind").and_then(Value::as_str) == Some("Secret")
                    && let Some(m) = doc.as_object_mut()
                {
                    // Never a Secret's values, from a request or a response (as the recorder).
                    m.remove("data");
                    m.remove("stringData");
                }
                let text = doc.to_string();
                let Ok(wire) = serde_json::from_str::<WireObject>(&text) else {
                    return self.touch(&e, TouchWhy::NoBase);
                };
                (text, wire, patched)
            }
        };
        if !self.take(&e)? {
            return Ok(());
        }
        // NB: a create names no object in objectRef at some versions (the
        // name is in the body, or generated): later writes name it.
        if e.name.is_empty()
            && let Some(name) = wire.metadata.name.as_deref()
        {
            e.name = name.to_string();
        }
        let kind = wire.kind.clone().unwrap_or_default();
        let api_version = wire.api_version.clone().unwrap_or_else(|| {
            if e.group.is_empty() {
                e.version.clone()
            } else {
                format!("{}/{}", e.group, e.version)
            }
        });
        let uid = wire.metadata.uid.clone().unwrap_or_default();
        let resource = ApiResource {
            group: e.group.clone(),
            version: e.version.clone(),
            api_version: api_version.clone(),
            kind: kind.clone(),
            plural: e.resource.clone(),
        };
        let pending = wire
            .metadata
            .finalizers
            .as_ref()
            .is_some_and(|f| !f.is_empty())
            || e.code == 202;
        self.remember_type(&resource, !e.namespace.is_empty())?;
        let mut observation = wire.into_observation_with(&resource, self.keep);
        let mut who = e.writer(&manager_of(&observation.managers, e.at));
        if self.recorded
            && !patched
            && !observation.resource_version.is_empty()
            && self
                .batch
                .merge_writer(&uid, &observation.resource_version, &who)?
        {
            self.sum().merged += 1;
            if deleting {
                self.deleter(&e)?;
            }
            self.bases.put(&e, &uid, &api_version, text);
            return Ok(());
        }
        if self.recorded && self.batch.recorded_at(e.at)? {
            // NB: the recording holds the deletion, not who made it.
            self.sum().covered += 1;
            if deleting {
                self.deleter(&e)?;
            }
            if !patched {
                self.bases.put(&e, &uid, &api_version, text);
            }
            return Ok(());
        }
        let seen = match e.verb.as_str() {
            "create" if e.subresource.is_empty() => Seen::Added,
            "delete" | "deletecollection" if !pending => Seen::Deleted,
            _ => Seen::Modified,
        };
        if patched {
            observation.resource_version.clear();
            self.sum().from_patches += 1;
        }
        let touched = self.bases.take_pending(&e);
        if seen == Seen::Modified
            && !patched
            && e.subresource == "status"
            && let Some((_, base)) = self.bases.get(&uid).cloned()
        {
            // A status write changes no spec: a spec that moved since the last
            // version was someone else's write.
            self.spec_by_others(&e, &text, &base, &touched, &resource)?;
        } else if seen == Seen::Modified
            && !patched
            && !touched.is_empty()
            && let Some((_, base)) = self.bases.get(&uid).cloned()
            && !self.inferred(&e, &text, &base, &touched, &resource)?
        {
            // NB: an update (or an apply) sends the whole object: what the
            // touches before it changed cannot be told from what it did.
            let mut names: Vec<String> = touched
                .iter()
                .map(|(_, w)| Who::mark_label(w, Mark::NoBodyLogged))
                .collect();
            names.dedup();
            who = format!("{who},{}", names.join(","));
        }
        if seen == Seen::Modified && !patched && self.bases.get(&uid).is_none() {
            let after: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
            self.first_sight(&e, &after, &resource, &uid)?;
        }
        let applied = self.batch.apply_object(&ObjectChange {
            seen,
            at: e.at,
            blind_since: None,
            observation: Box::new(observation),
            writer: Some(who.to_string()),
            provenance: Provenance::AuditLog,
        })?;
        self.sum().versions += applied.versions;
        if deleting {
            self.deleter(&e)?;
        }
        if seen == Seen::Deleted {
            self.bases.forget(&e, &uid);
        } else {
            self.bases.put(&e, &uid, &api_version, text);
        }
        Ok(())
    }

    /// A write of the `scale` subresource, matched to the version the
    /// recording holds of it: the answered Scale names the scaled object's
    /// uid and the resourceVersion this write gave it, so the version gains
    /// its person as a whole body's does (regression: `kubectl scale` by
    /// alice, recorded and then joined by the audit log, stayed
    /// "kubectl/scale" with no person: the Scale is no whole object, and the
    /// recording already held the moment). False: not such a write, or no
    /// recorded version matches (the entry goes on as before).
    fn merged_scale(&mut self, e: &AuditEntry) -> anyhow::Result<bool> {
        if !self.recorded || e.subresource != "scale" || e.code >= 300 {
            return Ok(false);
        }
        let Some((uid, rv)) = scale_identity(parse_body(&e.response).as_ref()) else {
            return Ok(false);
        };
        // NB: merge_writer sets the same writer again on a second import,
        // so it comes before take (which counts the entry as imported).
        if !self.batch.merge_writer(&uid, &rv, &e.writer(""))? {
            return Ok(false);
        }
        if self.take(e)? {
            self.sum().merged += 1;
        }
        Ok(true)
    }

    /// Who deleted an object the import made a version of the deletion of.
    fn deleter(&mut self, e: &AuditEntry) -> anyhow::Result<()> {
        let t = Touch {
            at: e.at,
            verb: e.verb.clone(),
            user: e.writer(""),
            group: e.group.clone(),
            resource: e.resource.clone(),
            subresource: e.subresource.clone(),
            namespace: e.namespace.clone(),
            name: e.name.clone(),
            code: e.code,
            detail: touch_detail(e),
            why: TouchWhy::Deleter,
        };
        self.batch.touch(&e.id, &t)?;
        Ok(())
    }

    /// Takes the entry's auditID for a version (or a deletion) made of it;
    /// a touch an earlier import kept of it goes. False: taken before.
    fn take(&mut self, e: &AuditEntry) -> anyhow::Result<bool> {
        if !self.batch.audit_take(&e.id, e.at)? {
            self.sum().duplicates += 1;
            return Ok(false);
        }
        self.batch.touch_resolved(&e.id)?;
        Ok(true)
    }

    /// Before a status write (`text`) whose object's spec moved since its
    /// last version (`base`): that move as a version of its own, by the
    /// writes kept as touches in between (`[inferred]`), else by a write the
    /// log does not hold.
    fn spec_by_others(
        &mut self,
        e: &AuditEntry,
        text: &str,
        base: &str,
        touched: &[(i64, String)],
        resource: &ApiResource,
    ) -> anyhow::Result<()> {
        let (Ok(mut mid), Ok(after)) = (
            serde_json::from_str::<Value>(base),
            serde_json::from_str::<Value>(text),
        ) else {
            return Ok(());
        };
        if mid.get("spec") == after.get("spec") {
            return Ok(());
        }
        if let (Some(m), Some(spec)) = (mid.as_object_mut(), after.get("spec")) {
            m.insert("spec".into(), spec.clone());
        }
        if let Some(m) = mid.get_mut("metadata").and_then(Value::as_object_mut) {
            m.remove("resourceVersion");
            m.remove("managedFields");
            if let Some(g) = after.pointer("/metadata/generation") {
                m.insert("generation".into(), g.clone());
            }
        }
        self.store_inferred(e, mid, touched, resource).map(|_| ())
    }

    /// Stores `mid`, what writes without a body (`touched`) left, as a
    /// version at the last of them by their writers (`[inferred]`), else by
    /// a write the log does not hold. False when `mid` is no object.
    fn store_inferred(
        &mut self,
        e: &AuditEntry,
        mid: Value,
        touched: &[(i64, String)],
        resource: &ApiResource,
    ) -> anyhow::Result<bool> {
        let Ok(wire) = serde_json::from_value::<WireObject>(mid) else {
            return Ok(false);
        };
        let mut names: Vec<String> = touched
            .iter()
            .map(|(_, w)| Who::mark_label(w, Mark::Inferred))
            .collect();
        names.dedup();
        if names.is_empty() {
            names.push("(a write the log does not hold)".into());
        }
        let at = touched.last().map_or(e.at, |(at, _)| *at);
        let applied = self.batch.apply_object(&ObjectChange {
            seen: Seen::Modified,
            at,
            blind_since: None,
            observation: Box::new(wire.into_observation_with(resource, self.keep)),
            writer: Some(names.join(",")),
            provenance: Provenance::AuditLog,
        })?;
        self.sum().versions += applied.versions;
        self.sum().inferred += applied.versions;
        Ok(true)
    }

    /// A patch whose result (`text`) follows writes kept as touches
    /// (`touched`) since the object's last version (`base`): what the patch
    /// did not set changed by them. That difference is stored first, as a
    /// version at the last touch, by their writers (`[inferred]`), so that
    /// the patch's version is its writer's change alone. Returns false when
    /// the write is not a patch (the two cannot be told apart).
    fn inferred(
        &mut self,
        e: &AuditEntry,
        text: &str,
        base: &str,
        touched: &[(i64, String)],
        resource: &ApiResource,
    ) -> anyhow::Result<bool> {
        let (Ok(base), Ok(after)) = (
            serde_json::from_str::<Value>(base),
            serde_json::from_str::<Value>(text),
        ) else {
            return Ok(false);
        };
        let mut mid = after.clone();
        match (e.verb.as_str(), parse_body(&e.request)) {
            ("patch", Some(Value::Array(ops))) => revert_json_patch(&mut mid, &base, &ops),
            ("patch", Some(patch @ Value::Object(_))) => revert_patched(&mut mid, &base, &patch),
            _ => return Ok(false),
        }
        if mid.get("spec") == base.get("spec") {
            return Ok(true);
        }
        let spec_differs = mid.get("spec") != after.get("spec");
        if let Some(m) = mid.get_mut("metadata").and_then(Value::as_object_mut) {
            m.remove("resourceVersion");
            m.remove("managedFields");
            if spec_differs
                && let Some(g) = after
                    .pointer("/metadata/generation")
                    .and_then(Value::as_i64)
            {
                m.insert("generation".into(), Value::from(g - 1));
            }
        }
        self.store_inferred(e, mid, touched, resource)
    }

    /// Saves a type the log wrote objects of, once, so that readers resolve
    /// its names as for a recording (`timeline widgets.example.com/cart`).
    /// NB: a recorded cluster has the recorder's discovery, short names
    /// included, which this would overwrite.
    fn remember_type(&mut self, r: &ApiResource, namespaced: bool) -> anyhow::Result<()> {
        if self.recorded
            || r.kind.is_empty()
            || !self.types.insert((r.api_version.clone(), r.plural.clone()))
        {
            return Ok(());
        }
        let t = crate::model::ResourceType {
            group: r.group.clone(),
            version: r.version.clone(),
            kind: r.kind.clone(),
            plural: r.plural.clone(),
            singular: r.kind.to_lowercase(),
            short_names: Vec::new(),
            namespaced,
            verbs: Vec::new(),
        };
        let cluster = self.batch.cluster();
        self.batch.recording().save_resource_types(cluster, &[t])?;
        Ok(())
    }

    /// The first write of an object the log shows, a patch of one made
    /// before it began: what it was before is known but for what the patch
    /// set, so that is stored first (as a version read, by nobody), with the
    /// patched fields `?`. The write is then a change `field ? → new` by its
    /// writer, not the object's creation by them.
    fn first_sight(
        &mut self,
        e: &AuditEntry,
        after: &Value,
        resource: &ApiResource,
        uid: &str,
    ) -> anyhow::Result<()> {
        let Some(patch) = parse_body(&e.request).filter(|_| e.verb == "patch") else {
            return Ok(());
        };
        if uid.is_empty() || self.batch.has_versions(uid)? {
            return Ok(());
        }
        let mut before = after.clone();
        match &patch {
            Value::Array(ops) => {
                for op in ops {
                    if let Some(path) = op.get("path").and_then(Value::as_str)
                        && let Some(v) = before.pointer_mut(path)
                    {
                        *v = Value::from(UNKNOWN);
                    }
                }
            }
            patch => unknown_where_patched(&mut before, patch),
        }
        if let Some(m) = before.get_mut("metadata").and_then(Value::as_object_mut) {
            m.remove("resourceVersion");
            m.remove("managedFields");
            if before.get("spec") != after.get("spec")
                && let Some(g) = after
                    .pointer("/metadata/generation")
                    .and_then(Value::as_i64)
                && let Some(m) = before.get_mut("metadata").and_then(Value::as_object_mut)
            {
                m.insert("generation".into(), Value::from(g - 1));
            }
        }
        let Ok(wire) = serde_json::from_value::<WireObject>(before) else {
            return Ok(());
        };
        self.batch.apply_object(&ObjectChange {
            seen: Seen::Listed,
            at: e.at,
            blind_since: None,
            observation: Box::new(wire.into_observation_with(resource, self.keep)),
            writer: Some(String::new()),
            provenance: Provenance::AuditLog,
        })?;
        Ok(())
    }

    /// A delete whose entry carries no object: the object this import last
    /// read whole under that name, gone.
    fn deleted(&mut self, e: &AuditEntry, uid: &str) -> anyhow::Result<()> {
        let Some((api_version, body)) = self.bases.get(uid).cloned() else {
            return Ok(());
        };
        let Ok(wire) = serde_json::from_str::<WireObject>(&body) else {
            return Ok(());
        };
        let resource = ApiResource {
            group: e.group.clone(),
            version: e.version.clone(),
            api_version,
            kind: wire.kind.clone().unwrap_or_default(),
            plural: e.resource.clone(),
        };
        let observation = wire.into_observation_with(&resource, self.keep);
        if self.recorded && self.batch.recorded_at(e.at)? {
            self.sum().covered += 1;
            return self.deleter(e);
        }
        let applied = self.batch.apply_object(&ObjectChange {
            seen: Seen::Deleted,
            at: e.at,
            blind_since: None,
            observation: Box::new(observation),
            writer: Some(e.writer("").to_string()),
            provenance: Provenance::AuditLog,
        })?;
        self.sum().versions += applied.versions;
        self.deleter(e)?;
        self.bases.forget(e, uid);
        Ok(())
    }
}

/// The field manager of the managedFields entry this write made: the one
/// whose time is the write's (to the second), if exactly one manager is.
fn manager_of(entries: &[crate::model::ManagerEntry], at: i64) -> String {
    let second = at.div_euclid(1000);
    let mut found: Vec<&str> = entries
        .iter()
        .filter(|m| m.time.is_some_and(|t| t.div_euclid(1000) == second))
        .map(|m| m.manager.as_str())
        .collect();
    found.sort_unstable();
    found.dedup();
    match found.as_slice() {
        [one] => (*one).to_string(),
        _ => String::new(),
    }
}

/// Why an audit file could not be read to its end.
pub enum Stop {
    /// Not an audit log after all, or broken: the message says where.
    Bad(String),
    /// Storing failed.
    Sink(anyhow::Error),
}

/// The longest line (or YAML text) read: past it the file is refused,
/// naming the line (a few MB of gzip can hold a line of gigabytes).
pub const MAX_LINE: u64 = 128 * 1024 * 1024;

/// How a file's reading ended, when it did not fail.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Ended {
    /// The last line was cut short (a log still being written) and left out.
    pub torn: bool,
}

/// A line prefixed by what a tool put before the JSON: CloudWatch's S3
/// export (`TIMESTAMP {json}`) or `oc adm node-logs` (`NODE {json}`).
pub fn strip_prefix(line: &str) -> &str {
    if let Some(json) = audit::strip_export_timestamp(line) {
        return json;
    }
    match line.split_once(' ') {
        Some((head, rest))
            if !head.is_empty()
                && !head.starts_with(['{', '['])
                && !head.contains(['"', ':', '{'])
                && rest.trim_start().starts_with('{') =>
        {
            rest.trim_start()
        }
        _ => line,
    }
}

/// Reads every entry of an audit file, JSON lines (the apiserver's log
/// backend, a Cloud Logging sink, CloudWatch exports, `oc adm node-logs`) a
/// line at a time, one JSON document (an `EventList`, `gcloud logging
/// read`'s array, `aws logs filter-log-events`' `events`) an item at a
/// time, or YAML documents (`gcloud logging read` without `--format`).
/// Memory stays flat whatever the size of JSON; a line is at most
/// [`MAX_LINE`]. A last line cut short is left out ([`Ended::torn`]).
pub fn read(
    reader: &mut dyn BufRead,
    shape: &mut &'static str,
    sink: &mut dyn FnMut(AuditEntry) -> anyhow::Result<()>,
) -> Result<Ended, Stop> {
    let mut line = Vec::with_capacity(1 << 16);
    let mut number = 0usize;
    loop {
        line.clear();
        let n = std::io::Read::take(&mut *reader, MAX_LINE + 1)
            .read_until(b'\n', &mut line)
            .map_err(|e| Stop::Bad(format!("cannot read it: {e}")))?;
        if n == 0 {
            return Ok(Ended::default());
        }
        number += 1;
        if n as u64 > MAX_LINE {
            return Err(Stop::Bad(format!(
                "line {number} is longer than 128 MiB, the most import reads of one line; \
                 is it an audit log?"
            )));
        }
        let whole_line = line.last() == Some(&b'\n');
        let text = String::from_utf8_lossy(&line);
        let trimmed = text.trim().trim_start_matches('\u{feff}');
        if trimmed.is_empty() {
            continue;
        }
        if number == 1 && !trimmed.starts_with(['{', '[']) && strip_prefix(trimmed) == trimmed {
            // Not JSON: a CSV export, or YAML documents (gcloud's default
            // format); read whole.
            let csv_header = csv_header(trimmed);
            let head = std::mem::take(&mut line);
            let mut rest = Vec::new();
            (&mut *reader)
                .take(MAX_LINE)
                .read_to_end(&mut rest)
                .map_err(|e| Stop::Bad(format!("cannot read it: {e}")))?;
            let mut all = head;
            all.extend(rest);
            let text = String::from_utf8_lossy(&all);
            let text = text.trim_start_matches('\u{feff}');
            if csv_header {
                return csv(text, shape, sink);
            }
            return yaml(text, shape, sink);
        }
        let json = strip_prefix(trimmed);
        match audit::decode(json) {
            Ok(Some(e)) => {
                if shape.is_empty() {
                    *shape = shape_of(json);
                }
                sink(e).map_err(Stop::Sink)?;
            }
            Ok(None) => {}
            Err(e) => {
                let reason = match e {
                    audit::NotAudit::Shape(reason) => reason,
                    audit::NotAudit::List => String::new(),
                };
                // A document spread over lines (or a list on one): read the rest as one.
                if number == 1 || (shape.is_empty() && json.starts_with(['{', '['])) {
                    let head = std::mem::take(&mut line);
                    let head = match head.strip_prefix("\u{feff}".as_bytes()) {
                        Some(h) => h.to_vec(),
                        None => head,
                    };
                    let mut chained = std::io::Read::chain(&head[..], reader);
                    let mut buffered = std::io::BufReader::new(&mut chained);
                    return document(&mut buffered, shape, sink).map(|()| Ended::default());
                }
                // NB: a log being written ends in a line cut short: the rest is
                // whole, and stored.
                if !whole_line && reader.fill_buf().is_ok_and(|b| b.is_empty()) {
                    return Ok(Ended { torn: true });
                }
                return Err(Stop::Bad(format!(
                    "line {number} is not an audit entry: {reason}"
                )));
            }
        }
    }
}

/// Whether a first line is the header of a CSV export of audit entries:
/// Logs Insights' (`@timestamp,@message,…`) or the Azure portal's of
/// `AKSAudit` (`…,AuditId,…`).
pub fn csv_header(line: &str) -> bool {
    let cells: Vec<&str> = line
        .split(',')
        .map(|c| c.trim().trim_matches('"'))
        .collect();
    cells.contains(&"@message") || (cells.contains(&"AuditId") && cells.contains(&"Verb"))
}

/// RFC 4180 records: fields separated by commas, quoted with `"` (a
/// doubled `""` inside), line breaks inside quotes kept.
fn csv_records(text: &str) -> Vec<Vec<String>> {
    let mut records = Vec::new();
    let mut record = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') => quoted = true,
            (false, ',') => record.push(std::mem::take(&mut field)),
            (false, '\r') => {}
            (false, '\n') => {
                record.push(std::mem::take(&mut field));
                if record.iter().any(|f| !f.is_empty()) {
                    records.push(std::mem::take(&mut record));
                }
                record.clear();
            }
            (false, c) => field.push(c),
        }
    }
    if !field.is_empty() || !record.is_empty() {
        record.push(field);
        records.push(record);
    }
    records
}

/// A CSV export: each row an entry, its cells named by the header (the
/// Azure portal's ` [UTC]` after time columns left out).
fn csv(
    text: &str,
    shape: &mut &'static str,
    sink: &mut dyn FnMut(AuditEntry) -> anyhow::Result<()>,
) -> Result<Ended, Stop> {
    let mut records = csv_records(text).into_iter();
    let Some(header) = records.next() else {
        return Ok(Ended::default());
    };
    let names: Vec<String> = header
        .iter()
        .map(|h| h.trim().trim_end_matches(" [UTC]").to_string())
        .collect();
    let mut ctx = DocCtx {
        shape,
        sink,
        stop: None,
    };
    for (i, row) in records.enumerate() {
        if row.len() != names.len() {
            return Err(Stop::Bad(format!(
                "row {} has {} cells, its header {}",
                i + 2,
                row.len(),
                names.len()
            )));
        }
        let m: serde_json::Map<String, Value> = names
            .iter()
            .cloned()
            .zip(row.into_iter().map(Value::String))
            .collect();
        ctx.item(Value::Object(m))?;
    }
    Ok(Ended::default())
}

/// `gcloud logging read` without `--format=json`: YAML documents, one
/// LogEntry each (`---` between them), or a YAML list.
fn yaml(
    text: &str,
    shape: &mut &'static str,
    sink: &mut dyn FnMut(AuditEntry) -> anyhow::Result<()>,
) -> Result<Ended, Stop> {
    let docs: Vec<Value> = serde_saphyr::from_str_multiple::<Value, _>(text)
        .map_err(|e| Stop::Bad(format!("neither JSON nor YAML audit entries: {e}")))?;
    let mut ctx = DocCtx {
        shape,
        sink,
        stop: None,
    };
    for doc in docs {
        let items = match doc {
            Value::Array(items) => items,
            Value::Null => continue,
            Value::Object(mut m) => match m.remove("items").or_else(|| m.remove("entries")) {
                Some(Value::Array(items)) => items,
                Some(other) => {
                    m.insert("items".into(), other);
                    vec![Value::Object(m)]
                }
                None => vec![Value::Object(m)],
            },
            other => {
                return Err(Stop::Bad(format!(
                    "a YAML document is {}, not an audit entry",
                    match other {
                        Value::String(_) => "a line of text",
                        _ => "a scalar",
                    }
                )));
            }
        };
        for item in items {
            ctx.item(item)?;
        }
    }
    Ok(Ended::default())
}

fn shape_of(json: &str) -> &'static str {
    if json.contains("\"protoPayload\"") {
        "Cloud Logging"
    } else if json.contains("\\\"auditID\\\"") {
        // The apiserver's line inside a JSON string: CloudWatch's `message`.
        "CloudWatch Logs"
    } else {
        "apiserver log"
    }
}

/// One JSON document holding audit entries, streamed.
fn document(
    reader: &mut dyn BufRead,
    shape: &mut &'static str,
    sink: &mut dyn FnMut(AuditEntry) -> anyhow::Result<()>,
) -> Result<(), Stop> {
    let mut ctx = DocCtx {
        shape,
        sink,
        stop: None,
    };
    let mut de = serde_json::Deserializer::from_reader(reader);
    match Top(&mut ctx).deserialize(&mut de) {
        Ok(()) => Ok(()),
        Err(e) => Err(ctx.stop.take().unwrap_or_else(|| {
            Stop::Bad(format!(
                "not valid JSON at line {}, column {}: {e}",
                e.line(),
                e.column()
            ))
        })),
    }
}

struct DocCtx<'a> {
    shape: &'a mut &'static str,
    sink: &'a mut dyn FnMut(AuditEntry) -> anyhow::Result<()>,
    stop: Option<Stop>,
}

impl DocCtx<'_> {
    fn item(&mut self, item: Value) -> Result<(), Stop> {
        let text = item.to_string();
        match audit::decode(&text) {
            Ok(Some(e)) => {
                if self.shape.is_empty() {
                    *self.shape = shape_of(&text);
                }
                (self.sink)(e).map_err(Stop::Sink)
            }
            Ok(None) => Ok(()),
            Err(audit::NotAudit::Shape(reason)) => Err(Stop::Bad(format!(
                "an item is not an audit entry: {reason}"
            ))),
            Err(audit::NotAudit::List) => Err(Stop::Bad("a list inside a list".into())),
        }
    }
}

/// The rows of a query result as objects: `aws logs get-query-results`'
/// `results` (each row a list of `{field, value}`), or a Log Analytics
/// answer's `tables` (`columns` named, `rows` of values).
fn rows_of(key: &str, value: Value) -> Vec<Value> {
    let Value::Array(items) = value else {
        return Vec::new();
    };
    if key == "results" {
        return items
            .into_iter()
            .map(|row| {
                let mut m = serde_json::Map::new();
                for cell in row.as_array().into_iter().flatten() {
                    if let (Some(f), Some(v)) =
                        (cell.get("field").and_then(Value::as_str), cell.get("value"))
                    {
                        m.insert(f.to_string(), v.clone());
                    }
                }
                Value::Object(m)
            })
            .collect();
    }
    let mut out = Vec::new();
    for table in items {
        let columns: Vec<String> = table
            .get("columns")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|c| {
                c.get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string()
            })
            .collect();
        for row in table
            .get("rows")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let m: serde_json::Map<String, Value> = columns
                .iter()
                .cloned()
                .zip(row.as_array().cloned().unwrap_or_default())
                .collect();
            out.push(Value::Object(m));
        }
    }
    out
}

/// The top of the document: an array of entries, an object whose `items`
/// (EventList), `events` (CloudWatch's CLI) or `logEvents` (a subscription's
/// payload) are entries, or one entry.
struct Top<'c, 'a>(&'c mut DocCtx<'a>);

impl<'de> DeserializeSeed<'de> for Top<'_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Top<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("audit entries")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(item) = seq.next_element::<Value>()? {
            if let Err(s) = self.0.item(item) {
                self.0.stop = Some(s);
                return Err(de::Error::custom("stopped"));
            }
        }
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut fields = serde_json::Map::new();
        let mut listed = false;
        while let Some(key) = map.next_key::<String>()? {
            if matches!(key.as_str(), "items" | "events" | "logEvents" | "records") {
                listed = true;
                map.next_value_seed(Top(&mut *self.0))?;
            } else if matches!(key.as_str(), "results" | "tables") {
                // Logs Insights' rows of {field, value}; Log Analytics'
                // tables of columns and rows: each row an entry.
                listed = true;
                let value: Value = map.next_value()?;
                for row in rows_of(&key, value) {
                    if let Err(s) = self.0.item(row) {
                        self.0.stop = Some(s);
                        return Err(de::Error::custom("stopped"));
                    }
                }
            } else {
                fields.insert(key, map.next_value()?);
            }
        }
        if listed {
            return Ok(());
        }
        self.0.item(Value::Object(fields)).map_err(|s| {
            self.0.stop = Some(s);
            de::Error::custom("stopped")
        })
    }
}

/// One entry waiting to be stored, with the file it came from.
#[derive(serde::Serialize, serde::Deserialize)]
struct Held {
    file: usize,
    entry: AuditEntry,
}

impl Held {
    /// The order entries are stored in: by cluster, time, then auditID (so
    /// that any order of the same entries stores the same), then file.
    fn key(&self) -> (&str, i64, &str, usize) {
        (
            &self.entry.cluster,
            self.entry.at,
            &self.entry.id,
            self.file,
        )
    }

    /// About what it takes in memory: the entry's two dozen strings with
    /// their allocations (about 700 bytes for a Metadata-level entry, the
    /// RSS of a 1,000,000-entry import says), and its texts.
    fn size(&self) -> usize {
        let e = &self.entry;
        let body =
            |b: &Option<Box<serde_json::value::RawValue>>| b.as_ref().map_or(0, |b| b.get().len());
        700 + e.id.len()
            + e.user.len()
            + e.user_agent.len()
            + e.name.len()
            + e.namespace.len()
            + e.message.len()
            + body(&e.request)
            + body(&e.response)
    }
}

/// Sorts the entries of every audit file of an import by time, whatever
/// order they come in: in memory up to [`Sorter::RUN_BYTES`], past that in
/// sorted runs written to anonymous files and merged (memory stays bounded
/// whatever the size of the logs).
#[derive(Default)]
pub struct Sorter {
    held: Vec<Held>,
    bytes: usize,
    runs: Vec<std::io::BufReader<std::fs::File>>,
}

impl Sorter {
    const RUN_BYTES: usize = 64 << 20;

    fn push(&mut self, file: usize, entry: AuditEntry) -> anyhow::Result<()> {
        let held = Held { file, entry };
        self.bytes += held.size();
        self.held.push(held);
        if self.bytes > Self::RUN_BYTES {
            self.spill()?;
        }
        Ok(())
    }

    fn spill(&mut self) -> anyhow::Result<()> {
        self.held.sort_unstable_by(|a, b| a.key().cmp(&b.key()));
        let file = tempfile::tempfile().context("creating a file to sort the audit log by time")?;
        let mut w = std::io::BufWriter::new(file);
        for h in self.held.drain(..) {
            serde_json::to_writer(&mut w, &h)?;
            w.write_all(b"\n")?;
        }
        let mut file = w.into_inner().map_err(|e| e.into_error())?;
        std::io::Seek::rewind(&mut file)?;
        self.runs.push(std::io::BufReader::new(file));
        self.bytes = 0;
        Ok(())
    }

    /// Every entry, in order.
    fn sorted(mut self) -> anyhow::Result<Sorted> {
        if self.runs.is_empty() {
            self.held.sort_unstable_by(|a, b| b.key().cmp(&a.key()));
            return Ok(Sorted {
                held: self.held,
                runs: Vec::new(),
                heads: Vec::new(),
            });
        }
        if !self.held.is_empty() {
            self.spill()?;
        }
        let mut heads = Vec::with_capacity(self.runs.len());
        for r in self.runs.iter_mut() {
            heads.push(Sorted::read(r)?);
        }
        Ok(Sorted {
            held: Vec::new(),
            runs: self.runs,
            heads,
        })
    }
}

/// The entries of a [`Sorter`], in order.
struct Sorted {
    /// In memory, last first (popped).
    held: Vec<Held>,
    runs: Vec<std::io::BufReader<std::fs::File>>,
    heads: Vec<Option<Held>>,
}

impl Sorted {
    fn read(r: &mut std::io::BufReader<std::fs::File>) -> anyhow::Result<Option<Held>> {
        let mut line = String::new();
        if r.read_line(&mut line)? == 0 {
            return Ok(None);
        }
        Ok(Some(serde_json::from_str(&line)?))
    }

    fn next(&mut self) -> anyhow::Result<Option<Held>> {
        if self.runs.is_empty() {
            return Ok(self.held.pop());
        }
        // NB: a few runs at most (64 MiB each): a linear scan for the least
        // beats a heap of owned keys.
        let least = self
            .heads
            .iter()
            .enumerate()
            .filter_map(|(i, h)| h.as_ref().map(|h| (i, h)))
            .min_by(|(_, a), (_, b)| a.key().cmp(&b.key()))
            .map(|(i, _)| i);
        let Some(i) = least else { return Ok(None) };
        let h = self.heads[i].take();
        self.heads[i] = Self::read(&mut self.runs[i])?;
        Ok(h)
    }
}

/// An audit file to import: its name as given, and its bytes.
pub struct Log {
    pub name: String,
    pub reader: Box<dyn BufRead>,
}

/// What `--cluster` says of an import.
pub struct Target<'a> {
    /// The path of the recording, to open a connection per cluster.
    pub path: &'a std::path::Path,
    /// `--cluster`, when given: every entry goes there.
    pub cluster: Option<&'a str>,
    pub keep: Decode,
}

/// The uids of objects an entry names (to tell which recorded cluster a
/// log is of).
fn uid_of(e: &AuditEntry) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Meta {
        #[serde(default)]
        uid: String,
    }
    #[derive(serde::Deserialize)]
    struct Obj {
        metadata: Option<Meta>,
    }
    if !e.uid.is_empty() {
        return Some(e.uid.clone());
    }
    [e.response.as_ref(), e.request.as_ref()]
        .into_iter()
        .flatten()
        .find_map(|raw| serde_json::from_str::<Obj>(raw.get()).ok()?.metadata)
        .map(|m| m.uid)
        .filter(|u| !u.is_empty())
}

/// Every log read and checked, before anything is stored.
#[derive(Default)]
struct Gathered {
    sorter: Sorter,
    summaries: Vec<Summary>,
    names: Vec<String>,
    /// The logs that store nothing (unreadable, no entries).
    refused: BTreeSet<usize>,
    /// uids of the objects of entries that name no cluster, a sample.
    uids: BTreeSet<String>,
    /// The time each cluster's logs span, every entry counted (reads too):
    /// what an import covers.
    spans: HashMap<String, (i64, i64)>,
}

/// Reads every log, holding what may be stored in time order; a bad file is
/// refused with a message and stores nothing.
fn gather(logs: Vec<Log>, err: &mut dyn Write) -> anyhow::Result<Gathered> {
    let mut g = Gathered::default();
    let Gathered {
        sorter,
        summaries,
        names,
        refused,
        uids,
        spans,
    } = &mut g;
    for (index, mut log) in logs.into_iter().enumerate() {
        let mut summary = Summary::default();
        let mut shape: &'static str = "";
        let read = {
            let mut sink = |e: AuditEntry| -> anyhow::Result<()> {
                summary.saw(&e);
                if e.at <= 0 {
                    summary.untimed += 1;
                    return Ok(());
                }
                let span = spans.entry(e.cluster.clone()).or_insert((e.at, e.at));
                *span = (span.0.min(e.at), span.1.max(e.at));
                // Only what may be stored is held: most of a log is reads.
                if !e.complete
                    || e.id.is_empty()
                    || !(e.is_write() || e.refused() || e.is_session())
                {
                    return Ok(());
                }
                if e.cluster.is_empty()
                    && uids.len() < 2000
                    && let Some(uid) = uid_of(&e)
                {
                    uids.insert(uid);
                }
                sorter.push(index, e)
            };
            read(&mut *log.reader, &mut shape, &mut sink)
        };
        match read {
            Ok(ended) => {
                summary.torn = ended.torn;
                if ended.torn {
                    writeln!(
                        err,
                        "warning: {}: its last line is cut short (a log still being written?): \
                         left out; the rest is stored",
                        log.name
                    )?;
                }
            }
            Err(Stop::Bad(reason)) => {
                writeln!(
                    err,
                    "error: {}: {reason}; nothing of it was stored",
                    log.name
                )?;
                refused.insert(index);
            }
            Err(Stop::Sink(e)) => return Err(e.context(format!("reading {}", log.name))),
        }
        if !refused.contains(&index) && summary.entries == 0 {
            writeln!(
                err,
                "error: {}: holds no audit entries; nothing of it was stored",
                log.name
            )?;
            refused.insert(index);
        }
        summary.shape = if shape.is_empty() {
            "no entries"
        } else {
            shape
        };
        summaries.push(summary);
        names.push(log.name);
    }
    Ok(g)
}

/// Imports audit logs: every file read and checked first (a bad file stores
/// nothing, the others still import), then every entry stored in time
/// order, one transaction per cluster. Returns how many files were refused.
pub fn import(
    conn: &crate::store::Recording,
    logs: Vec<Log>,
    target: &Target,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> anyhow::Result<usize> {
    let Gathered {
        sorter,
        mut summaries,
        names,
        refused,
        uids,
        spans,
    } = gather(logs, err)?;
    // Entries that name no cluster: --cluster, else the recorded cluster
    // whose objects they are, else `imported`.
    let joined = match target.cluster {
        Some(_) => None,
        None => join_by_uid(conn, &uids)?,
    };
    if let Some(refusal) = another_clusters_log(conn, target, &uids)? {
        writeln!(err, "{refusal}")?;
        return Ok(names.len());
    }
    if let Some((_, label, matched)) = &joined {
        writeln!(
            out,
            "joined the recording of cluster {label:?}: {matched} of {} object(s) of the log matched by uid",
            uids.len()
        )?;
    }
    let now = chrono::Utc::now().timestamp_millis();
    let sources = names
        .iter()
        .enumerate()
        .filter(|(i, _)| !refused.contains(i))
        .map(|(_, n)| n.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    let mut sorted = sorter.sorted()?;
    let mut next = sorted.next()?;
    let mut last_id: Option<(String, String)> = None;
    // NB: one cluster's entries are contiguous in the order: each cluster is
    // stored in one transaction, by a writer of its own.
    while let Some(head) = next.take() {
        let identity = head.entry.cluster.clone();
        let (id, label) = cluster_for(conn, &identity, target, joined.as_ref(), now)?;
        let recording = crate::store::Recording::open(target.path, crate::store::Mode::Write)?;
        let mut writer = Writer::new(recording, id);
        let mut batch = writer.begin()?;
        let (mut first, mut last) = (i64::MAX, i64::MIN);
        {
            let mut import = AuditImport::new(&mut batch, target.keep, &mut summaries)?;
            let mut h = Some(head);
            while let Some(held) = h.take() {
                if held.entry.cluster != identity {
                    next = Some(held);
                    break;
                }
                let key = (held.entry.cluster.clone(), held.entry.id.clone());
                let file = held.file;
                if refused.contains(&file) {
                } else if last_id.as_ref() == Some(&key) {
                    // The same entry twice in a row: a file given twice, files that overlap.
                    import.summaries[file].duplicates += 1;
                } else {
                    first = first.min(held.entry.at);
                    last = last.max(held.entry.at);
                    import.entry(held.entry, file)?;
                    import.summaries[file].clusters.insert(label.clone());
                }
                last_id = Some(key);
                h = sorted.next()?;
            }
        }
        if let Some((from, to)) = spans.get(&identity) {
            (first, last) = (first.min(*from), last.max(*to));
        }
        if first <= last && !batch.ever_recorded()? {
            // NB: next to a recording, its sessions and gaps say what is known.
            batch.audit_covered(&sources, first, last, now.max(last))?;
        }
        batch
            .commit()
            .with_context(|| format!("storing the audit log entries of cluster {label:?}"))?;
    }
    for (index, summary) in summaries.iter().enumerate() {
        if refused.contains(&index) {
            continue;
        }
        for line in summary.lines(&names[index]) {
            writeln!(out, "{line}")?;
        }
    }
    Ok(refused.len())
}

/// Why a log named into a recorded cluster (`--cluster`) is another
/// cluster's, if it is. NB: it would tell its writes as that cluster's:
/// when its objects are known to be elsewhere, or a good sample of them
/// matches none of the named cluster's, it is refused.
fn another_clusters_log(
    conn: &crate::store::Recording,
    target: &Target,
    uids: &BTreeSet<String>,
) -> anyhow::Result<Option<String>> {
    if let Some(given) = target.cluster
        && let Some(claimed) = conn.recorded_cluster_named(given)?
        && uids.len() >= MISMATCH_SAMPLE
        && let Some(id) = conn.clusters(Some(&claimed.uid))?.first().map(|r| r.0)
        && join_by_uid(conn, uids)?.is_none_or(|(best, _, _)| best != id)
        && !uids
            .iter()
            .any(|u| conn.clusters_of_uid(u).is_ok_and(|c| c.contains(&id)))
    {
        return Ok(Some(format!(
            "error: --cluster {given:?} names the recorded cluster {} (uid {}), but none of the {} \
             object(s) of the audit log sampled is one of its objects (by uid): the log is of \
             another cluster; import it under a name of its own (--cluster NAME), or without \
             --cluster to let it join the recording its objects are in; nothing of it was stored",
            claimed.label,
            claimed.uid,
            uids.len()
        )));
    }
    Ok(None)
}

/// How many objects of a log must be sampled before a log that matches
/// none of a named recorded cluster's objects is refused as another's.
const MISMATCH_SAMPLE: usize = 5;

/// The recorded cluster most of `uids` are objects of: (id, label, matched).
fn join_by_uid(
    conn: &crate::store::Recording,
    uids: &BTreeSet<String>,
) -> anyhow::Result<Option<(i64, String, usize)>> {
    let mut votes: BTreeMap<i64, usize> = BTreeMap::new();
    for uid in uids {
        for cluster in conn.clusters_of_uid(uid)? {
            *votes.entry(cluster).or_default() += 1;
        }
    }
    let Some((&id, &matched)) = votes.iter().max_by_key(|(_, n)| **n) else {
        return Ok(None);
    };
    let label = conn
        .clusters(None)?
        .into_iter()
        .find(|(row, _, _)| *row == id)
        .map(|(_, _, label)| label)
        .unwrap_or_default();
    Ok(Some((id, label, matched)))
}

/// The cluster (row id, label) the entries of `identity` are stored under.
fn cluster_for(
    conn: &crate::store::Recording,
    identity: &str,
    target: &Target,
    joined: Option<&(i64, String, usize)>,
    now: i64,
) -> anyhow::Result<(i64, String)> {
    let name = match (target.cluster, identity, joined) {
        (Some(given), _, _) => given.to_string(),
        (None, "", Some((id, label, _))) => return Ok((*id, label.clone())),
        (None, "", None) => "imported".to_string(),
        (None, named, _) => named.to_string(),
    };
    // A recorded cluster under that name (uid or label) takes the log.
    if let Some(c) = conn.recorded_cluster_named(&name)? {
        let id = match conn.clusters(Some(&c.uid))?.first() {
            Some(row) => row.0,
            None => conn.register_cluster(&c.uid, &c.label, "", now)?,
        };
        return Ok((id, c.label));
    }
    Ok((conn.register_cluster(&name, &name, "", now)?, name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scale_names_the_scaled_objects_uid_and_resource_version() {
        let answered = serde_json::json!({"kind": "Scale",
            "metadata": {"name": "web", "uid": "u-1", "resourceVersion": "42"},
            "spec": {"replicas": 3}});
        assert_eq!(
            scale_identity(Some(&answered)),
            Some(("u-1".to_string(), "42".to_string()))
        );
        let deployment = serde_json::json!({"kind": "Deployment",
            "metadata": {"uid": "u-1", "resourceVersion": "42"}});
        assert_eq!(scale_identity(Some(&deployment)), None);
        let no_rv = serde_json::json!({"kind": "Scale", "metadata": {"uid": "u-1"}});
        assert_eq!(scale_identity(Some(&no_rv)), None);
        assert_eq!(scale_identity(None), None);
    }

    /// Regression: a Scale answered for 0 replicas has an empty `spec`
    /// (`replicas` is omitted when zero): the scale to 0 was kept as a touch
    /// and then told as `[inferred]`.
    #[test]
    fn a_scale_to_zero_is_read_from_its_empty_spec() {
        let answered = serde_json::json!({"kind": "Scale", "spec": {}, "status": {"replicas": 2}});
        let asked = serde_json::json!({"spec": {"replicas": 0}});
        assert_eq!(
            scale_replicas(Some(&answered), Some(&asked)),
            Some(Value::from(0))
        );
        assert_eq!(scale_replicas(None, Some(&asked)), Some(Value::from(0)));
        let three = serde_json::json!({"kind": "Scale", "spec": {"replicas": 3}});
        assert_eq!(scale_replicas(Some(&three), None), Some(Value::from(3)));
        assert_eq!(scale_replicas(None, None), None);
    }

    #[test]
    fn a_merge_patch_sets_and_removes() {
        let mut doc =
            serde_json::json!({"spec": {"replicas": 1, "paused": true, "template": {"x": 1}}});
        merge_patch(
            &mut doc,
            &serde_json::json!({"spec": {"replicas": 3, "paused": null, "$setElementOrder/x": []}}),
        );
        assert_eq!(
            doc,
            serde_json::json!({"spec": {"replicas": 3, "template": {"x": 1}}})
        );
    }

    #[test]
    fn a_patched_field_is_unknown_before_the_first_write_seen() {
        let mut doc = serde_json::json!({"spec": {"replicas": 3, "template": {"spec": {"containers": [
            {"name": "web", "image": "nginx:2", "ports": [1]}, {"name": "side", "image": "s:1"}]}}}});
        unknown_where_patched(
            &mut doc,
            &serde_json::json!({"spec": {"template": {"spec": {"containers": [{"name": "web", "image": "nginx:2"}]}}}}),
        );
        assert_eq!(
            doc,
            serde_json::json!({"spec": {"replicas": 3, "template": {"spec": {"containers": [
                {"name": "web", "image": "?", "ports": [1]}, {"name": "side", "image": "s:1"}]}}}})
        );
    }

    #[test]
    fn a_json_patch_replaces_an_image() {
        let mut doc = serde_json::json!({"spec": {"containers": [{"image": "a:1"}], "n": 1}});
        json_patch(
            &mut doc,
            serde_json::json!([
                {"op": "replace", "path": "/spec/containers/0/image", "value": "a:2"},
                {"op": "remove", "path": "/spec/n"},
                {"op": "add", "path": "/spec/containers/-", "value": {"image": "b"}},
                {"op": "move", "from": "/x", "path": "/y"}
            ])
            .as_array()
            .unwrap(),
        );
        assert_eq!(
            doc,
            serde_json::json!({"spec": {"containers": [{"image": "a:2"}, {"image": "b"}]}})
        );
    }

    #[test]
    fn the_field_manager_is_the_entry_written_in_that_second() {
        let t = |s: &str| crate::k8s::event::parse_k8s_time(s);
        let entry = |manager: &str, time: &str| crate::model::ManagerEntry {
            manager: manager.into(),
            time: t(time),
            ..crate::model::ManagerEntry::default()
        };
        let entries = [
            entry("kubectl-edit", "2026-11-29T03:00:00Z"),
            entry("kube-controller-manager", "2026-11-29T02:00:00Z"),
        ];
        let at = t("2026-11-29T03:00:00.4Z").unwrap();
        assert_eq!(manager_of(&entries, at), "kubectl-edit");
        assert_eq!(manager_of(&entries, at + 5000), "");
    }

    fn entries(text: &str) -> Result<(Vec<AuditEntry>, &'static str), String> {
        let mut found = Vec::new();
        let mut shape = "";
        let mut reader = std::io::Cursor::new(text.as_bytes().to_vec());
        match read(&mut reader, &mut shape, &mut |e| {
            found.push(e);
            Ok(())
        }) {
            Ok(_) => Ok((found, shape)),
            Err(Stop::Bad(r)) => Err(r),
            Err(Stop::Sink(e)) => Err(e.to_string()),
        }
    }

    const LINE: &str = r#"{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a1","stage":"ResponseComplete","verb":"delete","user":{"username":"bob"},"objectRef":{"resource":"pods","namespace":"shop","name":"web-1","apiVersion":"v1"},"responseStatus":{"code":200},"stageTimestamp":"2026-11-29T03:00:00Z"}"#;

    #[test]
    fn lines_an_event_list_and_cloudwatch_events_all_read() {
        let (lines, shape) = entries(&format!("{LINE}\n\n{LINE}\n")).unwrap();
        assert_eq!((lines.len(), shape), (2, "apiserver log"));
        let list = format!(
            "{{\n  \"kind\": \"EventList\",\n  \"apiVersion\": \"audit.k8s.io/v1\",\n  \"items\": [\n{LINE}\n]\n}}\n"
        );
        let (items, _) = entries(&list).unwrap();
        assert_eq!(items.len(), 1);
        let cw = serde_json::json!({"events": [{"logStreamName": "kube-apiserver-audit-x", "timestamp": 1, "message": LINE}], "searchedLogStreams": []});
        let (items, shape) = entries(&serde_json::to_string_pretty(&cw).unwrap()).unwrap();
        assert_eq!((items.len(), shape), (1, "CloudWatch Logs"));
        assert_eq!(items[0].user, "bob");
    }

    #[test]
    fn a_line_that_is_not_an_entry_names_its_line() {
        let text = format!("{LINE}\n{{\"kind\":\"Pod\"}}\n");
        let e = entries(&text).unwrap_err();
        assert!(e.starts_with("line 2 is not an audit entry"), "{e}");
    }
}
