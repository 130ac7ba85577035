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
