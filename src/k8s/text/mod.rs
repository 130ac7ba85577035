//! The text kubectl prints for people, read back into Events: what incident
//! tickets carry instead of `-o json`.
//!
//! Read by content, in sections: a `kubectl get events` table starts at its
//! header line, a `kubectl describe` object at a `Name:` line in column 0.
//! A file may hold several of either (a ticket pasting one after another).
//! Everything here is pure: `&str` in, plain [`TextEvent`]s out; ages stay
//! relative ([`When`]) until the caller says when the text was taken.
//!
//! Layouts, from kubectl's printers (`pkg/printers/internalversion/printers.go`,
//! `pkg/kubectl/describe` / `k8s.io/kubectl/pkg/describe`):
//! - `get events` ≤ 1.7: `FIRSTSEEN LASTSEEN COUNT NAME KIND SUBOBJECT TYPE REASON SOURCE MESSAGE`,
//!   NAME the object's, SOURCE Go's `{component host}`.
//! - `get events` 1.8–1.10: `LASTSEEN FIRSTSEEN COUNT NAME KIND SUBOBJECT TYPE REASON SOURCE MESSAGE`,
//!   NAME the object's, SOURCE `component, host`.
//! - `get events` 1.11–1.13 (server-side tables): `LAST SEEN FIRST SEEN COUNT NAME KIND SUBOBJECT TYPE REASON SOURCE MESSAGE`,
//!   NAME the Event's own.
//! - `get events` 1.14 and later: `LAST SEEN TYPE REASON OBJECT MESSAGE`; `-o wide` adds
//!   SUBOBJECT SOURCE (after OBJECT) and FIRST SEEN COUNT NAME (after MESSAGE).
//! - Any of these with `-A` (`--all-namespaces`): NAMESPACE first.
//! - `describe` ≤ 1.9: `FirstSeen LastSeen Count From SubObjectPath Type Reason Message`.
//! - `describe` 1.10 and later: `Type Reason Age From Message`, Age `2m` or `2m (x12 over 5m)`.
//! - `describe event`: kubectl's generic describer (`Kind: Event`, `Involved Object:`, absolute times).

pub mod age;
mod describe;
mod fragment;
mod get;
pub mod grid;

pub use age::When;

/// One Event as a line (or a few) of kubectl text shows it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TextEvent {
    /// 1-based line of the file where its row starts.
    pub line: usize,
    /// Which printer's layout it was read from (for messages).
    pub layout: &'static str,
    /// The object it is about. `kind` is empty when it could not be told;
    /// `namespace` is empty for cluster-scoped kinds and when the text did not show one.
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub field_path: String,
    /// The object's uid and apiVersion, when the layout shows them (describe event).
    pub object_uid: String,
    pub api_version: String,
    /// The Event's own namespace (`-A`'s NAMESPACE column; for describe, the
    /// object's, or `default` for a cluster-scoped one); empty when not shown.
    pub event_namespace: String,
    /// The Event's own name and uid, when the layout shows them.
    pub event_name: String,
    pub uid: String,
    pub type_: String,
    pub reason: String,
    pub message: String,
    /// The layout cut the message (it ends in `...`, which is kept).
    pub truncated: bool,
    /// The reporting component; `None` when the layout has no source column.
    pub source: Option<String>,
    /// What follows the component in a `component, host` source.
    pub host: String,
    /// How many times; `None` when the layout does not show it.
    pub count: Option<i64>,
    /// First seen; `None` when the layout does not show it.
    pub first: Option<When>,
    pub last: When,
}

/// What one file's text held.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed {
    pub events: Vec<TextEvent>,
    /// Things the reader should know (a kind that could not be told, …), by line.
    pub notes: Vec<String>,
    /// Whether any section was recognised at all (a table or describe output
    /// with no Events is still recognised).
    pub recognised: bool,
}

/// Whether a line is the header of a `kubectl get events` table, in any layout.
pub fn is_get_events_header(line: &str) -> bool {
    let g = grid::Grid::from_header(line);
    g.has("REASON")
        && g.has("MESSAGE")
        && (g.has("LAST SEEN") || g.has("LASTSEEN") || g.has("FIRSTSEEN"))
}

fn is_describe_start(line: &str) -> bool {
    line.starts_with("Name:")
}

/// Reads every `kubectl get events` table and `kubectl describe` object in `text`.
pub fn parse(text: &str) -> Parsed {
    let lines: Vec<&str> = text.lines().collect();
    let mut parsed = Parsed::default();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let start = i;
        if is_get_events_header(line) {
            i += 1;
            while i < lines.len() && !is_get_events_header(lines[i]) && !is_describe_start(lines[i])
            {
                i += 1;
            }
            parsed.recognised = true;
            get::parse_table(&lines[start..i], start, &mut parsed);
        } else if is_describe_start(line) {
            i += 1;
            while i < lines.len() && !is_get_events_header(lines[i]) && !is_describe_start(lines[i])
            {
                i += 1;
            }
            parsed.recognised = true;
            describe::parse_object(&lines[start..i], start, &mut parsed);
        } else if let Some(header) = events_alone(&lines, i) {
            // An Events: table pasted without the describe output above it.
            let mut end = header + 1;
            while end < lines.len()
                && !lines[end].trim().is_empty()
                && !is_get_events_header(lines[end])
                && !is_describe_start(lines[end])
            {
                end += 1;
            }
            parsed.recognised = true;
            if lines[header].contains('\t') {
                // 1.6 printed it with tabs: its rows are read as tab-separated rows.
                let rows: Vec<&str> = lines[header + 1..end]
                    .iter()
                    .copied()
                    .filter(|l| !l.trim_start().starts_with("---"))
                    .collect();
                fragment::rows(&rows, header + 1, &mut parsed);
            } else {
                describe::events_alone(&lines[header..end], header, &mut parsed);
            }
            i = end;
        } else {
            // Rows of a table or describe section pasted without their header;
            // NB: anything else (a shell prompt, the command, a sentence of the
            // ticket) is not read.
            match fragment::rows(&lines[i..], i, &mut parsed) {
                0 => i += 1,
                n => {
                    parsed.recognised = true;
                    i += n;
                }
            }
        }
    }
    parsed
}

/// Where the header of an Events table pasted alone is, when `lines[i]` starts
/// one: the header itself, or an `Events:` line above it.
fn events_alone(lines: &[&str], i: usize) -> Option<usize> {
    let tabs_expanded = |l: &str| l.replace('\t', "    ");
    if fragment::is_events_header(&tabs_expanded(lines[i])) {
        return Some(i);
    }
    (lines[i].trim() == "Events:"
        && lines
            .get(i + 1)
            .is_some_and(|l| fragment::is_events_header(&tabs_expanded(l))))
    .then_some(i + 1)
}

/// The Kind that kubectl's lower-cased `kind/name` (get events' OBJECT
/// column) stands for, for the built-in kinds; anything else as printed.
pub fn kind_from_lower(lower: &str) -> Option<&'static str> {
    const KINDS: &[&str] = &[
        "Pod",
        "Node",
        "Deployment",
        "ReplicaSet",
        "StatefulSet",
        "DaemonSet",
        "Job",
        "CronJob",
        "Service",
        "Endpoints",
        "EndpointSlice",
        "PersistentVolumeClaim",
        "PersistentVolume",
        "HorizontalPodAutoscaler",
        "Namespace",
        "ConfigMap",
        "Secret",
        "ServiceAccount",
        "Ingress",
        "PodDisruptionBudget",
        "ReplicationController",
        "Lease",
        "StorageClass",
        "VolumeAttachment",
        "CertificateSigningRequest",
        "Event",
    ];
    KINDS
        .iter()
        .find(|k| k.eq_ignore_ascii_case(lower))
        .copied()
}

/// Whether objects of this kind live outside namespaces (their Events go to `default`).
pub fn cluster_scoped(kind: &str) -> bool {
    matches!(
        kind,
        "Node"
            | "Namespace"
            | "PersistentVolume"
            | "StorageClass"
            | "ClusterRole"
            | "ClusterRoleBinding"
            | "CertificateSigningRequest"
            | "VolumeAttachment"
            | "PriorityClass"
            | "CustomResourceDefinition"
    )
}

/// Splits a printed source into (component, host): `kubelet, node-1` (1.8 and
/// later), `{kubelet node-1}` (Go's struct printing, 1.7 and earlier), `kubelet`.
pub fn split_source(source: &str) -> (String, String) {
    let s = source.trim();
    if let Some(inner) = s.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
        let (c, h) = inner.split_once(' ').unwrap_or((inner, ""));
        return (c.trim().to_string(), h.trim().to_string());
    }
    match s.split_once(", ") {
        Some((c, h)) => (c.trim().to_string(), h.trim().to_string()),
        None => (s.to_string(), String::new()),
    }
}

/// A message as printed, and whether the printer cut it. NB: since 1.19 or so
/// kubectl's table printer cuts a cell at its first line break and appends
/// `...`; a message that ends in `...` of its own is taken as cut too, which
/// costs nothing but a looser match (see `import`).
pub fn message_cut(message: &str) -> bool {
    message.ends_with("...")
}

/// The object name in a client-go Event name `<object>.<hex>`, if it is one.
pub fn object_of_event_name(event_name: &str) -> Option<&str> {
    let (object, hex) = event_name.rsplit_once('.')?;
    (!object.is_empty()
        && !hex.is_empty()
        && hex.len() <= 16
        && hex.bytes().all(|b| b.is_ascii_hexdigit()))
    .then_some(object)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_in_every_spelling() {
        assert_eq!(
            split_source("kubelet, node-1"),
            ("kubelet".into(), "node-1".into())
        );
        assert_eq!(
            split_source("{kubelet node-1}"),
            ("kubelet".into(), "node-1".into())
        );
        assert_eq!(
            split_source("{default-scheduler }"),
            ("default-scheduler".into(), String::new())
        );
        assert_eq!(split_source("kubelet"), ("kubelet".into(), String::new()));
    }

    #[test]
    fn event_names_and_kinds() {
        assert_eq!(
            object_of_event_name("web-1.17a8b2c3d4e5f6a7"),
            Some("web-1")
        );
        assert_eq!(object_of_event_name("web-1"), None);
        assert_eq!(kind_from_lower("replicaset"), Some("ReplicaSet"));
        assert_eq!(kind_from_lower("widget"), None);
    }

    #[test]
    fn text_that_is_neither_is_not_recognised() {
        let p = parse("hello\nName is not a header\n  LAST SEEN is here\n");
        assert!(!p.recognised);
        assert!(p.events.is_empty());
    }
}
