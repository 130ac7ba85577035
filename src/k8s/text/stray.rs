//! Lines pasted among kubectl's tables that are no part of them: the shell
//! prompt and command that printed a table, a code fence or banner around
//! it, kubectl's own one-line remarks, a JSON snippet. And what, of a line
//! that is not a row, tells it apart from the rest of a message.
//!
//! NB: kubectl prints a message's line breaks as they are in every layout
//! but `get events` 1.19 and later (describe, `kubectl events`, `get events`
//! before 1.19): the rest of the message follows on lines of its own, from
//! column 0, and looks like any other text. Text alone cannot tell it from a
//! sentence of the ticket pasted right under the table; it is told by what
//! it is not (see [`may_continue`]).

use super::grid::split_wide;

/// Whether `line` looks like cells of a table: parts at runs of two or more
/// spaces (tabwriter's padding), or at tabs. A row of some table, or its
/// header: never a message's continuation.
pub(super) fn tabular(line: &str) -> bool {
    let t = line.trim();
    t.contains('\t') || split_wide(t).len() >= 2
}

/// Whether a line is text kubectl's tables never hold: what [`ends_table`]
/// says, kubectl's own remarks and log lines, or a line of JSON.
pub(super) fn foreign(line: &str) -> bool {
    let t = line.trim();
    ends_table(line) || kubectl_says(t) || json(t)
}

/// Whether a line says the table above it is over: a shell prompt (and the
/// command after it: what follows is another command's output), a code
/// fence, a banner, or `Events:` (describe's title of its Events table).
///
/// NB: kubectl's remarks (`error: …`) and JSON do not end a table: skipped,
/// they are also what a message that went on over lines may hold, with rows
/// of the table after it.
pub(super) fn ends_table(line: &str) -> bool {
    let t = line.trim();
    !t.is_empty() && (prompt(t) || banner(t) || t == "Events:")
}

/// Whether `line`, right under a row (or a line going on with it), may be
/// the rest of that row's message: text that is not table-like and not
/// [`foreign`]. The caller also stops at a blank line.
pub(super) fn may_continue(line: &str) -> bool {
    !line.trim().is_empty() && !tabular(line) && !foreign(line)
}

/// `$ kubectl …`, `user@host:~/dir$ kubectl …`, `[root@host ~]# …`, `% …`,
/// `> …`, `❯ …`, `PS C:\> …`, or the command alone (`kubectl get events`).
fn prompt(t: &str) -> bool {
    if t == "kubectl" || t.starts_with("kubectl ") {
        return true;
    }
    // A prompt with nothing typed after it.
    if t.ends_with(['$', '#', '%', '>']) && !t.contains(char::is_whitespace) {
        return true;
    }
    let marks = ["$ ", "# ", "% ", "> ", "❯ ", "➜ ", "λ "];
    let Some(at) = marks.iter().filter_map(|m| t.find(m)).min() else {
        return false;
    };
    let before = &t[..at];
    // NB: what comes before the mark is the prompt's own text (user, host,
    // directory): one word, or a bracketed `[user@host dir]`, or PowerShell's
    // `PS C:\dir`. Anything else is text with a `#` or `>` in it: a
    // sentence, or kubectl's `<unknown>` age at the start of a row.
    let word = |w: &str| {
        w.chars()
            .all(|c| c.is_alphanumeric() || "@:~/._-+()\\".contains(c))
    };
    word(before)
        || before
            .strip_prefix('[')
            .and_then(|b| b.strip_suffix(']'))
            .is_some_and(|b| b.split(' ').all(word))
        || before.strip_prefix("PS ").is_some_and(word)
}

/// A code fence (```` ``` ````, `~~~`) or a banner (`=== shop ===`, `---`,
/// `### Events`, `***`): three of the same mark first.
fn banner(t: &str) -> bool {
    let mut chars = t.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    matches!(first, '`' | '~' | '=' | '-' | '#' | '*' | '_' | '─' | '━')
        && chars.next() == Some(first)
        && chars.next() == Some(first)
}

/// kubectl's own lines around a table: what it says when there is nothing
/// to show, its errors and warnings, klog's lines (`W0501 10:00:00.123 …`).
fn kubectl_says(t: &str) -> bool {
    const SAYS: &[&str] = &[
        "No resources found",
        "No events found",
        "Error from server",
        "error: ",
        "Warning: ",
        "Flag --",
    ];
    if SAYS.iter().any(|s| t.starts_with(s)) {
        return true;
    }
    let b = t.as_bytes();
    b.len() > 6
        && matches!(b[0], b'I' | b'W' | b'E' | b'F')
        && b[1..5].iter().all(u8::is_ascii_digit)
        && b[5] == b' '
}

/// A line of JSON: an opening or closing brace or bracket, or a `"key":`.
fn json(t: &str) -> bool {
    t.starts_with(['{', '}', ']'])
        || t == "["
        || t.starts_with("[{")
        || t.starts_with("[\"")
        || (t.starts_with('"') && t.contains("\":"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompts_fences_banners_and_json_are_foreign() {
        for line in [
            "$ kubectl events -n shop",
            "user@host:~/incident$ kubectl get events -w",
            "[root@node-1 ~]# kubectl get events",
            "% kubectl get events",
            "❯ kubectl events -A",
            "PS C:\\Users\\me> kubectl get events",
            "kubectl get events -n shop",
            "bash-5.1$",
            "```",
            "```text",
            "=== namespace shop ===",
            "--- after the rollout ---",
            "### Events",
            "No events found in shop namespace.",
            "No resources found in shop namespace.",
            "Error from server (NotFound): namespaces \"x\" not found",
            "W0501 10:00:00.123456   12345 warnings.go:70] v1 Event is deprecated",
            "{",
            "  \"kind\": \"Event\",",
            "  },",
            "]",
            "Events:",
        ] {
            assert!(foreign(line), "{line:?}");
            assert!(!may_continue(line), "{line:?}");
            let t = line.trim();
            let skipped_only = json(t) || kubectl_says(t);
            assert_eq!(ends_table(line), !skipped_only, "{line:?}");
        }
    }

    #[test]
    fn the_rest_of_a_message_may_continue_it() {
        for line in [
            "second line",
            "of a message that went on",
            "  goroutine 1 [running]:",
            "exit status 1 > /dev/null",
            "see issue #12 for why",
            "<unknown> is not a time",
        ] {
            assert!(may_continue(line), "{line:?}");
        }
        // Cells of some other table, and kubectl's stray lines of a watch.
        for line in ["NAME   AGE", "web-1   5s", "a\tb", ""] {
            assert!(!may_continue(line), "{line:?}");
        }
        // kubectl's ages in angle brackets are no prompt.
        for line in [
            "<unknown>   Warning   NodeNotReady   Node/kwok-1   x",
            "<invalid> Normal",
        ] {
            assert!(!ends_table(line), "{line:?}");
        }
    }
}
