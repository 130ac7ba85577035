//! The text kubectl prints for people, read back into Events: what incident
//! tickets carry instead of `-o json`.
//!
//! Read by content, in sections: a `kubectl get events` table starts at its
//! header line, a `kubectl describe` object at a `Name:` line in column 0.
//! A file may hold several of either (a ticket pasting one after another),
//! with any other text before, between and after them (prompts, banners,
//! JSON, prose; see `stray`): each table is read under its own header, and
//! a line that is none of its rows is never taken for part of one.
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
//! - `kubectl events` 1.26 and later (`kubectl alpha events` 1.23–1.25,
//!   `pkg/cmd/events/events_printer.go`): the same five columns, no `-o wide`;
//!   OBJECT `Pod/web-1` (the Kind as it is), LAST SEEN `52s`, or
//!   `3m30s (x256 over 58m)` for an Event seen more than once (see `get::seen`).
//! - Any of these with `-A` (`--all-namespaces`): NAMESPACE first.
//! - `get events --watch`: the header once, then rows as they come, each
//!   aligned on its own (not under the header), among whatever else the
//!   terminal printed.
//! - `describe` ≤ 1.9: `FirstSeen LastSeen Count From SubObjectPath Type Reason Message`,
//!   padded with tabs up to 1.7, From `{component host}` up to 1.7; pasted,
//!   often with the padding squeezed to two spaces.
//! - `describe` 1.10 and later: `Type Reason Age From Message`, Age `2m` or `2m (x12 over 5m)`.
//! - `describe event`: kubectl's generic describer (`Kind: Event`, `Involved Object:`, absolute times).

pub mod age;
mod describe;
mod fragment;
mod get;
pub mod grid;
mod stray;

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

/// Whether a line ends the `get events` table above it (the next table's
/// header ends it too): describe output, a describe Events table's header,
/// or text that says the table is over (a prompt, a banner; see
/// `stray::ends_table`).
fn ends_table(line: &str) -> bool {
    is_describe_start(line)
        || fragment::is_events_header(&line.replace('\t', "    "))
        || stray::ends_table(line)
}

/// Reads every `kubectl get events` table and `kubectl describe` object in `text`.
pub fn parse(text: &str) -> Parsed {
    let lines: Vec<&str> = text.lines().collect();
    let mut parsed = Parsed::default();
    parse_lines(&lines, 0, &mut parsed);
    parsed
}

/// [`parse`] of `lines`, the first of which is the file's 0-based line `base`.
///
/// NB: every section but a table ends at the next table's header (and a
/// table at the next header or a line [`ends_table`] says ends it), so that
/// text split before each header reads as the whole does: [`Lines`] relies
/// on it.
fn parse_lines(lines: &[&str], base: usize, parsed: &mut Parsed) {
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let start = i;
        if is_get_events_header(line) {
            i += 1;
            while i < lines.len() && !is_get_events_header(lines[i]) && !ends_table(lines[i]) {
                i += 1;
            }
            parsed.recognised = true;
            get::parse_table(&lines[start..i], base + start, parsed);
        } else if is_describe_start(line) {
            i += 1;
            while i < lines.len() && !is_get_events_header(lines[i]) && !is_describe_start(lines[i])
            {
                i += 1;
            }
            parsed.recognised = true;
            describe::parse_object(&lines[start..i], base + start, parsed);
        } else if let Some(header) = events_alone(lines, i) {
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
                fragment::rows(&rows, base + header + 1, parsed);
            } else {
                describe::events_alone(&lines[header..end], base + header, parsed);
            }
            i = end;
        } else {
            // Rows of a table or describe section pasted without their header;
            // NB: anything else (a shell prompt, the command, a sentence of the
            // ticket) is not read.
            match fragment::rows(&lines[i..], base + i, parsed) {
                0 => i += 1,
                n => {
                    parsed.recognised = true;
                    i += n;
                }
            }
        }
    }
}

/// kubectl text read a line at a time, as [`parse`] reads it whole: the rows
/// of a `get events` table are read as they come (a table of any length
/// costs a row of memory); any other section (`describe` output, rows
/// pasted without their header, prose) is held until the next table's
/// header, or the end, and read whole then. Pure: lines in, Events out.
#[derive(Default)]
pub struct Lines {
    /// Lines given so far.
    next: usize,
    table: Option<get::Table>,
    /// The section being held (its lines, each ended by `\n`) and its first line.
    held: String,
    held_from: usize,
    /// A table's header was seen: the text is kubectl's, whatever else it holds.
    tables: bool,
}

impl Lines {
    pub fn new() -> Lines {
        Lines::default()
    }

    /// Reads the next line (without its line break); what it completes goes to `out`.
    pub fn line(&mut self, line: &str, out: &mut Parsed) {
        let no = self.next;
        self.next += 1;
        if is_get_events_header(line) {
            self.end_section(out);
            self.tables = true;
            out.recognised = true;
            self.table = Some(get::Table::new(line));
            return;
        }
        match &mut self.table {
            Some(table) if !ends_table(line) => table.line(line, no + 1, out),
            _ => {
                if let Some(table) = self.table.take() {
                    table.finish(out);
                }
                if self.held.is_empty() {
                    self.held_from = no;
                }
                self.held.push_str(line);
                self.held.push('\n');
            }
        }
    }

    /// How many bytes of text are held (a section other than a table), for
    /// the caller to bound.
    pub fn held(&self) -> usize {
        self.held.len()
    }

    /// Whether a `get events` table's header was seen.
    pub fn tables(&self) -> bool {
        self.tables
    }

    /// The text ends: what is held is read.
    pub fn finish(mut self, out: &mut Parsed) {
        self.end_section(out);
    }

    /// Everything given, when it was all held (no table was seen): to be
    /// read whole, as YAML when it is not kubectl's text. `None` once a
    /// table streamed.
    pub fn into_whole(self) -> Option<String> {
        (!self.tables).then_some(self.held)
    }

    fn end_section(&mut self, out: &mut Parsed) {
        if let Some(table) = self.table.take() {
            table.finish(out);
        }
        if !self.held.is_empty() {
            let held = std::mem::take(&mut self.held);
            let lines: Vec<&str> = held.lines().collect();
            parse_lines(&lines, self.held_from, out);
        }
    }
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

/// `rows` laid out as Go's `text/tabwriter` lays out kubectl's tables: each
/// cell but the last padded to its column's width plus `padding` spaces.
#[cfg(test)]
pub(crate) fn tabwrite(rows: &[&[&str]], padding: usize) -> String {
    let columns = rows.iter().map(|r| r.len()).max().unwrap_or(0);
    let width = |c: usize| {
        rows.iter()
            .filter(|r| c + 1 < r.len())
            .map(|r| r[c].chars().count())
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..columns).map(width).collect();
    let mut out = String::new();
    for row in rows {
        for (c, cell) in row.iter().enumerate() {
            out.push_str(cell);
            if c + 1 < row.len() {
                let pad = widths[c] + padding - cell.chars().count();
                out.push_str(&" ".repeat(pad));
            }
        }
        out.push('\n');
    }
    out
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

    /// `text` given to [`Lines`] a line at a time.
    fn streamed(text: &str) -> Parsed {
        let mut lines = Lines::new();
        let mut out = Parsed::default();
        for line in text.lines() {
            lines.line(line, &mut out);
        }
        if lines.tables() {
            lines.finish(&mut out);
        } else if let Some(whole) = lines.into_whole() {
            out = parse(&whole);
        }
        out
    }

    /// Regression (issue 27.9): text was parsed whole, so a 100 MB table
    /// cost its size several times over. Read a line at a time, every
    /// fixture (tables, describe output, fragments, and them pasted one
    /// after another) reads as it does whole, line numbers and notes alike.
    #[test]
    fn text_read_a_line_at_a_time_reads_as_it_does_whole() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import");
        let mut all = String::new();
        let mut names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "txt"))
            .collect();
        names.sort();
        assert!(names.len() > 10, "{names:?}");
        for path in names {
            let text = std::fs::read_to_string(&path).unwrap();
            assert_eq!(streamed(&text), parse(&text), "{}", path.display());
            all.push_str(&text);
        }
        assert_eq!(streamed(&all), parse(&all));
    }

    /// The streaming property itself: a table's row comes out once the
    /// next row is read, nothing of it is held, and a continuation line
    /// never grows a message past what is stored of it.
    #[test]
    fn a_table_costs_one_row_of_memory_whatever_its_length() {
        let mut lines = Lines::new();
        let mut out = Parsed::default();
        lines.line(
            "LAST SEEN   TYPE      REASON    OBJECT      MESSAGE",
            &mut out,
        );
        for i in 0..10_000 {
            let row = format!("5m          Warning   BackOff   pod/web-{i}   Back-off {i}");
            lines.line(&row, &mut out);
            assert_eq!(out.events.len(), usize::from(i > 0), "row {i}");
            assert_eq!(lines.held(), 0);
            if let Some(e) = out.events.pop() {
                assert_eq!(e.name, format!("web-{}", i - 1));
                assert_eq!(e.line, i + 1);
            }
        }
        let long = "x".repeat(1000);
        let mut old = Lines::new();
        old.line(
            "LASTSEEN   FIRSTSEEN   COUNT     NAME      KIND      SUBOBJECT   TYPE      REASON    SOURCE             MESSAGE",
            &mut out,
        );
        old.line(
            "1m         5m          3         web-1     Pod                   Warning   Failed    kubelet, node-1    first line",
            &mut out,
        );
        for _ in 0..1000 {
            old.line(&long, &mut out);
        }
        old.finish(&mut out);
        let m = &out.events.last().unwrap().message;
        assert!(
            m.len() <= crate::k8s::event::MAX_MESSAGE_BYTES + long.len() + 1,
            "{}",
            m.len()
        );
    }

    /// Regression: a table ran to the next header or `Name:`, and every
    /// line in between that was not a row was added to the last row's
    /// message (a prompt, a banner, a JSON snippet, prose). Each table is
    /// read under its own header, whatever text is around it.
    #[test]
    fn tables_among_other_text_are_each_read_under_their_own_header() {
        let shop = tabwrite(
            &[
                &["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"],
                &[
                    "3m30s (x256 over 58m)",
                    "Warning",
                    "BackOff",
                    "Pod/web-1",
                    "Back-off restarting failed container",
                ],
                &["52s", "Normal", "Pulled", "Pod/web-1", "Pulled web:1"],
            ],
            3,
        );
        let pay = tabwrite(
            &[
                &["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"],
                &[
                    "2m",
                    "Warning",
                    "Failed",
                    "pod/pay-0",
                    "Error: ImagePullBackOff",
                ],
            ],
            3,
        );
        let all = tabwrite(
            &[
                &[
                    "NAMESPACE",
                    "LAST SEEN",
                    "TYPE",
                    "REASON",
                    "OBJECT",
                    "MESSAGE",
                ],
                &[
                    "shop",
                    "1m",
                    "Normal",
                    "Killing",
                    "pod/web-1",
                    "Stopping container web",
                ],
                &[
                    "default",
                    "5m",
                    "Normal",
                    "Starting",
                    "node/kwok-1",
                    "Starting kubelet.",
                ],
            ],
            3,
        );
        let text = format!(
            "Incident 4711: web keeps restarting since the rollout.\n\
             === prod, 10:02 UTC ===\n\
             $ kubectl events -n shop\n\
             {shop}\
             $ kubectl get events -n pay\n\
             {pay}\
             {{\n  \"kind\": \"Event\",\n  \"reason\": \"Failed\"\n}}\n\
             ```\n\
             {all}\
             ```\n\
             user@laptop:~$ exit\n\
             Thanks, see above.\n"
        );
        let p = parse(&text);
        assert!(p.recognised);
        assert!(p.notes.is_empty(), "{:?}", p.notes);
        let read: Vec<(usize, &str, &str)> = p
            .events
            .iter()
            .map(|e| (e.line, e.reason.as_str(), e.message.as_str()))
            .collect();
        assert_eq!(
            read,
            [
                (5, "BackOff", "Back-off restarting failed container"),
                (6, "Pulled", "Pulled web:1"),
                (9, "Failed", "Error: ImagePullBackOff"),
                (16, "Killing", "Stopping container web"),
                (17, "Starting", "Starting kubelet."),
            ]
        );
        assert_eq!(p.events[0].count, Some(256));
        assert_eq!(p.events[3].event_namespace, "shop");
        assert_eq!(streamed(&text), p);
    }

    /// A describe Events table pasted after a `get events` table is read
    /// under its own header, not as lines of the table above it.
    #[test]
    fn a_describe_events_table_after_a_get_events_table_is_its_own() {
        let text = "\
LAST SEEN   TYPE      REASON    OBJECT      MESSAGE
5m          Warning   BackOff   pod/web-1   Back-off restarting failed container
Events:
  Type     Reason     Age   From               Message
  ----     ------     ----  ----               -------
  Normal   Scheduled  10m   default-scheduler  Successfully assigned shop/web-1 to node-1
";
        let p = parse(text);
        assert_eq!(p.events.len(), 2, "{p:?}");
        assert_eq!(p.events[0].message, "Back-off restarting failed container");
        assert_eq!(p.events[1].layout, "kubectl describe (1.10+)");
        assert_eq!(p.events[1].line, 6);
        assert_eq!(streamed(text), p);
    }

    #[test]
    fn text_that_is_neither_is_not_recognised() {
        let p = parse("hello\nName is not a header\n  LAST SEEN is here\n");
        assert!(!p.recognised);
        assert!(p.events.is_empty());
    }
}
