//! Durations (`90s`, `15m`, `2h`, `7d`), times (RFC 3339 or a duration back from now)
//! and sizes (`512MiB`, `2GB`) as users type them.

use chrono::{DateTime, Utc};
use thiserror::Error;

#[derive(Debug, Error, PartialEq, Eq)]
pub enum UnitError {
    #[error("'{0}' is not a duration: use a number and a unit, e.g. 90s, 15m, 2h, 7d")]
    Duration(String),
    #[error("'{0}' is neither a duration (2h, 30m) nor an RFC 3339 time (2026-11-29T03:00:00Z)")]
    Time(String),
    #[error("'{0}' is not a size: use a number and a unit, e.g. 512MiB, 2GiB, 1GB")]
    Size(String),
    #[error("{0:?} is not an RFC 3339 time (e.g. 2026-11-29T03:00:00Z)")]
    TakenAt(String),
}

/// Parses `90s`, `15m`, `2h`, `7d`, `1w`, or a combination such as `1h30m`, into milliseconds.
pub fn parse_duration_ms(text: &str) -> Result<i64, UnitError> {
    let bad = || UnitError::Duration(text.to_string());
    let s = text.trim();
    if s == "0" {
        return Ok(0);
    }
    let mut total: i64 = 0;
    let mut digits = String::new();
    let mut any = false;
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        let mut unit = c.to_string();
        if c == 'm' && chars.peek() == Some(&'s') {
            unit.push(chars.next().ok_or_else(bad)?);
        }
        let n: i64 = digits.parse().map_err(|_| bad())?;
        digits.clear();
        let ms = match unit.as_str() {
            "ms" => 1,
            "s" => 1_000,
            "m" => 60_000,
            "h" => 3_600_000,
            "d" => 86_400_000,
            "w" => 7 * 86_400_000,
            _ => return Err(bad()),
        };
        total = n
            .checked_mul(ms)
            .and_then(|v| total.checked_add(v))
            .ok_or_else(bad)?;
        any = true;
    }
    if !digits.is_empty() || !any {
        return Err(bad());
    }
    Ok(total)
}

/// A moment given either as RFC 3339 or as a duration back from `now`; returns epoch milliseconds.
pub fn parse_time_ms(text: &str, now: DateTime<Utc>) -> Result<i64, UnitError> {
    if let Ok(t) = DateTime::parse_from_rfc3339(text.trim()) {
        return Ok(t.timestamp_millis());
    }
    parse_duration_ms(text)
        .map(|d| now.timestamp_millis() - d)
        .map_err(|_| UnitError::Time(text.to_string()))
}

/// [`parse_time_ms`] from now: the command line's value parser for times
/// (`--since 2h`, `--at 2026-11-29T03:00:00Z`), so a bad one is clap's error, exit code 2.
pub fn parse_time_arg(text: &str) -> Result<i64, UnitError> {
    parse_time_ms(text, Utc::now())
}

/// `import --taken-at` as the interval it names: to the second, any instant
/// of that second; with a fraction, that instant (to the millisecond).
pub fn parse_taken_at(value: &str) -> Option<(i64, i64)> {
    let t = DateTime::parse_from_rfc3339(value).ok()?.timestamp_millis();
    let fraction = value
        .split_once('T')
        .is_some_and(|(_, time)| time.contains('.'));
    Some(if fraction { (t, t) } else { (t, t + 999) })
}

/// [`parse_taken_at`] as the command line's value parser: a bad `--taken-at` is clap's error, exit code 2.
pub fn parse_taken_at_arg(value: &str) -> Result<(i64, i64), UnitError> {
    parse_taken_at(value).ok_or_else(|| UnitError::TakenAt(value.to_string()))
}

/// Parses `512MiB`, `2GiB`, `1GB`, `300kB`, or a plain number of bytes.
pub fn parse_size(text: &str) -> Result<u64, UnitError> {
    let bad = || UnitError::Size(text.to_string());
    let s = text.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let n: u64 = num.parse().map_err(|_| bad())?;
    let mult: u64 = match unit.trim() {
        "" | "B" => 1,
        "k" | "kB" | "KB" => 1_000,
        "Ki" | "KiB" => 1 << 10,
        "M" | "MB" => 1_000_000,
        "Mi" | "MiB" => 1 << 20,
        "G" | "GB" => 1_000_000_000,
        "Gi" | "GiB" => 1 << 30,
        "T" | "TB" => 1_000_000_000_000,
        "Ti" | "TiB" => 1 << 40,
        _ => return Err(bad()),
    };
    n.checked_mul(mult).ok_or_else(bad)
}

/// Now, in epoch milliseconds, as every stored time is.
pub fn now_ms() -> i64 {
    Utc::now().timestamp_millis()
}

/// Serialises epoch milliseconds as [`rfc3339`] text (`serialize_with`), as
/// `timeline` and `check` print times in JSON.
pub fn ser_rfc3339<S: serde::Serializer>(ms: &i64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&rfc3339(*ms))
}

/// [`ser_rfc3339`] of an optional time (absent: null).
pub fn ser_rfc3339_opt<S: serde::Serializer>(ms: &Option<i64>, s: S) -> Result<S::Ok, S::Error> {
    match ms {
        Some(ms) => s.serialize_str(&rfc3339(*ms)),
        None => s.serialize_none(),
    }
}

/// Formats epoch milliseconds as RFC 3339 UTC with seconds (or milliseconds when present).
pub fn rfc3339(ms: i64) -> String {
    match DateTime::<Utc>::from_timestamp_millis(ms) {
        Some(t) if ms % 1000 == 0 => t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        Some(t) => t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        None => ms.to_string(),
    }
}

/// A duration exactly, in the units [`parse_duration_ms`] reads: `90s` is `1m30s`, `250ms` stays.
pub fn exact_duration(ms: i64) -> String {
    if ms == 0 {
        return "0".into();
    }
    let mut left = ms.max(0);
    let mut text = String::new();
    for (unit, size) in [
        ("d", 86_400_000),
        ("h", 3_600_000),
        ("m", 60_000),
        ("s", 1_000),
        ("ms", 1),
    ] {
        if left >= size {
            text.push_str(&format!("{}{unit}", left / size));
            left %= size;
        }
    }
    text
}

/// A duration the way kubectl prints ages: `45s`, `12m`, `3h20m`, `2d4h`.
pub fn human_duration(ms: i64) -> String {
    let s = ms.max(0) / 1000;
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m", s / 60),
        3600..=86_399 if (s % 3600) / 60 == 0 => format!("{}h", s / 3600),
        3600..=86_399 => format!("{}h{}m", s / 3600, (s % 3600) / 60),
        _ if (s % 86_400) / 3600 == 0 => format!("{}d", s / 86_400),
        _ => format!("{}d{}h", s / 86_400, (s % 86_400) / 3600),
    }
}

/// 64-bit FNV-1a: stable across versions and platforms (unlike std's hasher),
/// so it can be stored.
pub fn fnv1a(s: &str) -> i64 {
    fnv1a_bytes(s.as_bytes()) as i64
}

/// [`fnv1a`] of any bytes, unsigned (a batch's digest in its deduplication token).
pub fn fnv1a_bytes(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn taken_at_to_the_second_is_that_whole_second() {
        let t = parse_time_arg("2026-11-29T03:00:00Z").unwrap();
        assert_eq!(parse_taken_at("2026-11-29T03:00:00Z"), Some((t, t + 999)));
        assert_eq!(
            parse_taken_at("2026-11-29T03:00:00.250Z"),
            Some((t + 250, t + 250))
        );
        assert_eq!(parse_taken_at("yesterday"), None);
    }

    #[test]
    fn human_durations_read_like_kubectl_ages() {
        assert_eq!(human_duration(45_000), "45s");
        assert_eq!(human_duration(12 * 60_000 + 5_000), "12m");
        assert_eq!(human_duration(2 * 3_600_000), "2h");
        assert_eq!(human_duration(3 * 3_600_000 + 20 * 60_000), "3h20m");
        assert_eq!(human_duration(2 * 86_400_000 + 4 * 3_600_000), "2d4h");
    }

    #[test]
    fn durations_as_users_type_them() {
        assert_eq!(parse_duration_ms("90s"), Ok(90_000));
        assert_eq!(parse_duration_ms("1h30m"), Ok(5_400_000));
        assert_eq!(parse_duration_ms("7d"), Ok(604_800_000));
        assert_eq!(parse_duration_ms("250ms"), Ok(250));
        assert_eq!(parse_duration_ms("0"), Ok(0));
        assert!(parse_duration_ms("2").is_err());
        assert!(parse_duration_ms("h").is_err());
        assert!(parse_duration_ms("2x").is_err());
        assert!(parse_duration_ms("").is_err());
        assert!(parse_duration_ms("99999999999999999d").is_err());
    }

    #[test]
    fn exact_durations_read_back_as_themselves() {
        for ms in [0, 250, 30_000, 90_000, 5_400_000, 604_800_000 + 1] {
            assert_eq!(parse_duration_ms(&exact_duration(ms)), Ok(ms), "{ms}");
        }
        assert_eq!(exact_duration(90_000), "1m30s");
    }

    #[test]
    fn times_are_rfc3339_or_a_duration_back() {
        let now = DateTime::parse_from_rfc3339("2026-11-29T10:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let two_hours_ago = DateTime::parse_from_rfc3339("2026-11-29T08:00:00Z").unwrap();
        assert_eq!(
            parse_time_ms("2h", now),
            Ok(two_hours_ago.timestamp_millis())
        );
        assert_eq!(
            parse_time_ms("2026-11-29T08:00:00Z", now),
            Ok(two_hours_ago.timestamp_millis())
        );
        assert!(matches!(
            parse_time_ms("yesterday", now),
            Err(UnitError::Time(_))
        ));
    }

    #[test]
    fn sizes_binary_and_decimal() {
        assert_eq!(parse_size("512MiB"), Ok(512 << 20));
        assert_eq!(parse_size("2GB"), Ok(2_000_000_000));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert!(parse_size("lots").is_err());
        assert!(parse_size("5PB").is_err());
    }

    #[test]
    fn rfc3339_keeps_millis_only_when_present() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_500), "1970-01-01T00:00:01.500Z");
    }
}
