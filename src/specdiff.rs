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

/// The changes from `old` to `new` (JSON texts of the diffable document),
/// in document order. Unparseable input gives no changes.
pub fn diff(old: &str, new: &str) -> Vec<FieldChange> {
    let (Ok(old), Ok(new)) = (
        serde_json::from_str::<Value>(old),
        serde_json::from_str::<Value>(new),
    ) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    walk("", Some(&old), Some(&new), &mut out);
    bound(out)
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

fn join(path: &str, key: &str) -> String {
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
fn element_keys(items: &[Value]) -> Option<Vec<String>> {
    let distinct = |keys: Vec<String>| {
        let mut sorted = keys.clone();
        sorted.sort();
        sorted.dedup();
        (sorted.len() == keys.len()).then_some(keys)
    };
    let by = |f: &dyn Fn(&Value) -> Option<String>| -> Option<Vec<String>> {
        distinct(items.iter().map(f).collect::<Option<Vec<_>>>()?)
    };
    by(&|i| i.get("name").and_then(Value::as_str).map(str::to_string)).or_else(|| {
        by(&|i| {
            let key = i.get("key").and_then(Value::as_str)?;
            let effect = i.get("effect").and_then(Value::as_str).unwrap_or("");
            Some(if effect.is_empty() {
                key.to_string()
            } else {
                format!("{key}:{effect}")
            })
        })
    })
}

fn walk(path: &str, old: Option<&Value>, new: Option<&Value>, out: &mut Vec<FieldChange>) {
    match (old, new) {
        (Some(o), Some(n)) if o == n => {}
        (Some(Value::Object(o)), Some(Value::Object(n))) => {
            for (k, ov) in o {
                walk(&join(path, k), Some(ov), n.get(k), out);
            }
            for (k, nv) in n {
                if !o.contains_key(k) {
                    walk(&join(path, k), None, Some(nv), out);
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
                            Some(i) => walk(&format!("{path}[{k}]"), Some(ov), Some(&n[i]), out),
                            None => out.push(FieldChange {
                                path: format!("{path}[{k}]"),
                                old: Some(show(ov)),
                                new: None,
                            }),
                        }
                    }
                    for (k, nv) in nk.iter().zip(n) {
                        if !ok.contains(k) {
                            out.push(FieldChange {
                                path: format!("{path}[{k}]"),
                                old: None,
                                new: Some(show(nv)),
                            });
                        }
                    }
                }
                _ if o.len() == n.len() && o.iter().all(|v| v.is_object()) => {
                    for (i, (ov, nv)) in o.iter().zip(n).enumerate() {
                        walk(&format!("{path}[{i}]"), Some(ov), Some(nv), out);
                    }
                }
                // Lists of scalars (args, finalizers) or of changing length: one value.
                _ => out.push(FieldChange {
                    path: path.to_string(),
                    old: Some(show(&Value::Array(o.clone()))),
                    new: Some(show(&Value::Array(n.clone()))),
                }),
            }
        }
        // An object added or removed whole: its leaves, so that the path names
        // what was set (`resources.limits.memory added: 512Mi`).
        (None, Some(Value::Object(n))) if !n.is_empty() => {
            for (k, nv) in n {
                walk(&join(path, k), None, Some(nv), out);
            }
        }
        (Some(Value::Object(o)), None) if !o.is_empty() => {
            for (k, ov) in o {
                walk(&join(path, k), Some(ov), None, out);
            }
        }
        (o, n) => out.push(FieldChange {
            path: path.to_string(),
            old: o.map(show),
            new: n.map(show),
        }),
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
            [r#"spec.taints added: [{"key":"a","effect":"NoSchedule"}]"#]
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
    fn encode_decode_round_trip_and_nothing_for_no_change() {
        assert!(diff(r#"{"a":1}"#, r#"{"a":1}"#).is_empty());
        assert_eq!(encode(&[]), "");
        let changes = diff(r#"{"a":1}"#, r#"{"a":2}"#);
        assert_eq!(decode(&encode(&changes)), changes);
        assert!(decode("not json").is_empty());
    }
}
