//! `kubectl get events` tables, in every column layout since 1.4 (see the
//! module above for which release printed which).

use super::age::parse_age;
use super::grid::Grid;
use super::{
    Parsed, TextEvent, cluster_scoped, kind_from_lower, message_cut, object_of_event_name,
    split_source,
};

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
pub(super) struct Table {
    grid: Grid,
    layout: &'static str,
    name_is: NameIs,
    message_last: bool,
    current: Option<TextEvent>,
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
        }
    }

    /// Reads the line numbered `line_no` (1-based): the row before it goes
    /// to `out` once this line shows it complete.
    pub(super) fn line(&mut self, line: &str, line_no: usize, out: &mut Parsed) {
        if line.trim().is_empty() {
            return;
        }
        let g = &self.grid;
        let row = g
            .cells(line)
            .and_then(|cells| row(g, &cells, self.layout, self.name_is, line_no));
        match row {
            Some(ev) => {
                if let Some(done) = self.current.replace(ev) {
                    out.events.push(done);
                }
            }
            // NB: older kubectl printed a message's line breaks as they were:
            // the rest of the message follows on lines of its own. Only when
            // MESSAGE is the last column can they be told for what they are.
            None => match self.current.as_mut() {
                Some(ev) if self.message_last => {
                    // NB: streamed, a table is not bounded by the size of
                    // what is read whole: lines past what is stored of a
                    // message (it is cut, and says so) are not kept.
                    if ev.message.len() <= crate::k8s::event::MAX_MESSAGE_BYTES {
                        ev.message.push('\n');
                        ev.message.push_str(line.trim_end());
                    }
                }
                _ => out.notes.push(format!(
                    "line {line_no}: not a row of the {} table above it; skipped",
                    self.layout
                )),
            },
        }
    }

    /// The table ends: its last row goes to `out`.
    pub(super) fn finish(self, out: &mut Parsed) {
        out.events.extend(self.current);
    }
}

fn row(
    g: &Grid,
    cells: &[String],
    layout: &'static str,
    name_is: NameIs,
    line: usize,
) -> Option<TextEvent> {
    let last = parse_age(cell(g, cells, &["LAST SEEN", "LASTSEEN"])?)?;
    let first = match cell(g, cells, &["FIRST SEEN", "FIRSTSEEN"]) {
        Some(text) => Some(parse_age(text)?),
        None => None,
    };
    let count = match cell(g, cells, &["COUNT"]) {
        Some(text) => Some(super::age::parse_count(text)?),
        None => None,
    };
    let type_ = cell(g, cells, &["TYPE"])?.to_string();
    let reason = cell(g, cells, &["REASON"])?.to_string();
    if reason.is_empty() || reason.contains(' ') || type_.contains(' ') {
        return None;
    }
    let message = cell(g, cells, &["MESSAGE"]).unwrap_or("").to_string();
    let (kind, name, event_name) = match cell(g, cells, &["OBJECT"]) {
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
    let kind = kind_from_lower(&kind).map_or(kind, str::to_string);
    let (source, host) = match cell(g, cells, &["SOURCE"]) {
        Some(s) => {
            let (c, h) = split_source(s);
            (Some(c), h)
        }
        None => (None, String::new()),
    };
    let event_namespace = cell(g, cells, &["NAMESPACE"]).unwrap_or("").to_string();
    Some(TextEvent {
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
    })
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
