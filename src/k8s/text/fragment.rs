//! The parts of kubectl's text that people paste alone, the part that looked
//! relevant: an `Events:` table with no `Name:` above it, rows of
//! `kubectl get events` without their header row, and tab-separated rows of
//! a 1.6-era `describe` Events table without its header.
//!
//! Rows without a header are read by their shape, never guessed: a row is
//! taken only when every cell the layout has is what that layout prints
//! there (an age, `Normal`/`Warning`, a `kind/name`, a count, a source).
//! Their object (for the describe shapes) is not in the text: it is empty
//! here, and `import --object KIND/NAME` says whose they are.

use super::get::{self, seen};
use super::grid::split_wide;
use super::{Parsed, TextEvent, cluster_scoped, describe, kind_from_lower, message_cut};

/// Whether `line` is the header of a describe Events table (either layout),
/// at any indentation.
pub(super) fn is_events_header(line: &str) -> bool {
    let names: Vec<String> = split_wide(line.trim())
        .into_iter()
        .map(|(_, n)| n)
        .collect();
    let has = |n: &str| names.iter().any(|x| x == n);
    (has("Type") && has("Reason") && has("Age") && has("Message"))
        || (has("FirstSeen") && has("LastSeen") && has("Reason") && has("Message"))
}

/// The layout of one header-less `get events` row (1.14 and later) or
/// `kubectl events --no-headers` row: its cells, and whether a NAMESPACE
/// column leads (`-A`).
fn get_row(line: &str) -> Option<(Vec<String>, bool)> {
    let cells: Vec<String> = split_wide(line).into_iter().map(|(_, c)| c).collect();
    let typed = |i: usize| {
        cells
            .get(i)
            .is_some_and(|c| c == "Normal" || c == "Warning")
    };
    let object = |i: usize| {
        cells
            .get(i)
            .and_then(|c| c.split_once('/'))
            .filter(|(k, n)| !k.is_empty() && !n.is_empty() && !k.contains(' '))
    };
    for (namespaced, at) in [(false, 0), (true, 1)] {
        if cells.len() >= at + 4
            && typed(at + 1)
            && !cells[at + 2].contains(' ')
            && object(at + 3).is_some_and(|(kind, _)| seen(&cells[at], kind).is_some())
        {
            return Some((cells, namespaced));
        }
    }
    None
}

/// One header-less `get events` (or `kubectl events`) row as an Event, with
/// the text of a series count that is not a number.
fn get_event(
    cells: &[String],
    namespaced: bool,
    line: usize,
) -> Option<(TextEvent, Option<String>)> {
    let at = usize::from(namespaced);
    let (printed_kind, name) = cells[at + 3].split_once('/')?;
    let when = seen(&cells[at], printed_kind)?;
    let kind =
        kind_from_lower(printed_kind).map_or_else(|| printed_kind.to_string(), str::to_string);
    let message = cells[at + 4..].join("  ");
    let event_namespace = if namespaced {
        cells[0].clone()
    } else {
        String::new()
    };
    let e = TextEvent {
        line,
        layout: if when.events_command {
            "kubectl events (1.26+) rows without a header"
        } else {
            "kubectl get events (1.14+) rows without a header"
        },
        namespace: if cluster_scoped(&kind) {
            String::new()
        } else {
            event_namespace.clone()
        },
        event_namespace,
        kind,
        name: name.to_string(),
        type_: cells[at + 1].clone(),
        reason: cells[at + 2].clone(),
        truncated: message_cut(&message),
        message,
        count: when.count,
        first: when.first,
        last: when.last,
        ..TextEvent::default()
    };
    Some((e, when.bad_count))
}

/// One tab-separated row of a 1.6-era describe Events table:
/// `FirstSeen LastSeen Count From SubObjectPath Type Reason Message`, the
/// separators single tabs (as copied from a file) or runs of them (as the
/// terminal's tab stops left them, an empty SubObjectPath then vanishing).
fn tab_event(line: &str, number: usize) -> Option<TextEvent> {
    if !line.contains('\t') {
        return None;
    }
    let cells = describe::tab_cells(line)?;
    let mut e = describe::old_row(
        &cells,
        number,
        "kubectl describe (1.6-1.9) rows without a header",
    )?;
    e.truncated = message_cut(&e.message);
    Some(e)
}

/// Reads header-less rows from `lines` (`offset` the 0-based line of the
/// first in the file) into `out`: how many lines were rows (0 when the first
/// is none). Rows end at the first line that is none.
pub(super) fn rows(lines: &[&str], offset: usize, out: &mut Parsed) -> usize {
    let Some(first) = lines.first() else {
        return 0;
    };
    let mut taken = 0;
    if let Some((_, namespaced)) = get_row(first) {
        for (i, line) in lines.iter().enumerate() {
            let Some((e, bad_count)) = get_row(line)
                .filter(|(_, ns)| *ns == namespaced)
                .and_then(|(cells, ns)| get_event(&cells, ns, offset + i + 1))
            else {
                break;
            };
            if let Some(count) = bad_count {
                out.notes.push(get::bad_count_note(e.line, &count));
            }
            out.events.push(e);
            taken += 1;
        }
    } else if tab_event(first, 0).is_some() {
        for (i, line) in lines.iter().enumerate() {
            let Some(e) = tab_event(line, offset + i + 1) else {
                break;
            };
            out.events.push(e);
            taken += 1;
        }
        if taken > 0 {
            out.notes.push(format!(
                "line {}: {taken} row(s) of a describe Events table without the object they \
                 are about: pass --object KIND/NAME to say whose (else stored with no object)",
                offset + 1
            ));
        }
    }
    taken
}

#[cfg(test)]
mod tests {
    use super::super::age::parse_age;
    use super::*;

    #[test]
    fn get_rows_with_and_without_a_namespace() {
        let mut p = Parsed::default();
        let text = "2m14s   Normal    ScalingReplicaSet   deployment/web   Scaled up replica set web-7d9c6b5f4 to 1\n\
                    15s     Warning   BackOff             pod/web-1        Back-off restarting failed container\n\
                    not a row\n";
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(rows(&lines, 10, &mut p), 2);
        assert_eq!(p.events[1].kind, "Pod");
        assert_eq!(
            (p.events[1].line, p.events[1].reason.as_str()),
            (12, "BackOff")
        );
        let mut p = Parsed::default();
        assert_eq!(
            rows(
                &["shop   5m   Warning   FailedMount   pod/db-0   MountVolume.SetUp failed"],
                0,
                &mut p
            ),
            1
        );
        assert_eq!(
            (p.events[0].namespace.as_str(), p.events[0].name.as_str()),
            ("shop", "db-0")
        );
    }

    /// `kubectl events --no-headers`: its series cell (`3m30s (x256 over
    /// 58m)`) was no age, so its rows were no rows.
    #[test]
    fn kubectl_events_rows_without_a_header() {
        let mut p = Parsed::default();
        let lines = [
            "3m30s (x256 over 58m)   Warning   BackOff     Pod/web-1   Back-off restarting failed container",
            "52s                     Normal    Scheduled   Pod/web-2   Successfully assigned shop/web-2 to kwok-1",
        ];
        assert_eq!(rows(&lines, 0, &mut p), 2);
        let e = &p.events[0];
        assert_eq!((e.kind.as_str(), e.name.as_str()), ("Pod", "web-1"));
        assert_eq!((e.count, e.first), (Some(256), parse_age("58m")));
        assert_eq!(e.last, parse_age("3m30s").unwrap());
        assert_eq!(e.layout, "kubectl events (1.26+) rows without a header");
        assert_eq!(p.events[1].count, Some(1));
    }

    #[test]
    fn tab_rows_single_or_in_runs() {
        for line in [
            "  2m\t2m\t1\t{default-scheduler }\t\tNormal\tScheduled\tSuccessfully assigned web to node-1",
            "  2m\t\t2m\t\t1\t{default-scheduler }\t\t\t\tNormal\t\tScheduled\tSuccessfully assigned web to node-1",
            "  1m\t15s\t4\t{kubelet node-1}\tspec.containers{web}\tWarning\tBackOff\tBack-off restarting failed container",
        ] {
            let e = tab_event(line, 1).unwrap_or_else(|| panic!("{line:?}"));
            assert!(e.source.as_deref().is_some_and(|s| !s.is_empty()), "{e:?}");
            assert!(e.count.is_some());
        }
        let e = tab_event(
            "  1m\t15s\t4\t{kubelet node-1}\tspec.containers{web}\tWarning\tBackOff\tBack-off",
            1,
        )
        .unwrap();
        assert_eq!(
            (e.field_path.as_str(), e.host.as_str(), e.count),
            ("spec.containers{web}", "node-1", Some(4))
        );
        assert!(tab_event("a\tb\tc", 1).is_none());
    }

    #[test]
    fn prose_is_no_row() {
        let mut p = Parsed::default();
        assert_eq!(rows(&["the pod is broken, see below"], 0, &mut p), 0);
        assert_eq!(rows(&["5m  Normal  is what we saw  ok"], 0, &mut p), 0);
    }
}
