//! `import` of kube-apiserver audit logs: the writes of the past, with the
//! people who made them, stored as the recorder stores what it watches.
//!
//! Of each entry only a `ResponseComplete` write is stored, once (by its
//! `auditID`, across files and imports):
//! - a write the apiserver refused (4xx/5xx): a [`Refusal`];
//! - a write of an Event: its occurrences, through the Events' own
//!   exactly-once rule;
//! - any other write: an object version, from `responseObject`
//!   (RequestResponse level), else from a full `requestObject` (create,
//!   update), else from a patch or a scale applied to the last whole version
//!   this import read of the object (stored, and counted as from a patch).
//!   Its writer is the user with the field manager or user agent beside it.
//!
//! Next to a recording of the same cluster (`--cluster` naming it), a write
//! the recorder stored (the same object at the same resourceVersion) gains
//! its person and adds nothing; a write while a recorder session ran but not
//! stored by it (a state the watch coalesced) adds nothing either. The rules
//! and their limits: docs/schema.md, "Imports of audit logs".

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::io::{BufRead, Write};

use anyhow::Context;
use kube::core::ApiResource;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use crate::k8s::audit::{self, AuditEntry};
use crate::k8s::event::WireEvent;
use crate::k8s::object::{Decode, WireObject};
use crate::model::{EventChange, ObjectChange, Seen};
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
    /// Writes the recording had stored already: their writer named.
    pub merged: u64,
    /// Writes while a recorder ran that it did not store as a version.
    pub covered: u64,
    pub refused: u64,
    pub event_writes: u64,
    pub occurrences: u64,
    /// Entries an import took before (this file twice, or files that overlap).
    pub duplicates: u64,
    /// Writes with nothing to store: no body at this level and no earlier
    /// version to apply a patch to, or a body not of the object.
    pub bodiless: u64,
    /// Entries per resource (`deployments.apps`), of any verb.
    pub resources: BTreeMap<String, u64>,
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
    pub fn lines(&self, file: &str, cluster: &str) -> Vec<String> {
        let time = |t: Option<i64>| {
            t.and_then(chrono::DateTime::from_timestamp_millis)
                .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
                .unwrap_or_else(|| "?".into())
        };
        let mut lines = vec![format!(
            "{file}: audit log ({}), {} entries from {} to {}: {} write(s) stored under cluster {cluster:?}: \
             {} object version(s) ({} from patches), {} Event write(s) ({} new occurrence(s)), {} refused",
            self.shape,
            self.entries,
            time(self.first),
            time(self.last),
            self.writes,
            self.versions,
            self.from_patches,
            self.event_writes,
            self.occurrences,
            self.refused,
        )];
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
        if self.bodiless > 0 {
            lines.push(format!(
                "{file}: {} write(s) carry no object at their audit level (Metadata, or a patch of an \
                 object not seen whole before it): stored as nothing but this count; a policy with \
                 level RequestResponse for them keeps their versions",
                self.bodiless
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

    fn forget(&mut self, e: &AuditEntry, uid: &str) {
        self.uids.remove(&Self::key(e));
        if let Some((_, b)) = self.by_uid.remove(uid) {
            self.bytes -= b.len();
        }
    }
}

/// One audit file being stored.
pub struct AuditImport<'b, 'w> {
    batch: &'b mut Batch<'w>,
    keep: Decode,
    /// Whether a recorder ever wrote this cluster: else no write can be one
    /// it stored, and nothing is looked up for it.
    recorded: bool,
    /// Types already saved for resolving names (`timeline widgets/cart`).
    types: std::collections::HashSet<(String, String)>,
    bases: Bases,
    pub summary: Summary,
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

impl<'b, 'w> AuditImport<'b, 'w> {
    pub fn new(batch: &'b mut Batch<'w>, keep: Decode) -> anyhow::Result<Self> {
        Ok(AuditImport {
            recorded: batch.ever_recorded()?,
            types: Default::default(),
            batch,
            keep,
            bases: Bases::default(),
            summary: Summary::default(),
        })
    }

    /// Stores what one entry says, by the rules of the module doc.
    pub fn entry(&mut self, e: AuditEntry) -> anyhow::Result<()> {
        self.summary.saw(&e);
        if !e.complete || !e.is_write() || e.id.is_empty() {
            return Ok(());
        }
        // NB: a write with no body (Metadata level, most of a log) stores
        // nothing unless it deletes an object read whole before: its id is not
        // kept either, which saved a third of the time of a large import.
        let deletes_known = matches!(e.verb.as_str(), "delete" | "deletecollection")
            && self.bases.uid(&e).is_some();
        if !e.refused() && e.request.is_none() && e.response.is_none() && !deletes_known {
            self.summary.writes += 1;
            self.summary.bodiless += 1;
            return Ok(());
        }
        if !self.batch.audit_take(&e.id, e.at)? {
            self.summary.duplicates += 1;
            return Ok(());
        }
        self.summary.writes += 1;
        if e.refused() {
            self.summary.refused += 1;
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
            })?);
        }
        if e.resource == "events" && matches!(e.group.as_str(), "" | "events.k8s.io") {
            return self.event(&e);
        }
        self.object(e)
    }

    fn event(&mut self, e: &AuditEntry) -> anyhow::Result<()> {
        self.summary.event_writes += 1;
        let body = e
            .response
            .as_ref()
            .or(e.request.as_ref().filter(|_| e.verb != "patch"));
        let wire = body.and_then(|b| serde_json::from_str::<WireEvent>(b.get()).ok());
        let Some(o) = wire.and_then(WireEvent::into_observation) else {
            self.summary.bodiless += 1;
            return Ok(());
        };
        if o.reason.is_empty() && o.involved.name.is_empty() {
            self.summary.bodiless += 1;
            return Ok(());
        }
        self.summary.occurrences += self
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
                let replicas = response
                    .as_ref()
                    .or(request.as_ref())
                    .and_then(|s| s.pointer("/spec/replicas"))?
                    .clone();
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

    fn object(&mut self, e: AuditEntry) -> anyhow::Result<()> {
        let deleting = matches!(e.verb.as_str(), "delete" | "deletecollection");
        let (text, wire, patched) = match Self::whole_text(&e) {
            Some((text, wire)) => (text, wire, false),
            None => {
                let Some((mut doc, patched)) = self.body(&e) else {
                    if deleting && let Some(uid) = self.bases.uid(&e).cloned() {
                        return self.deleted(&e, &uid);
                    }
                    self.summary.bodiless += 1;
                    return Ok(());
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
                    self.summary.bodiless += 1;
                    return Ok(());
                };
                (text, wire, patched)
            }
        };
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
        let who = e.writer(&manager_of(&observation.managers, e.at));
        if self.recorded
            && !patched
            && !observation.resource_version.is_empty()
            && self
                .batch
                .merge_writer(&uid, &observation.resource_version, &who)?
        {
            self.summary.merged += 1;
            self.bases.put(&e, &uid, &api_version, text);
            return Ok(());
        }
        if self.recorded && self.batch.recorded_at(e.at)? {
            self.summary.covered += 1;
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
            self.summary.from_patches += 1;
        }
        if seen == Seen::Modified && !patched && self.bases.get(&uid).is_none() {
            let after: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
            self.first_sight(&e, &after, &resource, &uid)?;
        }
        let applied = self.batch.apply_audited(
            &ObjectChange {
                seen,
                at: e.at,
                blind_since: None,
                observation: Box::new(observation),
            },
            &who,
        )?;
        self.summary.versions += applied.versions;
        if seen == Seen::Deleted {
            self.bases.forget(&e, &uid);
        } else {
            self.bases.put(&e, &uid, &api_version, text);
        }
        Ok(())
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
        self.batch.apply_audited(
            &ObjectChange {
                seen: Seen::Listed,
                at: e.at,
                blind_since: None,
                observation: Box::new(wire.into_observation_with(resource, self.keep)),
            },
            "",
        )?;
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
            self.summary.covered += 1;
            return Ok(());
        }
        let applied = self.batch.apply_audited(
            &ObjectChange {
                seen: Seen::Deleted,
                at: e.at,
                blind_since: None,
                observation: Box::new(observation),
            },
            &e.writer(""),
        )?;
        self.summary.versions += applied.versions;
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

/// Reads every entry of an audit file, JSON lines (the apiserver's log
/// backend, a Cloud Logging sink, CloudWatch exports) a line at a time, or
/// one JSON document (an `EventList`, `gcloud logging read`'s array,
/// `aws logs filter-log-events`' `events`) an item at a time; memory stays
/// flat whatever the size.
pub fn read(
    reader: &mut dyn BufRead,
    shape: &mut &'static str,
    sink: &mut dyn FnMut(AuditEntry) -> anyhow::Result<()>,
) -> Result<(), Stop> {
    let mut line = Vec::with_capacity(1 << 16);
    let mut number = 0usize;
    loop {
        line.clear();
        let n = reader
            .read_until(b'\n', &mut line)
            .map_err(|e| Stop::Bad(format!("cannot read it: {e}")))?;
        if n == 0 {
            return Ok(());
        }
        number += 1;
        let text = String::from_utf8_lossy(&line);
        let trimmed = text.trim();
        if trimmed.is_empty() {
            continue;
        }
        let json = audit::strip_export_timestamp(trimmed).unwrap_or(trimmed);
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
                    let mut chained = std::io::Read::chain(&head[..], reader);
                    let mut buffered = std::io::BufReader::new(&mut chained);
                    return document(&mut buffered, shape, sink);
                }
                return Err(Stop::Bad(format!(
                    "line {number} is not an audit entry: {reason}"
                )));
            }
        }
    }
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
            if matches!(key.as_str(), "items" | "events" | "logEvents") {
                listed = true;
                map.next_value_seed(Top(&mut *self.0))?;
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

/// Imports one audit file in one transaction (a bad entry anywhere stores
/// nothing of it). Returns 1 for a file refused, 0 for one stored.
pub fn import(
    writer: &mut Writer,
    file: &str,
    mut reader: Box<dyn BufRead>,
    keep: Decode,
    cluster: &str,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> anyhow::Result<usize> {
    let mut batch = writer.begin()?;
    let mut shape: &'static str = "";
    let summary = {
        let mut import = AuditImport::new(&mut batch, keep)?;
        let read = read(&mut *reader, &mut shape, &mut |e| import.entry(e));
        match read {
            Ok(()) => {}
            Err(Stop::Bad(reason)) => {
                drop(import);
                drop(batch);
                writeln!(err, "error: {file}: {reason}; nothing of it was stored")?;
                return Ok(1);
            }
            Err(Stop::Sink(e)) => return Err(e.context(format!("storing {file}"))),
        }
        let mut s = import.summary;
        s.shape = if shape.is_empty() {
            "no entries"
        } else {
            shape
        };
        s
    };
    if summary.entries == 0 {
        drop(batch);
        writeln!(
            err,
            "error: {file}: holds no audit entries; nothing of it was stored"
        )?;
        return Ok(1);
    }
    if let (Some(first), Some(last)) = (summary.first, summary.last)
        && !batch.ever_recorded()?
    {
        // NB: next to a recording, its sessions and gaps say what is known.
        let now = chrono::Utc::now().timestamp_millis();
        batch.audit_covered(file, first, last, now.max(last))?;
    }
    batch.commit().with_context(|| format!("storing {file}"))?;
    for line in summary.lines(file, cluster) {
        writeln!(out, "{line}")?;
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

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
            Ok(()) => Ok((found, shape)),
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
