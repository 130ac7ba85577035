//! kubectl-diag: keep what Kubernetes forgets.
//!
//! The stages, one folder each, from the ground up. A module uses only the
//! floors below its own ([`FLOORS`]; a unit test reads every `crate::` path
//! under `src/` and fails on an arrow that runs up or sideways):
//! - the ground: [`units`], [`quantity`], [`paths`], [`exit`], [`build_info`]
//!   (words and numbers as users type them), then [`specdiff`].
//! - [`model`]: what we know, whatever the source: occurrences, object
//!   versions with writer and provenance, relations, gaps, the kinds table.
//! - [`checks`] and [`changes`], then [`timeline`]: pure functions over plain data.
//! - [`render`] and [`metrics`]: output shared by commands, and what Prometheus scrapes.
//! - the edges, which fill the pure core's plain types: [`k8s`] (the only code
//!   that speaks Kubernetes), [`store`] (the SQLite recording; every statement
//!   lives in `queries/`), then [`ship`] (stores a fleet already runs).
//! - [`commands`]: what each subcommand does, rendering into a `Write`, from
//!   options already resolved (no clap struct reaches them); beside them
//!   [`record`], which watches the cluster and feeds the store (and runs the
//!   checks and the shippers inside it).
//! - [`cli`]: kubectl's flags and the subcommands' arguments, resolved once
//!   into the commands' options and the history they read (`Cli::resolve`).
//! - this file: [`run`] dispatches a parsed command line; nothing below calls
//!   back up to it (`mcp` is handed it as a `Dispatch`).

// NB: here, not in main.rs, so that the benchmarks and tests run on the
// allocator the binary ships with.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

pub mod build_info;
pub mod changes;
pub mod checks;
pub mod cli;
pub mod commands;
pub mod exit;
pub mod k8s;
pub mod metrics;
pub mod model;
pub mod paths;
pub mod quantity;
pub mod record;
pub mod render;
pub mod ship;
pub mod specdiff;
pub mod store;
pub mod timeline;
pub mod units;

use std::io::Write;

use cli::{Cli, Invocation};

/// The floors of [`crate`]'s modules, ground first: a module may use any
/// module of a lower floor, none of its own floor or above.
pub const FLOORS: &[&[&str]] = &[
    &["units", "quantity", "paths", "exit", "build_info"],
    &["specdiff"],
    &["model"],
    &["changes", "checks"],
    &["timeline"],
    &["render", "metrics"],
    &["k8s", "store"],
    &["ship"],
    &["commands", "record"],
    &["cli"],
];

/// Runs one command line parsed by [`Cli::parse_args`]; returns the process exit code.
///
/// Output goes to `out`, progress and warnings to `err`, so every command can
/// be driven from a test with two `Vec<u8>`.
pub fn run(cli: Cli, out: &mut dyn Write, err: &mut dyn Write) -> anyhow::Result<u8> {
    let mut err = render::EscapeControls::new(err);
    let code = dispatch(cli, out, &mut err);
    let _ = err.flush();
    code
}

fn dispatch(cli: Cli, out: &mut dyn Write, err: &mut dyn Write) -> anyhow::Result<u8> {
    // NB: resolved once for every command; with `--store` the history is the
    // pulled copy, removed when this returns.
    let cli::Resolved {
        history,
        invocation,
    } = cli.resolve()?;
    let paint = render::Paint::for_stdout();
    match invocation {
        Invocation::Ship(o) => commands::ship::run(&history, &o, out, err),
        Invocation::Record(o) => record::run(*o, err),
        Invocation::Export(o) => commands::export::run(&history, &o, out),
        Invocation::Timeline(o) => commands::timeline::run(&history, &o, out, err, paint),
        Invocation::Changes(o) => commands::changes::run(&history, &o, out, paint),
        Invocation::Check(o) => commands::check::run(&history, &o, out, err, paint),
        Invocation::Query(o) => commands::query::run(&history, &o, out, err),
        Invocation::Sql(o) => commands::sql::run(&history, &o, out),
        Invocation::Completion(shell) => {
            let mut cmd = <Cli as clap::CommandFactory>::command();
            // NB: clap_complete panics when its writer fails (a closed pipe), so the
            // script is built in memory and written here, where errors are handled.
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut cmd, "kubectl-diag", &mut script);
            out.write_all(&script)?;
            Ok(exit::OK)
        }
        Invocation::Import(o) => commands::import::run(&history, &o, out, err),
        // NB: stdin and stdout are the protocol's; `out` is not used.
        Invocation::Mcp(o) => commands::mcp::run(&history, &o, run_args, err),
    }
}

/// Runs one command line (`argv[0]` first) as [`run`] does; Err is a line
/// that does not parse, in clap's words (`mcp`'s tools run through this).
pub fn run_args(
    argv: Vec<String>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<anyhow::Result<u8>, String> {
    let cli = Cli::try_parse_args_from(argv).map_err(|e| e.to_string())?;
    Ok(run(cli, out, err))
}

#[cfg(test)]
mod floors_tests {
    use super::FLOORS;

    fn floor(module: &str) -> Option<usize> {
        FLOORS.iter().position(|f| f.contains(&module))
    }

    /// The first segment of every `crate::` path in `text` outside comments:
    /// `crate::a::b` and each item of `use crate::{a, b::c}`.
    fn crate_paths(text: &str) -> Vec<String> {
        let mut found = Vec::new();
        for line in text.lines() {
            let code = line.trim_start();
            if code.starts_with("//") {
                continue;
            }
            let code = code.split(" // ").next().unwrap_or(code);
            let mut rest = code;
            while let Some(i) = rest.find("crate::") {
                let after = &rest[i + "crate::".len()..];
                if let Some(group) = after.strip_prefix('{') {
                    let inner = group.split('}').next().unwrap_or(group);
                    for item in inner.split(',') {
                        let head = item.trim().split("::").next().unwrap_or("");
                        if !head.is_empty() {
                            found.push(head.to_string());
                        }
                    }
                } else {
                    let head: String = after
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect();
                    found.push(head);
                }
                rest = after;
            }
        }
        found
    }

    pub(super) fn sources(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                sources(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }

    #[test]
    fn every_module_stands_on_one_floor() {
        let lib = include_str!("lib.rs");
        let declared: Vec<&str> = lib
            .lines()
            .filter_map(|l| l.strip_prefix("pub mod "))
            .map(|l| l.trim_end_matches(';'))
            .collect();
        assert!(declared.len() > 10, "{declared:?}");
        for m in &declared {
            assert!(floor(m).is_some(), "module {m} is on no floor of FLOORS");
        }
        for f in FLOORS.iter().flat_map(|f| f.iter()) {
            assert!(
                declared.contains(f),
                "FLOORS names {f}, which lib.rs does not declare"
            );
        }
    }

    /// No arrow runs up or sideways, and none back to this file: so no
    /// module cycle can form (issue 43).
    #[test]
    fn no_module_uses_its_own_floor_or_one_above() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = Vec::new();
        sources(&root, &mut files);
        let mut wrong = Vec::new();
        for file in &files {
            let rel = file.strip_prefix(&root).unwrap();
            let first = rel
                .components()
                .next()
                .unwrap()
                .as_os_str()
                .to_string_lossy();
            let module = first.trim_end_matches(".rs").to_string();
            if module == "lib" || module == "main" {
                continue;
            }
            let Some(own) = floor(&module) else {
                wrong.push(format!("{}: module {module} is on no floor", rel.display()));
                continue;
            };
            let text = std::fs::read_to_string(file).unwrap();
            for used in crate_paths(&text) {
                if used == module {
                    continue;
                }
                match floor(&used) {
                    Some(f) if f < own => {}
                    Some(_) => wrong.push(format!(
                        "{}: {module} (floor {own}) uses {used}, which is not below it",
                        rel.display()
                    )),
                    None => wrong.push(format!(
                        "{}: {module} uses crate::{used}, which is the crate's root (lib.rs): \
                         pass it down instead",
                        rel.display()
                    )),
                }
            }
        }
        assert!(
            wrong.is_empty(),
            "arrows that run up:\n{}",
            wrong.join("\n")
        );
    }

    #[test]
    fn crate_paths_are_read_from_code_not_comments() {
        let text = "use crate::{model::Gap, units};\n// crate::record\nlet x = crate::store::open(); // crate::cli\n";
        assert_eq!(crate_paths(text), ["model", "units", "store"]);
    }
}

/// Issue 43: no function over 150 lines outside tests, so that what a
/// function does fits one reading. Lines are counted from `fn` to its
/// closing brace, with comments, strings and char literals taken out first
/// (a `{` in a format string is not a block).
#[cfg(test)]
mod size_tests {
    const MOST: usize = 150;

    /// `src` with comments removed and each string or char literal replaced
    /// by an empty one, newlines kept (so line numbers still hold).
    pub(super) fn code_only(src: &str) -> String {
        let b = src.as_bytes();
        let mut out = String::with_capacity(src.len());
        let mut i = 0;
        let newlines = |seg: &[u8], out: &mut String| {
            for _ in seg.iter().filter(|c| **c == b'\n') {
                out.push('\n');
            }
        };
        while i < b.len() {
            let rest = &b[i..];
            if rest.starts_with(b"//") {
                i += rest.iter().position(|c| *c == b'\n').unwrap_or(rest.len());
            } else if rest.starts_with(b"/*") {
                let end = src[i + 2..].find("*/").map_or(b.len(), |j| i + 2 + j + 2);
                newlines(&b[i..end], &mut out);
                i = end;
            } else if b[i] == b'r'
                && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
                && rest[1..].iter().take_while(|c| **c == b'#').count() + 1 < rest.len()
                && rest[1 + rest[1..].iter().take_while(|c| **c == b'#').count()] == b'"'
            {
                let hashes = rest[1..].iter().take_while(|c| **c == b'#').count();
                let close = format!("\"{}", "#".repeat(hashes));
                let start = i + 2 + hashes;
                let end = src[start..]
                    .find(&close)
                    .map_or(b.len(), |j| start + j + close.len());
                out.push_str("\"\"");
                newlines(&b[i..end], &mut out);
                i = end;
            } else if b[i] == b'"' {
                let mut j = i + 1;
                while j < b.len() && b[j] != b'"' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                out.push_str("\"\"");
                newlines(&b[i..j.min(b.len())], &mut out);
                i = j + 1;
            } else if b[i] == b'\'' {
                // A char literal ('x', '\n', '\u{..}', '{'); a lifetime has no closing quote.
                let end = if rest.get(1) == Some(&b'\\') {
                    rest.iter().skip(2).position(|c| *c == b'\'').map(|j| j + 3)
                } else {
                    let width = src[i + 1..].chars().next().map_or(1, char::len_utf8);
                    (rest.get(1 + width) == Some(&b'\'')).then_some(2 + width)
                };
                match end {
                    Some(n) if n <= 12 => {
                        out.push_str("' '");
                        i += n;
                    }
                    _ => {
                        out.push('\'');
                        i += 1;
                    }
                }
            } else {
                let width = src[i..].chars().next().map_or(1, char::len_utf8);
                out.push_str(&src[i..i + width]);
                i += width;
            }
        }
        out
    }

    /// Each function of `code` with a body: its name, first line (from 1) and length in lines.
    fn functions(code: &str) -> Vec<(String, usize, usize)> {
        let lines: Vec<&str> = code.lines().collect();
        let mut found = Vec::new();
        for (i, line) in lines.iter().enumerate() {
            let mut head = line.trim_start();
            for prefix in [
                "pub(crate) ",
                "pub(super) ",
                "pub ",
                "const ",
                "async ",
                "unsafe ",
            ] {
                head = head.strip_prefix(prefix).unwrap_or(head);
            }
            let Some(rest) = head.strip_prefix("fn ") else {
                continue;
            };
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            let mut depth = 0usize;
            let mut started = false;
            for (j, l) in lines.iter().enumerate().skip(i) {
                if !started && l.trim_end().ends_with(';') && !l.contains('{') {
                    break; // a declaration without a body
                }
                for c in l.chars() {
                    match c {
                        '{' => {
                            depth += 1;
                            started = true;
                        }
                        '}' => depth = depth.saturating_sub(1),
                        _ => {}
                    }
                }
                if started && depth == 0 {
                    found.push((name.clone(), i + 1, j - i + 1));
                    break;
                }
            }
        }
        found
    }

    #[test]
    fn no_function_outside_tests_is_over_150_lines() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = Vec::new();
        super::floors_tests::sources(&root, &mut files);
        let mut long = Vec::new();
        for file in &files {
            let code = code_only(&std::fs::read_to_string(file).unwrap());
            let code = code.split("#[cfg(test)]").next().unwrap_or("");
            for (name, line, length) in functions(code) {
                if length > MOST {
                    let rel = file.strip_prefix(&root).unwrap_or(file);
                    long.push(format!("{}:{line} {name}: {length} lines", rel.display()));
                }
            }
        }
        assert!(
            long.is_empty(),
            "functions over {MOST} lines (split them):\n{}",
            long.join("\n")
        );
    }

    #[test]
    fn braces_in_strings_chars_and_comments_are_not_blocks() {
        let src = "fn a() {\n    let s = \"{{\"; // }\n    let c = '{';\n    let r = r#\"}\"#;\n    x::<'static>();\n}\nfn b();\nfn c() { 1 }\n";
        let got = functions(&code_only(src));
        assert_eq!(
            got,
            [("a".to_string(), 1, 6), ("c".to_string(), 8, 1)],
            "{}",
            code_only(src)
        );
    }
}

/// Issue 43: no cycles, between files too. Two files of one module that use
/// each other (through any chain) are one tangle: neither can change or be
/// read alone. A module using its own submodules (`mod` and `pub use` in a
/// `mod.rs`) is not an arrow here: it is how Rust declares them.
#[cfg(test)]
mod cycle_tests {
    use std::collections::{BTreeMap, BTreeSet};
    use std::path::Path;

    /// `k8s/object.rs` -> `["k8s", "object"]`; `ship/otlp/mod.rs` -> `["ship", "otlp"]`.
    fn module_of(rel: &Path) -> Vec<String> {
        let mut parts: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        let last = parts.pop().unwrap_or_default();
        let stem = last.trim_end_matches(".rs");
        if !matches!(stem, "mod" | "lib" | "main") {
            parts.push(stem.to_string());
        }
        parts
    }

    /// Every path in `code` that starts at `crate`, `super` or `self`, as
    /// segments from the crate's root (a `{a, b::c}` group gives one path each).
    fn paths(code: &str, module: &[String]) -> Vec<Vec<String>> {
        let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
        let mut found = Vec::new();
        let b = code.as_bytes();
        let mut i = 0;
        while i < b.len() {
            let starts = ["crate::", "super::", "self::"]
                .iter()
                .find(|p| code[i..].starts_with(**p))
                .filter(|_| i == 0 || !ident(b[i - 1] as char));
            let Some(_) = starts else {
                i += 1;
                continue;
            };
            // The base module, then segments while `::` follows.
            let mut base: Vec<String> = Vec::new();
            let mut j = i;
            let mut first = true;
            loop {
                let word: String = code[j..].chars().take_while(|c| ident(*c)).collect();
                j += word.len();
                match (first, word.as_str()) {
                    (true, "crate") => {}
                    // NB: `self` in a file that is a module's own file (not
                    // mod.rs) is that module; `super` is its parent.
                    (true, "self") => base = module.to_vec(),
                    (true, "super") => {
                        base = module.to_vec();
                        base.pop();
                    }
                    (false, "super") => {
                        base.pop();
                    }
                    _ => base.push(word),
                }
                first = false;
                if !code[j..].starts_with("::") {
                    break;
                }
                j += 2;
                if code[j..].starts_with('{') {
                    let inner = code[j + 1..].split('}').next().unwrap_or("");
                    for item in inner.split(',') {
                        let mut p = base.clone();
                        p.extend(
                            item.trim()
                                .split("::")
                                .map(|s| s.split_whitespace().next().unwrap_or("").to_string())
                                .filter(|s| !s.is_empty() && s != "self" && s != "*"),
                        );
                        found.push(p);
                    }
                    base.clear();
                    break;
                }
            }
            if !base.is_empty() {
                found.push(base);
            }
            i = j.max(i + 1);
        }
        found
    }

    #[test]
    fn no_two_files_use_each_other() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = Vec::new();
        super::floors_tests::sources(&root, &mut files);
        let modules: BTreeMap<Vec<String>, String> = files
            .iter()
            .map(|f| {
                let rel = f.strip_prefix(&root).unwrap();
                (module_of(rel), rel.display().to_string())
            })
            .collect();
        let mut arrows: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for file in &files {
            let rel = file.strip_prefix(&root).unwrap();
            let module = module_of(rel);
            let text = std::fs::read_to_string(file).unwrap();
            let code = super::size_tests::code_only(&text);
            let code = code.split("#[cfg(test)]").next().unwrap_or("");
            for path in paths(code, &module) {
                // The longest prefix that is a file of ours.
                let target = (0..=path.len())
                    .rev()
                    .find_map(|n| modules.get(&path[..n]).map(|f| (n, f)));
                let Some((n, target)) = target else { continue };
                // A module using itself, one of its own submodules, or the
                // crate's root (which the floors test refuses) is no arrow.
                if n == 0 || path[..n].starts_with(&module) {
                    continue;
                }
                arrows
                    .entry(rel.display().to_string())
                    .or_default()
                    .insert(target.clone());
            }
        }
        // A file reaches itself through its arrows: a cycle.
        let mut tangles = BTreeSet::new();
        for start in arrows.keys() {
            let mut seen = BTreeSet::new();
            let mut todo: Vec<&String> = arrows[start].iter().collect();
            while let Some(f) = todo.pop() {
                if f == start {
                    tangles.insert(start.clone());
                    break;
                }
                if seen.insert(f) {
                    todo.extend(arrows.get(f).into_iter().flatten());
                }
            }
        }
        let named: Vec<String> = tangles
            .iter()
            .map(|f| format!("{f} -> {:?}", arrows[f]))
            .collect();
        assert!(
            named.is_empty(),
            "files in a cycle (each with what it uses):\n{}",
            named.join("\n")
        );
        assert!(arrows.len() > 80, "{} files with arrows", arrows.len());
    }

    #[test]
    fn paths_resolve_from_the_file_they_are_in() {
        let here = ["k8s".to_string(), "object".to_string()];
        let code = "use super::refs::{read, webhooks};\nlet x = crate::model::Gap::new();\nuse self::inner::X;";
        assert_eq!(
            paths(code, &here),
            [
                vec!["k8s", "refs", "read"],
                vec!["k8s", "refs", "webhooks"],
                vec!["model", "Gap", "new"],
                vec!["k8s", "object", "inner", "X"],
            ]
        );
    }
}
