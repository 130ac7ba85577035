//! Rendering shared by commands: plain tables as kubectl prints them.

pub mod html;
pub mod timeline;

use std::io::Write;

/// Writes a borderless table (upper-case header, columns aligned, no
/// trailing spaces), the way `kubectl get` prints.
pub fn plain_table<H, R, C>(out: &mut dyn Write, header: H, rows: R) -> std::io::Result<()>
where
    H: IntoIterator,
    H::Item: Into<comfy_table::Cell>,
    R: IntoIterator,
    R::Item: IntoIterator<Item = C>,
    C: Into<comfy_table::Cell>,
{
    let mut table = comfy_table::Table::new();
    table
        .load_style(comfy_table::presets::NOTHING)
        .set_header(comfy_table::Row::from(header));
    for row in rows {
        table.add_row(comfy_table::Row::from(row));
    }
    for line in table.to_string().lines() {
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(())
}

/// Stored text made safe to print on a terminal: control characters become
/// visible escapes, so that an Event's message (written by anyone who may
/// create Events) cannot move the cursor, retitle the terminal or break a
/// table's lines.
///
/// Escaped: C0 controls (`\t`, `\n`, `\r` by name, the rest as `\x1b`), DEL
/// (`\x7f`), C1 controls U+0080–U+009F (`\u{9b}`), the line and paragraph
/// separators U+2028/U+2029, and the bidirectional formatting characters
/// (U+061C, U+200E/U+200F, U+202A–U+202E, U+2066–U+2069) that reorder what
/// follows them. Everything else is printed as is; a backslash is not doubled,
/// so a literal `\x1b` in the text reads the same as an escaped ESC.
pub fn escape(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(needs_escape) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x80 && needs_escape(c) => {
                use std::fmt::Write as _;
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if needs_escape(c) => {
                use std::fmt::Write as _;
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// A writer that escapes what [`escape`] does, but newlines and tabs: put
/// around stderr, so that no message quoting input (a kind from a file, a
/// cluster label, a path, a query's name) reaches the terminal raw (issue 27.8).
pub struct EscapeControls<W: Write> {
    inner: W,
    /// The start of a UTF-8 sequence the last write ended in the middle of.
    pending: Vec<u8>,
}

impl<W: Write> EscapeControls<W> {
    pub fn new(inner: W) -> Self {
        EscapeControls {
            inner,
            pending: Vec::new(),
        }
    }

    fn emit(&mut self, text: &str) -> std::io::Result<()> {
        if !text
            .chars()
            .any(|c| c != '\n' && c != '\t' && needs_escape(c))
        {
            return self.inner.write_all(text.as_bytes());
        }
        // NB: built whole and written once, as the plain text above is.
        let mut escaped = String::with_capacity(text.len() + 16);
        for line in text.split_inclusive('\n') {
            let (body, newline) = match line.strip_suffix('\n') {
                Some(body) => (body, "\n"),
                None => (line, ""),
            };
            for (i, part) in body.split('\t').enumerate() {
                if i > 0 {
                    escaped.push('\t');
                }
                escaped.push_str(&escape(part));
            }
            escaped.push_str(newline);
        }
        self.inner.write_all(escaped.as_bytes())
    }
}

impl<W: Write> Write for EscapeControls<W> {
    /// NB: one message, one write: the default writes each piece of the
    /// format on its own, and the recorder's watches log to the same stderr
    /// meanwhile, so a line came out cut in two by another (a CI run waited
    /// 30 s for a line that was there, split).
    fn write_fmt(&mut self, args: std::fmt::Arguments<'_>) -> std::io::Result<()> {
        if let Some(text) = args.as_str() {
            return self.write_all(text.as_bytes());
        }
        let mut text = String::new();
        // A Display that fails is an io error, as the default makes it, not a panic.
        std::fmt::Write::write_fmt(&mut text, args)
            .map_err(|_| std::io::Error::other("formatter error"))?;
        self.write_all(text.as_bytes())
    }

    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut bytes = std::mem::take(&mut self.pending);
        bytes.extend_from_slice(buf);
        let mut rest: &[u8] = &bytes;
        while !rest.is_empty() {
            match std::str::from_utf8(rest) {
                Ok(text) => {
                    self.emit(text)?;
                    rest = &[];
                }
                Err(e) => {
                    let (valid, after) = rest.split_at(e.valid_up_to());
                    // `valid` is exactly the prefix from_utf8 checked.
                    self.emit(std::str::from_utf8(valid).unwrap_or_default())?;
                    match e.error_len() {
                        // Not UTF-8: passed on as it is (no control byte is in it).
                        Some(n) => {
                            let (bad, tail) = after.split_at(n);
                            let bad: Vec<u8> = bad
                                .iter()
                                .flat_map(|&b| match b {
                                    0..0x20 | 0x7f => format!("\\x{b:02x}").into_bytes(),
                                    b => vec![b],
                                })
                                .collect();
                            self.inner.write_all(&bad)?;
                            rest = tail;
                        }
                        // A sequence cut by the end of this write: the next completes it.
                        None => {
                            self.pending = after.to_vec();
                            rest = &[];
                        }
                    }
                }
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if !self.pending.is_empty() {
            let pending = std::mem::take(&mut self.pending);
            self.inner.write_all(&pending)?;
        }
        self.inner.flush()
    }
}

fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{2028}'
                | '\u{2029}'
                | '\u{061c}'
                | '\u{200e}'
                | '\u{200f}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2066}'..='\u{2069}'
        )
}

/// Colour for a terminal: on only when the caller says so (stdout is a TTY
/// and `NO_COLOR` is unset), so rendered output stays testable.
#[derive(Debug, Clone, Copy, Default)]
pub struct Paint {
    pub on: bool,
}

impl Paint {
    /// Whether stdout deserves colour: a terminal, and no `NO_COLOR`.
    pub fn for_stdout() -> Paint {
        use std::io::IsTerminal;
        Paint {
            on: std::io::stdout().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        }
    }

    pub fn red(self, text: &str) -> String {
        use owo_colors::OwoColorize;
        if self.on {
            text.red().to_string()
        } else {
            text.to_string()
        }
    }

    pub fn yellow(self, text: &str) -> String {
        use owo_colors::OwoColorize;
        if self.on {
            text.yellow().to_string()
        } else {
            text.to_string()
        }
    }

    pub fn dim(self, text: &str) -> String {
        use owo_colors::OwoColorize;
        if self.on {
            text.dimmed().to_string()
        } else {
            text.to_string()
        }
    }

    pub fn bold(self, text: &str) -> String {
        use owo_colors::OwoColorize;
        if self.on {
            text.bold().to_string()
        } else {
            text.to_string()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts the writes it is handed.
    struct Writes(Vec<Vec<u8>>);

    impl Write for Writes {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.push(buf.to_vec());
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// Regression (record_crd_versions timed out in a full run): a line of
    /// the recorder's, written in pieces, was cut in two by a watch's log line.
    #[test]
    fn a_formatted_line_reaches_stderr_in_one_write() {
        let mut inner = EscapeControls::new(Writes(Vec::new()));
        {
            let mut err = EscapeControls::new(&mut inner);
            let (name, old) = ("gizmos.example.com", "example.com/v2");
            writeln!(
                err,
                "type {name}: {old} is no longer the version served first"
            )
            .unwrap();
        }
        assert_eq!(
            inner.inner.0,
            [
                b"type gizmos.example.com: example.com/v2 is no longer the version served first\n"
                    .to_vec()
            ]
        );
        // One that needs escaping too.
        let mut inner = EscapeControls::new(Writes(Vec::new()));
        let (kind, name) = ("a\u{1b}[2J", "b");
        writeln!(inner, "kind {kind}\tnamed {name}").unwrap();
        assert_eq!(inner.inner.0, [b"kind a\\x1b[2J\tnamed b\n".to_vec()]);
    }

    /// Issue 27.8: a kind read from a file cleared the screen and wrote an
    /// OSC 52 clipboard sequence through the error message.
    #[test]
    fn stderr_escapes_controls_but_keeps_newlines_and_tabs() {
        let mut out = Vec::new();
        {
            let mut w = EscapeControls::new(&mut out);
            writeln!(w, "error: kind \u{1b}[2J\u{1b}]52;c;SGVsbG8=\u{7}\tx").unwrap();
            // A C1 control cut between two writes.
            w.write_all(&[b'a', 0xc2]).unwrap();
            w.write_all(&[0x9b, b'b', b'\n']).unwrap();
            w.flush().unwrap();
        }
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            "error: kind \\x1b[2J\\x1b]52;c;SGVsbG8=\\x07\tx\na\\u{9b}b\n"
        );
        assert!(!text.contains('\u{1b}'));
    }

    #[test]
    fn escape_makes_terminal_controls_visible() {
        assert_eq!(
            escape("\u{1b}]0;x\u{7}\u{1b}[1A\r"),
            "\\x1b]0;x\\x07\\x1b[1A\\r"
        );
        assert_eq!(escape("a\tb\nc\u{7f}\u{0}"), "a\\tb\\nc\\x7f\\x00");
        assert_eq!(escape("\u{9b}31m\u{85}"), "\\u{9b}31m\\u{85}");
        assert_eq!(
            escape("x\u{2028}y\u{2029}\u{202e}txt.exe\u{2066}"),
            "x\\u{2028}y\\u{2029}\\u{202e}txt.exe\\u{2066}"
        );
        // Ordinary text, accents and emoji included, is borrowed untouched.
        let plain = "0/3 nodes are available: 3 Insufficient cpu. café ✓ 😀";
        assert!(matches!(escape(plain), std::borrow::Cow::Borrowed(_)));
        for c in (0u32..0x110000).filter_map(char::from_u32) {
            let e = escape(&c.to_string()).into_owned();
            assert!(
                !e.chars().any(|x| x.is_control()),
                "U+{:04X} left a control character: {e:?}",
                c as u32
            );
        }
    }
}
