//! Columns of text laid out by Go's `text/tabwriter`, as kubectl prints its
//! tables: each cell padded to its column's width plus a fixed padding (3
//! spaces for `kubectl get`, 2 for `kubectl describe`).
//!
//! NB: tabwriter measures cells in runes, so offsets here count chars, not bytes.
//! NB: a line without tabs (a message's continuation line) ends tabwriter's
//! column block: the rows after it are aligned afresh, and no longer under the
//! header. Such rows are split on runs of spaces instead (see [`Grid::cells`]).

/// One column: its name and the char offset it starts at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    pub name: String,
    pub start: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grid {
    pub columns: Vec<Column>,
}

/// Splits `line` at runs of two or more spaces: (char offset, text) of each part.
pub fn split_wide(line: &str) -> Vec<(usize, String)> {
    let chars: Vec<char> = line.chars().collect();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        while i < chars.len() && chars[i] == ' ' {
            i += 1;
        }
        if i >= chars.len() {
            break;
        }
        let start = i;
        let mut end = i;
        while i < chars.len() {
            if chars[i] == ' ' && chars.get(i + 1) == Some(&' ') {
                break;
            }
            i += 1;
            if chars[i - 1] != ' ' {
                end = i;
            }
        }
        parts.push((start, chars[start..end].iter().collect()));
    }
    parts
}

impl Grid {
    /// The columns of a header line (`LAST SEEN   TYPE   REASON …`).
    pub fn from_header(line: &str) -> Grid {
        Grid {
            columns: split_wide(line)
                .into_iter()
                .map(|(start, name)| Column { name, start })
                .collect(),
        }
    }

    pub fn index(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }

    pub fn has(&self, name: &str) -> bool {
        self.index(name).is_some()
    }

    /// The cells of a row laid out under this header, trimmed; `None` when the
    /// line does not sit on the header's grid (two spaces before every column
    /// that has text, nothing but spaces before the first).
    pub fn aligned(&self, line: &str) -> Option<Vec<String>> {
        let chars: Vec<char> = line.trim_end().chars().collect();
        let first = self.columns.first()?.start;
        if chars.len() <= first || chars[..first].iter().any(|c| *c != ' ') || chars[first] == ' ' {
            return None;
        }
        let mut cells = Vec::with_capacity(self.columns.len());
        for (i, col) in self.columns.iter().enumerate() {
            let end = self
                .columns
                .get(i + 1)
                .map_or(chars.len(), |next| next.start.min(chars.len()));
            if col.start >= chars.len() {
                cells.push(String::new());
                continue;
            }
            if i > 0
                && (col.start < 2 || chars[col.start - 1] != ' ' || chars[col.start - 2] != ' ')
            {
                return None;
            }
            let cell: String = chars[col.start..end.max(col.start)].iter().collect();
            cells.push(cell.trim().to_string());
        }
        Some(cells)
    }

    /// The cells of a row: on the header's grid, else (a row tabwriter aligned
    /// afresh) split at runs of spaces when that gives one part per column.
    pub fn cells(&self, line: &str) -> Option<Vec<String>> {
        self.aligned(line).or_else(|| {
            let parts = split_wide(line);
            (parts.len() == self.columns.len()).then(|| parts.into_iter().map(|p| p.1).collect())
        })
    }

    /// Every way a row may be read under this header, likeliest first, for
    /// the caller to take the first its layout accepts: on the header's
    /// grid; then split at runs of spaces, one part per column, or (when the
    /// last column is free text, `rest_last`) with everything from the last
    /// column's part on in it, as printed.
    ///
    /// NB: a row off the grid can still pass [`Grid::aligned`]'s test (two
    /// spaces before each column's start) with its cells cut in the wrong
    /// places: rows pasted with their padding squeezed, or a `--watch` row
    /// tabwriter aligned on its own, narrower than the header. Only the
    /// layout can tell such cells for what they are.
    pub fn readings<'a>(
        &'a self,
        line: &'a str,
        rest_last: bool,
    ) -> impl Iterator<Item = Vec<String>> + 'a {
        let aligned = self.aligned(line);
        // Split only when the grid's reading is not taken.
        let split = std::iter::once_with(move || self.split(line, rest_last)).flatten();
        aligned.into_iter().chain(split)
    }

    /// A row split at runs of spaces: one part per column, or (`rest_last`)
    /// everything from the last column's part on in it.
    fn split(&self, line: &str, rest_last: bool) -> Option<Vec<String>> {
        let n = self.columns.len();
        let parts = split_wide(line);
        if parts.len() == n {
            Some(parts.into_iter().map(|p| p.1).collect())
        } else if rest_last && n > 0 && parts.len() > n {
            let rest: String = line.chars().skip(parts[n - 1].0).collect();
            let mut cells: Vec<String> = parts.into_iter().take(n - 1).map(|p| p.1).collect();
            cells.push(rest.trim_end().to_string());
            Some(cells)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_columns_keep_names_with_one_space() {
        let g = Grid::from_header("LAST SEEN   TYPE      REASON   OBJECT    MESSAGE");
        let names: Vec<_> = g.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]);
        assert_eq!(g.columns[1].start, 12);
    }

    #[test]
    fn rows_on_the_grid_and_off_it() {
        let g = Grid::from_header("  Type     Reason  Age   From     Message");
        assert_eq!(
            g.aligned("  Warning  Failed  5m    kubelet  it  failed")
                .unwrap(),
            ["Warning", "Failed", "5m", "kubelet", "it  failed"]
        );
        // An empty cell keeps its place.
        assert_eq!(
            g.aligned("  Normal   Pulled  5m             pulled")
                .unwrap(),
            ["Normal", "Pulled", "5m", "", "pulled"]
        );
        assert_eq!(g.aligned("continued text of a message"), None);
        // A block tabwriter aligned afresh after a continuation line.
        assert_eq!(
            g.cells("  Normal  Pulled  5m  kubelet  ok").unwrap(),
            ["Normal", "Pulled", "5m", "kubelet", "ok"]
        );
    }

    /// Regression: a row whose padding does not match the header's (a
    /// `--watch` row, aligned on its own) passed the grid test with its
    /// cells cut in the wrong places, and no other reading was tried.
    #[test]
    fn a_row_off_the_grid_is_also_read_split() {
        let g = Grid::from_header("LAST SEEN   TYPE      REASON    OBJECT      MESSAGE");
        // Two spaces before every column's start, and yet its cells are cut
        // in the wrong places.
        let line = "5m  Normal  BackOff   pod/web   Back-off    again";
        let r: Vec<_> = g.readings(line, true).collect();
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(r[0][0], "5m  Normal");
        assert_eq!(
            r[1],
            ["5m", "Normal", "BackOff", "pod/web", "Back-off    again"]
        );
        // Without a free last column, only one part per column is a reading.
        assert_eq!(g.readings(line, false).count(), 1);
        assert_eq!(
            g.readings("0s   Warning   BackOff   pod/web-1   ok", false)
                .collect::<Vec<_>>(),
            [["0s", "Warning", "BackOff", "pod/web-1", "ok"]]
        );
    }

    #[test]
    fn offsets_count_chars() {
        let g = Grid::from_header("A     B");
        assert_eq!(g.aligned("é     x").unwrap(), ["é", "x"]);
    }
}
