//! kubectl's relative ages (`2m12s`, `5m`, `3d4h`, `<unknown>`) read back
//! into the interval of ages that print that way.
//!
//! kubectl prints ages with `duration.HumanDuration` (1.10 and later, via
//! `translateTimestampSince`) or `duration.ShortHumanDuration` (earlier
//! `translateTimestamp`). Both truncate: 1.10's `5m` is any age in [5m, 5m01s),
//! 1.8's `5m` any age in [5m, 6m). Text alone does not say which printed it,
//! so an age is read as [value, value + one unit of its smallest part): wide
//! enough for either, never narrower than the truth.

/// When something happened, as a line of kubectl text says.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum When {
    /// This long before the moment of capture, in milliseconds, within [min, max].
    Ago { min: i64, max: i64 },
    /// At this instant (epoch ms): an absolute timestamp was printed.
    At(i64),
    #[default]
    /// `<unknown>` (a zero timestamp), `<invalid>` (in the future by the
    /// capturing clock), `<nil>`, or nothing printed.
    Unknown,
}

impl When {
    /// The interval [earliest, latest] in epoch ms, counting ages back from the
    /// moment of capture, itself known to lie in [`taken.0`, `taken.1`] (a time
    /// given to the second stands for any instant of that second).
    pub fn span(self, taken: (i64, i64)) -> Option<(i64, i64)> {
        match self {
            When::Ago { min, max } => Some((taken.0 - max, taken.1 - min)),
            When::At(t) => Some((t, t)),
            When::Unknown => None,
        }
    }
}

const SECOND: i64 = 1000;

fn unit_ms(unit: char) -> Option<i64> {
    Some(match unit {
        's' => SECOND,
        'm' => 60 * SECOND,
        'h' => 3600 * SECOND,
        'd' => 24 * 3600 * SECOND,
        // NB: HumanDuration's years are 365 days (hours/24/365).
        'y' => 365 * 24 * 3600 * SECOND,
        _ => return None,
    })
}

/// Reads one age as kubectl prints it; `None` when `text` is not one.
pub fn parse_age(text: &str) -> Option<When> {
    match text {
        "<unknown>" | "<invalid>" | "<nil>" => return Some(When::Unknown),
        // NB: both printers say `0s` for any age in (-2s, 1s): a clock
        // running up to two seconds ahead of the apiserver's counts as now.
        "0s" => {
            return Some(When::Ago {
                min: -2 * SECOND + 1,
                max: SECOND - 1,
            });
        }
        _ => {}
    }
    let mut total: i64 = 0;
    let mut last_unit: Option<i64> = None;
    let mut digits = String::new();
    for c in text.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        let unit = unit_ms(c)?;
        // Parts come largest first, each unit once: `2m12s`, never `12s2m`.
        if digits.is_empty() || last_unit.is_some_and(|u| u <= unit) {
            return None;
        }
        let n: i64 = digits.parse().ok()?;
        total = total.checked_add(n.checked_mul(unit)?)?;
        last_unit = Some(unit);
        digits.clear();
    }
    if !digits.is_empty() {
        return None;
    }
    let unit = last_unit?;
    Some(When::Ago {
        min: total,
        max: total + unit - 1,
    })
}

/// The Age cell of `kubectl describe`'s Events table: `2m12s`, or
/// `2m (x12 over 5m)` (last seen 2m ago, 12 times since 5m ago).
/// Returns (last, count, first); first is `None` without the parenthesis.
pub fn parse_describe_age(cell: &str) -> Option<(When, Option<i64>, Option<When>)> {
    let cell = cell.trim();
    match cell.split_once(" (x") {
        None => Some((parse_age(cell)?, None, None)),
        Some((last, rest)) => {
            let rest = rest.strip_suffix(')')?;
            let (count, over) = rest.split_once(" over ")?;
            Some((
                parse_age(last.trim())?,
                Some(parse_count(count)?),
                Some(parse_age(over.trim())?),
            ))
        }
    }
}

/// An Event's count as kubectl prints it: digits only. More than an i64
/// holds is a count all the same, saturated (the caller clamps it to the
/// API's int32 and says so); anything else (`1e3`, `-1`) is not a count.
pub fn parse_count(text: &str) -> Option<i64> {
    let text = text.trim();
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(text.parse().unwrap_or(i64::MAX))
}

/// A describe Age cell of the series form whose count is not a number
/// (`90s (x1e3 over 7m)`): its last-seen age and the count's text, so that
/// the row stays an Event of its own, with its count unknown.
pub fn describe_age_bad_count(cell: &str) -> Option<(When, String)> {
    let (last, rest) = cell.trim().split_once(" (x")?;
    let (count, over) = rest.strip_suffix(')')?.split_once(" over ")?;
    parse_age(over.trim())?;
    if parse_count(count).is_some() {
        return None;
    }
    Some((parse_age(last.trim())?, count.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ago(text: &str) -> (i64, i64) {
        match parse_age(text) {
            Some(When::Ago { min, max }) => (min / 1000, (max + 1) / 1000),
            other => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    fn an_age_is_the_interval_its_smallest_unit_leaves_open() {
        assert_eq!(ago("45s"), (45, 46));
        assert_eq!(ago("2m12s"), (132, 133));
        assert_eq!(ago("5m"), (300, 360));
        assert_eq!(ago("3h4m"), (3 * 3600 + 240, 3 * 3600 + 300));
        assert_eq!(ago("2d5h"), (53 * 3600, 54 * 3600));
        assert_eq!(ago("1y30d"), ((365 + 30) * 86400, (365 + 31) * 86400));
    }

    #[test]
    fn unknown_invalid_and_zero() {
        assert_eq!(parse_age("<unknown>"), Some(When::Unknown));
        assert_eq!(parse_age("<invalid>"), Some(When::Unknown));
        let Some(When::Ago { min, max }) = parse_age("0s") else {
            panic!()
        };
        assert!(min < 0 && max < 1000);
    }

    #[test]
    fn what_is_not_an_age() {
        for text in ["", "5", "m", "12s2m", "5x", "2m2m", "Normal", "-5m"] {
            assert_eq!(parse_age(text), None, "{text}");
        }
    }

    /// Regression (issue 27.16): `x1e3` was no row at all, and the row was
    /// read as the previous Event's message going on.
    #[test]
    fn a_series_count_that_is_not_a_number_is_told_apart() {
        assert_eq!(parse_describe_age("90s (x1e3 over 7m)"), None);
        assert_eq!(
            describe_age_bad_count("90s (x1e3 over 7m)"),
            Some((parse_age("90s").unwrap(), "1e3".to_string()))
        );
        assert_eq!(describe_age_bad_count("90s (x3 over 7m)"), None);
        assert_eq!(describe_age_bad_count("first line of a message"), None);
        assert_eq!(
            parse_describe_age("1m (x99999999999999999999 over 2m)").map(|a| a.1),
            Some(Some(i64::MAX))
        );
        assert_eq!(parse_count("-1"), None);
        assert_eq!(parse_count("12"), Some(12));
    }

    #[test]
    fn describe_age_with_a_series() {
        let (last, count, first) = parse_describe_age("2m (x12 over 5m)").unwrap();
        assert_eq!(last, parse_age("2m").unwrap());
        assert_eq!(count, Some(12));
        assert_eq!(first, parse_age("5m").unwrap().into());
        assert_eq!(
            parse_describe_age("<unknown>").unwrap(),
            (When::Unknown, None, None)
        );
        assert_eq!(parse_describe_age("2m (x12 over"), None);
    }

    #[test]
    fn spans_count_back_from_the_capture() {
        let t = 1_000_000_000;
        assert_eq!(
            parse_age("5m").unwrap().span((t, t)),
            Some((t - 360_000 + 1, t - 300_000))
        );
        // Taken at some instant of a second: the span widens by that second.
        assert_eq!(
            parse_age("5m").unwrap().span((t, t + 999)),
            Some((t - 360_000 + 1, t + 999 - 300_000))
        );
        assert_eq!(When::At(5).span((t, t)), Some((5, 5)));
        assert_eq!(When::Unknown.span((t, t)), None);
    }
}
