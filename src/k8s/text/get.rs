//! `kubectl get events` tables, in every column layout since 1.4 (see the
//! module above for which release printed which), and `kubectl events`
//! (1.26+; `kubectl alpha events` in 1.23-1.25), whose header is that of
//! `get events` 1.14+: rows tell the two apart (see [`seen`]).

use super::age::{When, describe_age_bad_count, parse_age, parse_describe_age};
use super::grid::Grid;
use super::{
    Parsed, TextEvent, cluster_scoped, kind_from_lower, message_cut, object_of_event_name,
    split_source, stray,
};

/// The layout of rows [`seen`] says `kubectl events` printed.
pub(super) const KUBECTL_EVENTS: &str = "kubectl events (1.26+)";

/// Which release's printer made this header, and how its NAME column reads.
fn layout(g: &Grid) -> (&'static str, NameIs) {
    if g.has("OBJECT") {
        ("kubectl get events (1.14+)", NameIs::Event)
    } else if g.has("LAST SEEN") {
        ("kubectl get events (1.11-1.13)", NameIs::Event)
    } else if g.index("FIRSTSEEN") < g.index("LASTSEEN") {
        ("kubectl get events (1.7 and earlier)", NameIs::Object)
    } else {
        ("kubectl get events (1.8-1.10)", NameIs::Object)
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum NameIs {
    Event,
    Object,
}

fn cell<'a>(g: &Grid, cells: &'a [String], names: &[&str]) -> Option<&'a str> {
    names
        .iter()
        .find_map(|n| g.index(n))
        .and_then(|i| cells.get(i))
        .map(String::as_str)
}

/// What a `LAST SEEN` cell of the five-column layout says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Seen {
    pub last: When,
    pub count: Option<i64>,
    pub first: Option<When>,
    /// The row is `kubectl events`'s, not `get events`'s.
    pub events_command: bool,
    /// The text of a series' count that is not a number (`x1e3`): the row
    /// is still an Event, its count unknown.
    pub bad_count: Option<String>,
}

/// Reads the `LAST SEEN` cell of a row under `LAST SEEN TYPE REASON OBJECT
/// MESSAGE` (`-A`: NAMESPACE first), given the kind as OBJECT printed it.
///
/// NB: `kubectl get events` (1.14+) and `kubectl events`
/// (`pkg/cmd/events/events_printer.go`, which has no `-o wide`) print the
/// same header, and their rows differ: `get events` lower-cases the kind
/// (`pod/web-1`) and prints the last time seen; `kubectl events` prints the
/// Kind as it is (`Pod/web-1`) and, for an Event seen more than once,
/// `3m30s (x256 over 58m)` (last seen, count, first seen, as describe's
/// Age). Without the series its cell is when the Event was first seen, and
/// it was seen once (a count above 1 prints the series).
pub(super) fn seen(cell: &str, printed_kind: &str) -> Option<Seen> {
    let Some((last, count, first)) = parse_describe_age(cell) else {
        let (last, count) = describe_age_bad_count(cell)?;
        return Some(Seen {
            last,
            count: None,
            first: None,
            events_command: true,
            bad_count: Some(count),
        });
    };
    let events_command = count.is_some() || printed_kind.starts_with(|c: char| c.is_uppercase());
    Some(Seen {
        last,
        count: count.or(events_command.then_some(1)),
        first: first.or(events_command.then_some(last)),
        events_command,
        bad_count: None,
    })
}

/// Reads one table: `lines[0]` is its header, `offset` the header's 0-based line.
pub(super) fn parse_table(lines: &[&str], offset: usize, out: &mut Parsed) {
    let Some(header) = lines.first() else {
        return;
    };
    let mut table = Table::new(header);
    for (i, line) in lines.iter().enumerate().skip(1) {
        table.line(line, offset + i + 1, out);
    }
    table.finish(out);
}

/// One table read a row at a time: what is held between rows is the row
/// being read (older kubectl continues a message on lines of its own), so a
/// table of any length costs one row of memory.
///
/// NB: a table goes on past lines that are none of its rows: `get events
/// --watch` prints its header once and rows as they come, among whatever
/// else the terminal showed (another watch's `NAME   AGE`, a prompt).
/// Such lines are skipped, with a note unless they are plainly no table's
/// (JSON, kubectl's own remarks: `stray::foreign`), and never added to a row. A table ends only at the
/// next header, describe output, or a line that says it is over (a prompt,
/// a banner: `stray::ends_table`), where the caller stops giving it lines.
pub(super) struct Table {
    grid: Grid,
    layout: &'static str,
    name_is: NameIs,
    message_last: bool,
    current: Option<TextEvent>,
    /// The line before was the current row, or went on with its message.
    going_on: bool,
}

impl Table {
    /// The table under this header line.
    pub(super) fn new(header: &str) -> Table {
        let grid = Grid::from_header(header);
        let (layout, name_is) = layout(&grid);
        let message_last = grid.columns.last().is_some_and(|c| c.name == "MESSAGE");
        Table {
            grid,
            layout,
            name_is,
            message_last,
            current: None,
            going_on: false,
        }
    }

    /// Reads the line numbered `line_no` (1-based): the row before it goes
    /// to `out` once this line shows it complete.
    pub(super) fn line(&mut self, line: &str, line_no: usize, out: &mut Parsed) {
        if line.trim().is_empty() {
            // kubectl prints no blank line in a table: the text around it
            // does. A message does not go on past one.
            self.going_on = false;
            return;
        }
        if let Some(ev) = self.row(line, line_no, out) {
            if let Some(done) = self.current.replace(ev) {
                out.events.push(done);
            }
            self.going_on = true;
            return;
        }
        // NB: older kubectl printed a message's line breaks as they were:
        // the rest of the message follows on lines of its own. Only when
        // MESSAGE is the last column, and only for text that is not like a
        // row (see `stray`), can they be told for what they are.
        match self.current.as_mut() {
            Some(ev) if self.going_on && self.message_last && stray::may_continue(line) => {
                // NB: streamed, a table is not bounded by the size of
                // what is read whole: lines past what is stored of a
                // message (it is cut, and says so) are not kept.
                if ev.message.len() <= crate::k8s::event::MAX_MESSAGE_BYTES {
                    ev.message.push('\n');
                    ev.message.push_str(line.trim_end());
                }
            }
            _ => {
                self.going_on = false;
                if !stray::foreign(line) {
                    out.notes.push(format!(
                        "line {line_no}: not a row of the {} table above it; skipped",
                        self.layout
                    ));
                }
            }
        }
    }

    /// The row on this line, if it is one: the first reading of it (see
    /// [`Grid::readings`]) that the layout accepts.
    fn row(&self, line: &str, line_no: usize, out: &mut Parsed) -> Option<TextEvent> {
        let g = &self.grid;
        let (ev, bad_count) = g
            .readings(line, self.message_last)
            .find_map(|cells| row(g, &cells, self.layout, self.name_is, line_no))?;
        if let Some(count) = bad_count {
            out.notes.push(bad_count_note(line_no, &count));
        }
        Some(ev)
    }

    /// The table ends: its last row goes to `out`.
    pub(super) fn finish(self, out: &mut Parsed) {
        out.events.extend(self.current);
    }
}

/// What is said of a row whose series count is not a number.
pub(super) fn bad_count_note(line_no: usize, count: &str) -> String {
    format!(
        "line {line_no}: count x{} is not a number: stored as one occurrence, its last",
        crate::render::escape(count)
    )
}

/// One row from its cells, with the text of a series count that is not a
/// number; `None` when the cells are not what the layout prints.
fn row(
    g: &Grid,
    cells: &[String],
    layout: &'static str,
    name_is: NameIs,
    line: usize,
) -> Option<(TextEvent, Option<String>)> {
    let last_seen = cell(g, cells, &["LAST SEEN", "LASTSEEN"])?;
    let type_ = cell(g, cells, &["TYPE"])?.to_string();
    let reason = cell(g, cells, &["REASON"])?.to_string();
    if reason.is_empty() || reason.contains(' ') || type_.contains(' ') {
        return None;
    }
    let message = cell(g, cells, &["MESSAGE"]).unwrap_or("").to_string();
    let object = cell(g, cells, &["OBJECT"]);
    if object.is_some_and(|o| o.is_empty() || o.contains(' ')) {
        return None;
    }
    let (kind, name, event_name) = match object {
        Some(object) => {
            let (kind, name) = object.split_once('/').unwrap_or((object, ""));
            let event_name = cell(g, cells, &["NAME"]).unwrap_or("").to_string();
            (kind.to_string(), name.to_string(), event_name)
        }
        None => {
            let kind = cell(g, cells, &["KIND"]).unwrap_or("").to_string();
            let name = cell(g, cells, &["NAME"]).unwrap_or("").to_string();
            match name_is {
                NameIs::Object => (kind, name, String::new()),
                // NB: 1.11–1.13 show the Event's name, not the object's: the
                // object is read off client-go's `<object>.<hex>` naming.
                NameIs::Event => (
                    kind,
                    object_of_event_name(&name).unwrap_or(&name).to_string(),
                    name,
                ),
            }
        }
    };
    // The five columns (`-A`: six) are `get events`' or `kubectl events`'.
    let (last, mut count, mut first, layout, bad_count) =
        if object.is_some() && !g.has("COUNT") && !g.has("FIRST SEEN") {
            let s = seen(last_seen, &kind)?;
            let layout = if s.events_command {
                KUBECTL_EVENTS
            } else {
                layout
            };
            (s.last, s.count, s.first, layout, s.bad_count)
        } else {
            (parse_age(last_seen)?, None, None, layout, None)
        };
    if let Some(text) = cell(g, cells, &["FIRST SEEN", "FIRSTSEEN"]) {
        first = Some(parse_age(text)?);
    }
    if let Some(text) = cell(g, cells, &["COUNT"]) {
        count = Some(super::age::parse_count(text)?);
    }
    let kind = kind_from_lower(&kind).map_or(kind, str::to_string);
    let (source, host) = match cell(g, cells, &["SOURCE"]) {
        Some(s) => {
            let (c, h) = split_source(s);
            (Some(c), h)
        }
        None => (None, String::new()),
    };
    let event_namespace = cell(g, cells, &["NAMESPACE"]).unwrap_or("").to_string();
    let ev = TextEvent {
        line,
        layout,
        namespace: if cluster_scoped(&kind) {
            String::new()
        } else {
            event_namespace.clone()
        },
        event_namespace,
        kind,
        name,
        field_path: cell(g, cells, &["SUBOBJECT"]).unwrap_or("").to_string(),
        event_name,
        uid: String::new(),
        object_uid: String::new(),
        api_version: String::new(),
        type_,
        reason,
        truncated: message_cut(&message),
        message,
        source,
        host,
        count,
        first,
        last,
    };
    Some((ev, bad_count))
}

#[cfg(test)]
mod tests {
    use super::super::parse;
    use super::*;

    #[test]
    fn default_layout_of_today() {
        let text = "\
LAST SEEN   TYPE      REASON             OBJECT        MESSAGE
2m12s       Warning   FailedScheduling   pod/too-big   0/1 nodes are available: 1 Insufficient cpu.
5m          Normal    Scheduled          pod/web-1     Successfully assigned x/web-1 to n
";
        let p = parse(text);
        assert!(p.recognised);
        assert_eq!(p.events.len(), 2, "{p:?}");
        let e = &p.events[0];
        assert_eq!(
            (e.kind.as_str(), e.name.as_str(), e.reason.as_str()),
            ("Pod", "too-big", "FailedScheduling")
        );
        assert_eq!(e.message, "0/1 nodes are available: 1 Insufficient cpu.");
        assert_eq!((e.count, e.first, e.source.as_deref()), (None, None, None));
        assert_eq!(e.last, parse_age("2m12s").unwrap());
        assert_eq!(e.line, 2);
        assert_eq!(p.events[1].line, 3);
    }

    /// Regression: `kubectl events` (1.26+) prints LAST SEEN as
    /// `3m30s (x256 over 58m)` for an Event seen more than once; that was no
    /// age, so such rows were read as the message of the row above going on
    /// and a whole table imported as ONE Event.
    #[test]
    fn kubectl_events_rows_with_a_series_are_each_an_event() {
        let table = super::super::tabwrite(
            &[
                &["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"],
                &[
                    "58m",
                    "Normal",
                    "Scheduled",
                    "Pod/web-7d4b9c5f8-abcde",
                    "Successfully assigned shop/web-7d4b9c5f8-abcde to kwok-1",
                ],
                &[
                    "3m30s (x256 over 58m)",
                    "Warning",
                    "BackOff",
                    "Pod/web-7d4b9c5f8-abcde",
                    "Back-off restarting failed container web in pod web-7d4b9c5f8-abcde_shop",
                ],
                &[
                    "52s",
                    "Normal",
                    "ScalingReplicaSet",
                    "Deployment/web",
                    "Scaled up replica set web-7d4b9c5f8 to 3",
                ],
                &[
                    "<unknown>",
                    "Warning",
                    "NodeNotReady",
                    "Node/kwok-1",
                    "Node kwok-1 status is now: NodeNotReady",
                ],
                &[
                    "10s (x2 over 20s)",
                    "Warning",
                    "Unhealthy",
                    "Pod/web-7d4b9c5f8-abcde",
                    "Liveness probe failed: command timed out:",
                ],
            ],
            3,
        );
        // kubectl events prints a message's line breaks as they are.
        let text = format!(
            "=== shop, taken 10:02 ===\n$ kubectl events -n shop\n{table}exit status 137\n"
        );
        let p = parse(&text);
        assert!(p.recognised);
        assert!(p.notes.is_empty(), "{:?}", p.notes);
        assert_eq!(p.events.len(), 5, "{p:?}");
        let lines: Vec<usize> = p.events.iter().map(|e| e.line).collect();
        assert_eq!(lines, [4, 5, 6, 7, 8]);
        assert!(p.events.iter().all(|e| e.layout == KUBECTL_EVENTS), "{p:?}");

        let e = &p.events[1];
        assert_eq!(
            (e.kind.as_str(), e.name.as_str(), e.reason.as_str()),
            ("Pod", "web-7d4b9c5f8-abcde", "BackOff")
        );
        assert_eq!(e.count, Some(256));
        assert_eq!(e.first, parse_age("58m"));
        assert_eq!(e.last, parse_age("3m30s").unwrap());
        assert_eq!(
            e.message,
            "Back-off restarting failed container web in pod web-7d4b9c5f8-abcde_shop"
        );
        // Without a series: seen once, when the cell says.
        let e = &p.events[0];
        assert_eq!((e.count, e.first), (Some(1), Some(e.last)));
        assert_eq!(e.last, parse_age("58m").unwrap());
        let e = &p.events[2];
        assert_eq!((e.kind.as_str(), e.name.as_str()), ("Deployment", "web"));
        let e = &p.events[3];
        assert_eq!((e.kind.as_str(), e.namespace.as_str()), ("Node", ""));
        assert_eq!(e.last, When::Unknown);
        let e = &p.events[4];
        assert_eq!(e.count, Some(2));
        assert_eq!(
            e.message,
            "Liveness probe failed: command timed out:\nexit status 137"
        );
    }

    #[test]
    fn kubectl_events_with_all_namespaces() {
        let text = super::super::tabwrite(
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
                    "3m30s (x256 over 58m)",
                    "Warning",
                    "BackOff",
                    "Pod/web-7d4b9c5f8-abcde",
                    "Back-off restarting failed container",
                ],
                &[
                    "default",
                    "2m",
                    "Normal",
                    "RegisteredNode",
                    "Node/kwok-1",
                    "Node kwok-1 event: Registered Node kwok-1 in Controller",
                ],
            ],
            3,
        );
        let p = parse(&text);
        assert_eq!(p.events.len(), 2, "{p:?}");
        let e = &p.events[0];
        assert_eq!(
            (e.event_namespace.as_str(), e.namespace.as_str()),
            ("shop", "shop")
        );
        assert_eq!((e.count, e.first), (Some(256), parse_age("58m")));
        let e = &p.events[1];
        assert_eq!(
            (e.event_namespace.as_str(), e.namespace.as_str()),
            ("default", "")
        );
        assert_eq!(e.layout, KUBECTL_EVENTS);
    }

    /// `get events` prints the kind lower-cased and never a series: its
    /// rows are read as before, the count and first seen not shown.
    #[test]
    fn get_events_rows_are_not_taken_for_kubectl_events() {
        assert_eq!(
            seen("5m", "pod").map(|s| (s.count, s.first, s.events_command)),
            Some((None, None, false))
        );
        assert_eq!(
            seen("5m", "Pod").map(|s| (s.count, s.events_command)),
            Some((Some(1), true))
        );
        let s = seen("90s (x1e3 over 7m)", "Pod").unwrap();
        assert_eq!((s.count, s.bad_count.as_deref()), (None, Some("1e3")));
        assert_eq!(seen("Normal", "Pod"), None);
    }

    /// Regression: `get events --watch` prints its header once and then
    /// rows as they come, each aligned on its own; a watch of something else
    /// in the same terminal adds `NAME   AGE` and `web-1   5s`. Those were
    /// added to the last Event's message (and the rows after them too).
    #[test]
    fn watch_rows_and_stray_lines_of_another_watch_are_never_glued() {
        let text = "\
LAST SEEN   TYPE      REASON      OBJECT      MESSAGE
5m          Normal    Scheduled   pod/web-1   Successfully assigned shop/web-1 to node-1
0s   Warning   BackOff   pod/web-1   Back-off restarting failed container
NAME    AGE
web-1   5s
0s   Normal   Pulled   pod/web-1   Container image \"web:1\"  already present on machine
web-1   0/1   CrashLoopBackOff   3   5s
";
        let p = parse(text);
        assert_eq!(p.events.len(), 3, "{p:?}");
        assert_eq!(
            p.events[0].message,
            "Successfully assigned shop/web-1 to node-1"
        );
        assert_eq!(p.events[1].message, "Back-off restarting failed container");
        assert_eq!(p.events[1].line, 3);
        // A message with two spaces in it, off the grid, is still whole.
        assert_eq!(
            p.events[2].message,
            "Container image \"web:1\"  already present on machine"
        );
        assert_eq!(p.events[2].line, 6);
        assert_eq!(
            p.notes,
            [4, 5, 7].map(|n| format!(
                "line {n}: not a row of the kubectl get events (1.14+) table above it; skipped"
            ))
        );
    }

    /// A blank line, or a line that says the text moved on, ends a message:
    /// what follows is never added to it.
    #[test]
    fn a_message_goes_on_only_right_under_its_row() {
        let text = "\
LASTSEEN   FIRSTSEEN   COUNT     NAME      KIND      SUBOBJECT   TYPE      REASON    SOURCE             MESSAGE
1m         5m          3         web-1     Pod                   Warning   Failed    kubelet, node-1    first line
second line
{
  \"kind\": \"Event\"
}
1m         1m          1         web-1     Pod                   Normal    Pulled    kubelet, node-1    ok

Hope this helps.
";
        let p = parse(text);
        assert_eq!(p.events.len(), 2, "{p:?}");
        assert_eq!(p.events[0].message, "first line\nsecond line");
        assert_eq!(p.events[1].message, "ok");
        assert_eq!(
            p.notes,
            ["line 9: not a row of the kubectl get events (1.8-1.10) table above it; skipped"]
        );
    }

    #[test]
    fn a_cut_message_is_marked() {
        let text = "\
LAST SEEN   TYPE      REASON      OBJECT      MESSAGE
10s         Warning   Unhealthy   pod/web-1   Readiness probe failed: line one...
";
        let p = parse(text);
        assert!(p.events[0].truncated);
        assert_eq!(p.events[0].message, "Readiness probe failed: line one...");
    }

    #[test]
    fn continuation_lines_of_an_old_multi_line_message() {
        let text = "\
LASTSEEN   FIRSTSEEN   COUNT     NAME      KIND      SUBOBJECT   TYPE      REASON    SOURCE             MESSAGE
1m         5m          3         web-1     Pod                   Warning   Failed    kubelet, node-1    first line
second line
1m         1m          1         web-1     Pod                   Normal    Pulled    kubelet, node-1    ok
";
        let p = parse(text);
        assert_eq!(p.events.len(), 2, "{p:?}");
        assert_eq!(p.events[0].message, "first line\nsecond line");
        assert_eq!(p.events[0].source.as_deref(), Some("kubelet"));
        assert_eq!(p.events[0].host, "node-1");
        assert_eq!(p.events[0].count, Some(3));
        assert_eq!(p.events[1].reason, "Pulled");
    }
}
