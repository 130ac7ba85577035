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
