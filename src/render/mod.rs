//! Rendering shared by commands: plain tables as kubectl prints them.

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
