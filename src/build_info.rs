//! Which build this is: the package version, the commit it was built from and
//! when, stamped in by `build.rs`. `kubectl diag --version` prints it and the
//! recorder stores it in `recorder_sessions.version`, so a bug report and a
//! recording both say which build they came from.

/// The commit the binary was built from (12 hex digits), or `unknown` when
/// neither git nor a packaged crate's `.cargo_vcs_info.json` could say.
pub const COMMIT: &str = env!("KUBECTL_DIAG_COMMIT");

/// When it was built, RFC 3339 UTC: `SOURCE_DATE_EPOCH` when set (reproducible
/// builds; `scripts/package` sets it to the commit's time), otherwise the
/// time `build.rs` last ran.
pub const BUILD_DATE: &str = env!("KUBECTL_DIAG_BUILD_DATE");

/// `0.1.0 (commit 0123456789ab, built 2026-11-30T12:00:00Z)`.
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("KUBECTL_DIAG_COMMIT"),
    ", built ",
    env!("KUBECTL_DIAG_BUILD_DATE"),
    ")"
);

// NB: only the tests compile it into the library; its user is build.rs.
#[cfg(test)]
mod utc;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_build_script_formats_timestamps_as_chrono_does() {
        // Epoch, leap days (2000 is a leap year, 2100 is not), the last second
        // of a year, before the epoch, and far ahead.
        for secs in [
            0,
            951_782_400,
            951_868_799,
            1_709_208_000,
            1_796_022_185,
            1_924_991_999,
            4_107_542_400,
            4_107_628_800,
            -1,
            -86_400 * 365,
            253_402_300_799,
        ] {
            let want = chrono::DateTime::from_timestamp(secs, 0)
                .unwrap()
                .format("%Y-%m-%dT%H:%M:%SZ")
                .to_string();
            assert_eq!(utc::rfc3339(secs), want, "{secs}");
        }
    }

    #[test]
    fn the_version_names_package_commit_and_date() {
        assert!(VERSION.starts_with(env!("CARGO_PKG_VERSION")));
        assert!(
            COMMIT == "unknown"
                || (COMMIT.len() == 12 && COMMIT.bytes().all(|b| b.is_ascii_hexdigit())),
            "{COMMIT}"
        );
        assert_eq!(
            BUILD_DATE.len(),
            "2026-11-30T12:00:00Z".len(),
            "{BUILD_DATE}"
        );
        assert!(BUILD_DATE.ends_with('Z'), "{BUILD_DATE}");
        assert!(VERSION.contains(COMMIT) && VERSION.contains(BUILD_DATE));
    }
}
