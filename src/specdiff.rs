//! Field-level diffs between two versions of an object's spec: which paths
//! changed, from what to what (`spec.template.spec.containers[web].resources.limits.memory
//! 512Mi → 256Mi`). Pure over JSON text, so the writer stores the result and
//! every reader renders it the same way.
//!
//! Bounded: a value longer than [`MAX_VALUE`] bytes is cut and marked so, and
//! a diff stops at [`MAX_DIFF`] bytes with a count of the paths left out.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Bytes of one old or new value kept in a diff.
pub const MAX_VALUE: usize = 256;
/// Bytes of one version's diff, paths and values together.
pub const MAX_DIFF: usize = 4096;
/// Bytes of the document a diff is computed against, kept per live object;
/// a larger one (a CRD's schema) keeps only its digest.
pub const MAX_DOC: usize = 64 * 1024;
/// What replaces a value that only the digest may show (a ConfigMap's data).
pub const HIDDEN: &str = "(value not recorded)";

/// One changed path. `old`/`new` absent: the path was added/removed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldChange {
    #[serde(rename = "p")]
    pub path: String,
    #[serde(rename = "o", default, skip_serializing_if = "Option::is_none")]
    pub old: Option<String>,
    #[serde(rename = "n", default, skip_serializing_if = "Option::is_none")]
    pub new: Option<String>,
}

impl FieldChange {
    /// `path old → new`, `path added: new`, `path removed (was old)`.
    pub fn text(&self) -> String {
        match (&self.old, &self.new) {
            (Some(o), Some(n)) if o == HIDDEN && n == HIDDEN => format!("{} changed", self.path),
            (Some(o), Some(n)) => format!("{} {o} → {n}", self.path),
            (None, Some(n)) if n == HIDDEN => format!("{} added", self.path),
            (None, Some(n)) => format!("{} added: {n}", self.path),
            (Some(o), None) if o == HIDDEN => format!("{} removed", self.path),
            (Some(o), None) => format!("{} removed (was {o})", self.path),
            (None, None) => self.path.clone(),
        }
    }
}

/// A change's fields as `(path, old, new)`, sorted: what a run of flips shares.
pub type Flip<'a> = Vec<(&'a str, &'a str, &'a str)>;

/// The fields of a change as `(path, old, new)`, sorted, when every one has
/// both values (an added or removed field does not flip); None when empty.
pub fn flip(fields: &[FieldChange]) -> Option<Flip<'_>> {
    let mut out: Vec<(&str, &str, &str)> = fields
        .iter()
        .map(|f| Some((f.path.as_str(), f.old.as_deref()?, f.new.as_deref()?)))
        .collect::<Option<_>>()?;
    out.sort();
    (!out.is_empty()).then_some(out)
}

/// Whether `b` moves the same fields between the same two values as `a`,
/// either way: two field managers fighting over them.
pub fn same_flip(a: &[(&str, &str, &str)], b: &[(&str, &str, &str)]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|((pa, oa, na), (pb, ob, nb))| {
            pa == pb && ((oa == ob && na == nb) || (oa == nb && na == ob))
        })
}

/// `path a ↔ b; …`: the fields a run of flips moves back and forth.
pub fn flip_text(flip: &[(&str, &str, &str)]) -> String {
    flip.iter()
        .map(|(path, old, new)| format!("{path} {old} ↔ {new}"))
        .collect::<Vec<_>>()
        .join("; ")
}

/// The changes from `old` to `new` (JSON texts of the diffable document),
/// in document order. Unparseable input gives no changes.
pub fn diff(old: &str, new: &str) -> Vec<FieldChange> {
    diff_with_writers(old, new, &[]).0
}

/// [`diff`], and who wrote it: the field managers that own a changed field
/// now (`managers`: each one's label and `fieldsV1` JSON text). With Update
/// and Apply alike, writing a field takes its ownership, so the owner of a
/// changed value is its writer; a field removed has no owner left, and
/// gives no writer.
pub fn diff_with_writers(
    old: &str,
    new: &str,
    managers: &[(String, String)],
) -> (Vec<FieldChange>, Vec<String>) {
    let (old, new) = match (
        serde_json::from_str::<Value>(old),
        serde_json::from_str::<Value>(new),
    ) {
        (Ok(old), Ok(new)) => (old, new),
        // NB: serde_json refuses documents nested deeper than its recursion
        // limit; such a change had no diff and vanished from `changes`.
        (old, new)
            if [old.as_ref().err(), new.as_ref().err()]
                .into_iter()
                .flatten()
                .any(too_deep) =>
        {
            return (vec![not_diffed_too_deep()], Vec::new());
        }
        _ => return (Vec::new(), Vec::new()),
    };
    let mut out = Vec::new();
    walk(&mut Vec::new(), Some(&old), Some(&new), &mut out);
    let owned: Vec<(&str, Value)> = managers
        .iter()
        .filter_map(|(label, fields)| Some((label.as_str(), serde_json::from_str(fields).ok()?)))
        .collect();
    let mut writers: Vec<String> = Vec::new();
    for (segments, change) in &out {
        if change.new.is_none() {
            continue;
        }
        // NB: `{}` in a field set is a field owned as a whole (an atomic list)
        // or only as present (`resources: {}` from `kubectl create`, whose
        // limits another manager set later): the manager whose set reaches
        // deepest along the path is the writer.
        let depths: Vec<(usize, &str)> = owned
            .iter()
            .filter_map(|(label, fields)| Some((owned_depth(fields, segments)?, *label)))
            .collect();
        let deepest = depths.iter().map(|(d, _)| *d).max();
        for (depth, label) in depths {
            if Some(depth) == deepest && !writers.iter().any(|w| w == label) {
                writers.push(label.to_string());
            }
        }
    }
    writers.sort();
    (bound(out.into_iter().map(|(_, c)| c).collect()), writers)
}

/// The deepest nesting of a document that is diffed: serde_json's recursion
/// limit (128) less one, since reaching the limit is the error.
pub const MAX_DEPTH: usize = 127;

fn too_deep(e: &serde_json::Error) -> bool {
    e.to_string().starts_with("recursion limit exceeded")
}

/// The change of a document nested too deep to diff: that it changed.
fn not_diffed_too_deep() -> FieldChange {
    FieldChange {
        path: format!("not diffed: nested deeper than {MAX_DEPTH} levels"),
        old: None,
        new: None,
    }
}

/// One step of a path in the diffed document.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Seg {
    Key(String),
    /// A list element matched by its `name`.
    Named(String),
    /// A list element matched by `key` (and `effect`).
    Keyed(String, String),
    Index(usize),
}

fn path_text(segments: &[Seg]) -> String {
    let mut path = String::new();
    for seg in segments {
        match seg {
            Seg::Key(k) => path = join(&path, k),
            Seg::Named(n) => path.push_str(&format!("[{n}]")),
            Seg::Keyed(k, e) if e.is_empty() => path.push_str(&format!("[{k}]")),
            Seg::Keyed(k, e) => path.push_str(&format!("[{k}:{e}]")),
            Seg::Index(i) => path.push_str(&format!("[{i}]")),
        }
    }
    path
}

/// How far along `segments` (of the diffed document) a managedFields set
/// (`fieldsV1`) reaches, if it owns the field there or a field above it
/// whole (`{}`). The document's `labels` (a Node's) are `metadata.labels`.
fn owned_depth(fields: &Value, segments: &[Seg]) -> Option<usize> {
    let mut node = fields;
    let mut steps: Vec<Seg> = segments.to_vec();
    if steps.first() == Some(&Seg::Key("labels".into())) {
        steps.insert(0, Seg::Key("metadata".into()));
    }
    for (depth, seg) in steps.iter().enumerate() {
        let map = node.as_object()?;
        if map.is_empty() {
            return Some(depth);
        }
        let next = match seg {
            Seg::Key(k) => map.get(&format!("f:{k}")),
            Seg::Index(i) => map.get(&format!("i:{i}")),
            Seg::Named(_) | Seg::Keyed(..) => map.iter().find_map(|(k, v)| {
                let key: Value = serde_json::from_str(k.strip_prefix("k:")?).ok()?;
                let matches = match seg {
                    Seg::Named(n) => key.get("name").and_then(Value::as_str) == Some(n),
                    Seg::Keyed(k, e) => {
                        key.get("key").and_then(Value::as_str) == Some(k)
                            && (e.is_empty()
                                || key.get("effect").and_then(Value::as_str) == Some(e))
                    }
                    _ => false,
                };
                matches.then_some(v)
            }),
        };
        node = next?;
    }
    Some(steps.len())
}

/// The maps of a ConfigMap's diff document whose values may be hidden.
const CONFIGMAP_MAPS: [&str; 2] = ["data", "binaryData"];

/// A ConfigMap's diff document with each value replaced by its digest, as
/// without `--configmap-values`: what is kept and diffed of one whose values
/// are over [`MAX_DOC`], so that its diff still names the keys changed,
/// added and removed. Values hidden already stay as they are; None for
/// unparseable text.
pub fn values_hidden(doc: &str) -> Option<String> {
    let mut v: Value = serde_json::from_str(doc).ok()?;
    for map in CONFIGMAP_MAPS {
        let Some(Value::Object(map)) = v.get_mut(map) else {
            continue;
        };
        for value in map.values_mut() {
            if value.as_str().is_some_and(|s| s.starts_with(HIDDEN)) {
                continue;
            }
            let digest = crate::units::fnv1a(&value.to_string()) as u64;
            *value = Value::String(format!("{HIDDEN}#{digest:016x}"));
        }
    }
    Some(v.to_string())
}

/// Whether a ConfigMap's diff document hides any of its `data` values.
pub fn hides_values(doc: &str) -> bool {
    serde_json::from_str::<Value>(doc).is_ok_and(|v| {
        v.get("data").and_then(Value::as_object).is_some_and(|m| {
            m.values()
                .any(|x| x.as_str().is_some_and(|s| s.starts_with(HIDDEN)))
        })
    })
}

/// The diff of a document too large to keep (see [`MAX_DOC`]): that it
/// changed, and its sizes; `path` names the document (`spec`, a ConfigMap's `data`).
pub fn too_large(path: &str, before: usize, after: usize) -> Vec<FieldChange> {
    let size = |n: usize| {
        if n == 0 {
            "(not kept: over 64 KiB)".to_string()
        } else {
            format!("({n} bytes)")
        }
    };
    vec![FieldChange {
        path: path.into(),
        old: Some(size(before)),
        new: Some(format!("({after} bytes, too large to diff)")),
    }]
}

/// The stored form of a diff: a JSON array, empty text for no change.
pub fn encode(changes: &[FieldChange]) -> String {
    if changes.is_empty() {
        String::new()
    } else {
        serde_json::to_string(changes).unwrap_or_default()
    }
}

/// Reads the stored form back; anything unreadable is no diff.
pub fn decode(text: &str) -> Vec<FieldChange> {
    if text.is_empty() {
        return Vec::new();
    }
    serde_json::from_str(text).unwrap_or_default()
}

/// The fields a managedFields set (`fieldsV1` JSON text) owns, as paths in
/// this module's form: `metadata.labels.owner`, `spec.containers[web].image`
/// (a list element by its `name`, else its whole key), `spec.finalizers[x]`
/// for a set's value. Only leaves: a field owned whole (`{}`), not the
/// objects above it. Unparseable text owns nothing.
pub fn owned_paths(fields_v1: &str) -> Vec<String> {
    fn walk(node: &Value, path: String, out: &mut Vec<String>) {
        let Value::Object(map) = node else { return };
        let children: Vec<(&String, &Value)> = map.iter().filter(|(k, _)| *k != ".").collect();
        if children.is_empty() {
            if !path.is_empty() {
                out.push(path);
            }
            return;
        }
        for (k, v) in children {
            let next = if let Some(field) = k.strip_prefix("f:") {
                join(&path, field)
            } else if let Some(key) = k.strip_prefix("k:") {
                let named = serde_json::from_str::<Value>(key)
                    .ok()
                    .and_then(|key| key.get("name").and_then(Value::as_str).map(str::to_string));
                format!("{path}[{}]", named.unwrap_or_else(|| key.to_string()))
            } else if let Some(value) = k.strip_prefix("v:") {
                let value = serde_json::from_str::<Value>(value)
                    .map(|v| show(&v))
                    .unwrap_or_else(|_| value.to_string());
                format!("{path}[{value}]")
            } else if let Some(index) = k.strip_prefix("i:") {
                format!("{path}[{index}]")
            } else {
                join(&path, k)
            };
            walk(v, next, out);
        }
    }
    let mut out = Vec::new();
    if let Ok(v) = serde_json::from_str::<Value>(fields_v1) {
        walk(&v, String::new(), &mut out);
    }
    out
}

/// Who owns each field of an object ([`owned_paths`] → the writers owning it,
/// sorted): compared between two updates, it tells which fields changed hands.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldOwners(std::collections::HashMap<String, Vec<String>>);

impl FieldOwners {
    /// From each writer's label and field set (`fieldsV1` text).
    pub fn from_sets<'a>(sets: impl Iterator<Item = (String, &'a str)>) -> FieldOwners {
        let mut out: std::collections::HashMap<String, Vec<String>> = Default::default();
        for (who, fields) in sets {
            for path in owned_paths(fields) {
                let owners = out.entry(path).or_default();
                owners.push(who.clone());
                owners.sort();
            }
        }
        FieldOwners(out)
    }

    /// The fields owned now by others than at `before`, in path order: what
    /// the last update took over (a fight's field, when writers alternate).
    pub fn taken_since(&self, before: &FieldOwners) -> Vec<&str> {
        let mut taken: Vec<&str> = self
            .0
            .iter()
            .filter(|(path, who)| before.0.get(*path).is_some_and(|was| was != *who))
            .map(|(path, _)| path.as_str())
            .collect();
        taken.sort();
        taken
    }
}

fn join(path: &str, key: &str) -> String {
    // Keys made of letters, digits, `_` and `-` join with a dot; others are bracketed.
    let simple = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    match (path.is_empty(), simple) {
        (true, true) => key.to_string(),
        (false, true) => format!("{path}.{key}"),
        // NB: label keys hold dots and slashes (`app.kubernetes.io/name`):
        // bracketed, the path stays unambiguous.
        (_, false) => format!("{path}[{key}]"),
    }
}

/// Scalars as kubectl shows them (strings unquoted); objects and arrays as compact JSON.
fn show(v: &Value) -> String {
    let text = match v {
        // NB: hidden data travels as `HIDDEN#digest`, so that a change shows
        // as a change; the digest itself is never shown nor stored in a diff.
        Value::String(s) if s.starts_with(HIDDEN) => return HIDDEN.to_string(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    cut(text)
}

fn cut(mut text: String) -> String {
    if text.len() > MAX_VALUE {
        let total = text.len();
        let mut end = MAX_VALUE;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push_str(&format!("…(cut, {total} bytes)"));
    }
    text
}

/// How array elements are matched: by `name` when every element is an object
/// with a distinct one (containers, volumes, ports, env), by `key:effect`
/// for taints and tolerations, else by position.
fn element_keys(items: &[Value]) -> Option<Vec<Seg>> {
    let distinct = |keys: Vec<Seg>| {
        let texts: std::collections::BTreeSet<String> = keys
            .iter()
            .map(|k| path_text(std::slice::from_ref(k)))
            .collect();
        (texts.len() == keys.len()).then_some(keys)
    };
    let by = |f: &dyn Fn(&Value) -> Option<Seg>| -> Option<Vec<Seg>> {
        distinct(items.iter().map(f).collect::<Option<Vec<_>>>()?)
    };
    by(&|i| {
        i.get("name")
            .and_then(Value::as_str)
            .map(|n| Seg::Named(n.to_string()))
    })
    .or_else(|| {
        by(&|i| {
            let key = i.get("key").and_then(Value::as_str)?;
            let effect = i.get("effect").and_then(Value::as_str).unwrap_or("");
            Some(Seg::Keyed(key.to_string(), effect.to_string()))
        })
    })
}

type Found = (Vec<Seg>, FieldChange);

fn push(out: &mut Vec<Found>, at: &[Seg], old: Option<&Value>, new: Option<&Value>) {
    out.push((
        at.to_vec(),
        FieldChange {
            path: path_text(at),
            old: old.map(show),
            new: new.map(show),
        },
    ));
}

fn walk(at: &mut Vec<Seg>, old: Option<&Value>, new: Option<&Value>, out: &mut Vec<Found>) {
    let mut child =
        |at: &mut Vec<Seg>, seg: Seg, o: Option<&Value>, n: Option<&Value>, whole: bool| {
            at.push(seg);
            if whole {
                push(out, at, o, n);
            } else {
                walk(at, o, n, out);
            }
            at.pop();
        };
    match (old, new) {
        (Some(o), Some(n)) if o == n => {}
        (Some(Value::Object(o)), Some(Value::Object(n))) => {
            for (k, ov) in o {
                child(at, Seg::Key(k.clone()), Some(ov), n.get(k), false);
            }
            for (k, nv) in n {
                if !o.contains_key(k) {
                    child(at, Seg::Key(k.clone()), None, Some(nv), false);
                }
            }
        }
        (Some(Value::Array(o)), Some(Value::Array(n))) => {
            match (element_keys(o), element_keys(n)) {
                (Some(ok), Some(nk)) => {
                    // NB: an element added or removed whole is one change with
                    // its value, not one per field of it.
                    for (k, ov) in ok.iter().zip(o) {
                        match nk.iter().position(|x| x == k) {
                            Some(i) => child(at, k.clone(), Some(ov), Some(&n[i]), false),
                            None => child(at, k.clone(), Some(ov), None, true),
                        }
                    }
                    for (k, nv) in nk.iter().zip(n) {
                        if !ok.contains(k) {
                            child(at, k.clone(), None, Some(nv), true);
                        }
                    }
                }
                _ if o.len() == n.len() && o.iter().all(Value::is_object) => {
                    for (i, (ov, nv)) in o.iter().zip(n).enumerate() {
                        child(at, Seg::Index(i), Some(ov), Some(nv), false);
                    }
                }
                // Lists of scalars (args, finalizers) or of changing length: one value.
                _ => push(out, at, old, new),
            }
        }
        // A keyed list added or removed whole (a Node's first taint): one
        // change per element, named by its key, as when the list was there.
        (None, Some(Value::Array(n))) if !n.is_empty() && element_keys(n).is_some() => {
            for (k, nv) in element_keys(n).unwrap_or_default().into_iter().zip(n) {
                child(at, k, None, Some(nv), true);
            }
        }
        (Some(Value::Array(o)), None) if !o.is_empty() && element_keys(o).is_some() => {
            for (k, ov) in element_keys(o).unwrap_or_default().into_iter().zip(o) {
                child(at, k, Some(ov), None, true);
            }
        }
        // An object added or removed whole: its leaves, so that the path names
        // what was set (`resources.limits.memory added: 512Mi`).
        (None, Some(Value::Object(n))) if !n.is_empty() => {
            for (k, nv) in n {
                child(at, Seg::Key(k.clone()), None, Some(nv), false);
            }
        }
        (Some(Value::Object(o)), None) if !o.is_empty() => {
            for (k, ov) in o {
                child(at, Seg::Key(k.clone()), Some(ov), None, false);
            }
        }
        (o, n) => push(out, at, o, n),
    }
}

/// Keeps the first changes that fit in [`MAX_DIFF`] bytes; the rest becomes one count.
fn bound(changes: Vec<FieldChange>) -> Vec<FieldChange> {
    let mut size = 0;
    let total = changes.len();
    let mut kept = Vec::new();
    for c in changes {
        let len = c.path.len()
            + c.old.as_ref().map_or(0, String::len)
            + c.new.as_ref().map_or(0, String::len)
            + 16;
        if size + len > MAX_DIFF {
            break;
        }
        size += len;
        kept.push(c);
    }
    if kept.len() < total {
        let left = total - kept.len();
        kept.push(FieldChange {
            path: format!("… and {left} more changed path(s), not kept"),
            old: None,
            new: None,
        });
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(old: &str, new: &str) -> Vec<String> {
        diff(old, new).iter().map(FieldChange::text).collect()
    }

    /// `{"spec":` with `levels` objects nested inside, the innermost holding `v`.
    fn nested(levels: usize, v: &str) -> String {
        format!(
            r#"{{"spec":{}{{"v":{v}}}{}}}"#,
            r#"{"a":"#.repeat(levels - 1),
            "}".repeat(levels - 1)
        )
    }

    /// Regression (issue 27.12): a document nested past serde_json's
    /// recursion limit gave no diff, and its change vanished from `changes`.
    #[test]
    fn a_spec_nested_too_deep_to_diff_says_so() {
        // The document is one level deeper than its spec.
        let deepest = nested(MAX_DEPTH - 1, "1");
        assert!(serde_json::from_str::<Value>(&deepest).is_ok());
        assert_eq!(texts(&deepest, &nested(MAX_DEPTH - 1, "2")).len(), 1);
        for (old, new) in [
            (nested(MAX_DEPTH, "1"), nested(MAX_DEPTH, "2")),
            (nested(3, "1"), nested(200, "2")),
            (nested(9_000, "1"), nested(3, "2")),
        ] {
            assert_eq!(
                texts(&old, &new),
                ["not diffed: nested deeper than 127 levels"]
            );
        }
        assert_eq!(texts("{", r#"{"spec":{}}"#), Vec::<String>::new());
    }

    #[test]
    fn a_memory_limit_cut_is_named_by_container() {
        let old = r#"{"spec":{"replicas":3,"template":{"spec":{"containers":[
            {"name":"sidecar","image":"envoy:1"},
            {"name":"web","image":"web:1","resources":{"limits":{"memory":"512Mi"}}}]}}}}"#;
        let new = r#"{"spec":{"replicas":0,"template":{"spec":{"containers":[
            {"name":"sidecar","image":"envoy:1"},
            {"name":"web","image":"web:1","resources":{"limits":{"memory":"256Mi"}}}]}}}}"#;
        assert_eq!(
            texts(old, new),
            [
                "spec.replicas 3 → 0",
                "spec.template.spec.containers[web].resources.limits.memory 512Mi → 256Mi",
            ]
        );
    }

    #[test]
    fn added_and_removed_paths_and_label_keys_with_dots() {
        let old = r#"{"labels":{"app.kubernetes.io/name":"web","tier":"a"}}"#;
        let new = r#"{"labels":{"app.kubernetes.io/name":"web","disktype":"ssd"}}"#;
        assert_eq!(
            texts(old, new),
            ["labels.tier removed (was a)", "labels.disktype added: ssd"]
        );
        let new = r#"{"labels":{"app.kubernetes.io/name":"api","tier":"a"}}"#;
        assert_eq!(
            texts(old, new),
            ["labels[app.kubernetes.io/name] web → api"]
        );
    }

    #[test]
    fn taints_are_keyed_by_key_and_effect_and_scalar_lists_compared_whole() {
        let old = r#"{"spec":{"taints":[{"key":"a","effect":"NoSchedule"}],"args":["x"]}}"#;
        let new = r#"{"spec":{"taints":[{"key":"a","effect":"NoSchedule"},{"key":"b","value":"v","effect":"NoExecute"}],"args":["x","y"]}}"#;
        assert_eq!(
            texts(old, new),
            [
                r#"spec.taints[b:NoExecute] added: {"key":"b","value":"v","effect":"NoExecute"}"#,
                r#"spec.args ["x"] → ["x","y"]"#,
            ]
        );
        let added = texts(
            r#"{"spec":{}}"#,
            r#"{"spec":{"taints":[{"key":"a","effect":"NoSchedule"}]}}"#,
        );
        assert_eq!(
            added,
            [r#"spec.taints[a:NoSchedule] added: {"key":"a","effect":"NoSchedule"}"#]
        );
        let cordon = texts(r#"{"spec":{}}"#, r#"{"spec":{"unschedulable":true}}"#);
        assert_eq!(cordon, ["spec.unschedulable added: true"]);
    }

    #[test]
    fn long_values_are_cut_and_a_diff_stops_at_its_budget() {
        let long = "x".repeat(1000);
        let changes = diff(r#"{"a":"short"}"#, &format!(r#"{{"a":"{long}"}}"#));
        let new = changes[0].new.as_deref().unwrap();
        assert!(new.ends_with("…(cut, 1000 bytes)"), "{new}");
        assert!(new.len() < MAX_VALUE + 32);
        let many: Vec<String> = (0..200).map(|i| format!(r#""k{i}":"{long}""#)).collect();
        let big = format!("{{{}}}", many.join(","));
        let changes = diff("{}", &big);
        assert!(encode(&changes).len() <= MAX_DIFF + 512);
        assert!(
            changes
                .last()
                .unwrap()
                .path
                .contains("more changed path(s)")
        );
    }

    #[test]
    fn hidden_values_say_only_changed_added_removed() {
        let h = HIDDEN;
        let old = format!(r#"{{"data":{{"a":"{h}#1","b":"{h}#2"}}}}"#);
        let new = format!(r#"{{"data":{{"a":"{h}#3","c":"{h}#4"}}}}"#);
        assert_eq!(
            texts(&old, &new),
            ["data.a changed", "data.b removed", "data.c added"]
        );
        assert!(!encode(&diff(&old, &new)).contains('#'));
    }

    #[test]
    fn the_writer_is_the_manager_that_owns_the_changed_field_now() {
        let old = r#"{"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"web","resources":{"limits":{"memory":"512Mi"}}}]}}}}"#;
        let new = r#"{"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"web","resources":{"limits":{"memory":"256Mi"}}}]}}}}"#;
        // `kubectl create` owns `resources: {}` as present; alice set the limit.
        let creator = r#"{"f:spec":{"f:replicas":{},"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:name":{},"f:resources":{}}}}}}}"#;
        let alice = r#"{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{"f:resources":{"f:limits":{"f:memory":{}}}}}}}}}"#;
        let status = r#"{"f:status":{"f:replicas":{}}}"#;
        let managers = vec![
            ("kubectl-create".to_string(), creator.to_string()),
            ("alice".to_string(), alice.to_string()),
            (
                "kube-controller-manager/status".to_string(),
                status.to_string(),
            ),
        ];
        let (changes, writers) = diff_with_writers(old, new, &managers);
        assert_eq!(changes.len(), 1);
        assert_eq!(writers, ["alice"]);
        // A Node's labels live under metadata; an atomic list is owned whole.
        let old = r#"{"spec":{"taints":[]},"labels":{"a":"1"}}"#;
        let new = r#"{"spec":{"taints":[{"key":"k","effect":"NoSchedule"}]},"labels":{"a":"2"}}"#;
        let taint = r#"{"f:spec":{"f:taints":{}}}"#;
        let labeler = r#"{"f:metadata":{"f:labels":{"f:a":{}}}}"#;
        let managers = vec![
            ("kubectl-taint".to_string(), taint.to_string()),
            ("kubectl-label".to_string(), labeler.to_string()),
        ];
        let (_, writers) = diff_with_writers(old, new, &managers);
        assert_eq!(writers, ["kubectl-label", "kubectl-taint"]);
    }

    #[test]
    fn owned_paths_are_the_leaves_of_a_field_set_in_diff_form() {
        let set = r#"{"f:metadata":{"f:labels":{".":{},"f:owner":{},"f:app.kubernetes.io/name":{}},"f:finalizers":{"v:\"example.com/x\"":{}}},
            "f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{}}},"f:ports":{"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{".":{}}}}}"#;
        let mut paths = owned_paths(set);
        paths.sort();
        assert_eq!(
            paths,
            vec![
                "metadata.finalizers[example.com/x]",
                "metadata.labels.owner",
                "metadata.labels[app.kubernetes.io/name]",
                "spec.containers[web].image",
                r#"spec.ports[{"containerPort":80,"protocol":"TCP"}]"#,
            ]
        );
        assert!(owned_paths("not json").is_empty());
    }

    #[test]
    fn encode_decode_round_trip_and_nothing_for_no_change() {
        assert!(diff(r#"{"a":1}"#, r#"{"a":1}"#).is_empty());
        assert_eq!(encode(&[]), "");
        let changes = diff(r#"{"a":1}"#, r#"{"a":2}"#);
        assert_eq!(decode(&encode(&changes)), changes);
        assert!(decode("not json").is_empty());
    }
}
