//! Where `record --ship`, `ship --to` and `--store` send or read:
//! `clickhouse://[user[:password]@]host[:port]/database[?secure=true]`.
//! The password may also come from `KUBECTL_DIAG_CLICKHOUSE_PASSWORD` or a
//! file; it is never printed ([`ClickHouseUrl::shown`] leaves it out).

use std::fmt;

/// The environment variable a ClickHouse password may come from.
pub const PASSWORD_ENV: &str = "KUBECTL_DIAG_CLICKHOUSE_PASSWORD";

/// Reads a password file (given as `flag`): its first line, without the newline.
pub fn password_from(flag: &str, path: Option<&std::path::Path>) -> anyhow::Result<Option<String>> {
    let Some(path) = path else { return Ok(None) };
    let text = std::fs::read_to_string(path).map_err(|e| {
        anyhow::anyhow!(
            "{flag} {}: cannot read it ({e}); give a file holding the password",
            path.display()
        )
    })?;
    Ok(Some(text.lines().next().unwrap_or_default().to_string()))
}

/// A ClickHouse destination.
#[derive(Clone, PartialEq, Eq)]
pub struct ClickHouseUrl {
    pub user: String,
    pub password: String,
    pub host: String,
    pub port: u16,
    pub database: String,
    pub secure: bool,
}

// NB: by hand, so that no `{:?}` ever prints the password.
impl fmt::Debug for ClickHouseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.shown())
    }
}

/// Why a destination was not understood.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{given}: {why}")]
pub struct UrlError {
    /// What was given, [`redact`]ed: made by [`UrlError::new`] only.
    pub given: String,
    pub why: String,
}

impl UrlError {
    /// The error about `text` (printed [`redact`]ed) and why it is not understood
    /// (`why` must quote nothing of a password, a query or a header value).
    pub fn new(text: &str, why: impl Into<String>) -> UrlError {
        UrlError {
            given: redact(text),
            why: why.into(),
        }
    }
}

impl ClickHouseUrl {
    /// Parses `text`; `password` (from the environment or a file) fills a
    /// password the URL leaves out.
    pub fn parse(text: &str, password: Option<&str>) -> Result<ClickHouseUrl, UrlError> {
        let fail = |why: &str| UrlError::new(text, why);
        let Some(rest) = text.strip_prefix("clickhouse://") else {
            let lower = text.to_ascii_lowercase();
            let why = if lower.starts_with("clickhouse:") {
                "not a ClickHouse URL: the scheme is clickhouse:// (lower case, two slashes), e.g. clickhouse://diag@clickhouse:8123/diag"
            } else if lower.starts_with("otlp") {
                "not a ClickHouse URL, nor an OTLP one: an OTLP collector is otlp+http://host:4318 or otlp+https://…; ClickHouse is clickhouse://[user[:password]@]host[:port]/database"
            } else {
                "not a ClickHouse URL: write clickhouse://[user[:password]@]host[:port]/database (e.g. clickhouse://diag@clickhouse:8123/diag)"
            };
            return Err(fail(why));
        };
        // NB: the userinfo ends at the last `@` (the host and database hold none), so a
        // password with an unencoded `/`, `?` or `#` is still read as one.
        let (userinfo, rest) = match rest.rsplit_once('@') {
            Some((u, r)) => (Some(u), r),
            None => (None, rest),
        };
        let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
        let (hostport, database) = rest
            .split_once('/')
            .ok_or_else(|| fail("no database: end the URL with /DATABASE (e.g. /diag)"))?;
        let (user, url_password) = match userinfo {
            Some(u) => match u.split_once(':') {
                Some((user, pass)) => (decode(user), Some(decode(pass))),
                None => (decode(u), None),
            },
            None => ("default".to_string(), None),
        };
        let mut secure = false;
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            match pair.split_once('=') {
                Some(("secure", "true" | "1")) => secure = true,
                Some(("secure", "false" | "0")) => secure = false,
                // NB: the option's name only: its value may be a secret (`?password=…`).
                _ => {
                    let name = pair.split('=').next().unwrap_or_default();
                    if name == "secure" {
                        return Err(fail("secure takes true or false (secure=true: HTTPS)"));
                    }
                    let name = if name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
                        format!("{name:?}")
                    } else {
                        "in the query".to_string()
                    };
                    return Err(fail(&format!(
                        "unknown option {name}: the only option is secure=true (HTTPS); the password goes before the host or in KUBECTL_DIAG_CLICKHOUSE_PASSWORD"
                    )));
                }
            }
        }
        let (host, port) = match hostport.rsplit_once(':') {
            Some((h, p)) if !h.ends_with(']') || p.is_empty() => {
                // NB: the text is not quoted: with the `@` left out, it is a password.
                let port = p.parse::<u16>().map_err(|_| {
                    fail("the port is not a number: give one such as 8123 (clickhouse://user:password@host:port/database)")
                })?;
                (h.to_string(), port)
            }
            _ => (hostport.to_string(), if secure { 8443 } else { 8123 }),
        };
        if host.is_empty() {
            return Err(fail("no host: write clickhouse://HOST:PORT/DATABASE"));
        }
        let valid_db = !database.is_empty()
            && database
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_')
            && !database.as_bytes()[0].is_ascii_digit();
        if !valid_db {
            return Err(fail(
                "the database must be a plain name (letters, digits, _), e.g. /diag",
            ));
        }
        Ok(ClickHouseUrl {
            user,
            password: url_password
                .or_else(|| password.map(str::to_string))
                .unwrap_or_default(),
            host,
            port,
            database: database.to_string(),
            secure,
        })
    }

    /// The HTTP endpoint.
    pub fn http(&self) -> String {
        let scheme = if self.secure { "https" } else { "http" };
        format!("{scheme}://{}:{}", self.host, self.port)
    }

    /// The destination as it may be printed and stored: no password.
    pub fn shown(&self) -> String {
        let secure = if self.secure { "?secure=true" } else { "" };
        format!(
            "clickhouse://{}@{}:{}/{}{secure}",
            self.user, self.host, self.port, self.database
        )
    }
}

/// `text` as it may be printed in an error or a status: anything URL-like,
/// whatever its scheme (typos such as `clickhouse:/…`, `Clickhouse://…`,
/// `https://…`, `otlp://…` included), keeps its scheme, user and host, but
/// never a password (`://user:***@host…`) nor a query string or fragment
/// (`?…`: an `api_key=` there is a secret too). A user alone (`user@host`) is
/// kept for ClickHouse, whose URLs name users, and hidden (`***@host`) for any
/// other scheme, where it is often a token. Every path that prints a URL the
/// user gave (`--ship`, `ship --to`, `--store`) goes through this.
pub fn redact(text: &str) -> String {
    // The scheme: letters, digits, `+`, `-`, `.`, then `:` and at least one `/`
    // (without a `/`, `user:password@host` would read as a scheme).
    let scheme_len = text
        .char_indices()
        .take_while(|&(i, c)| {
            if i == 0 {
                c.is_ascii_alphabetic()
            } else {
                c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')
            }
        })
        .count();
    let (prefix, rest) = match text[scheme_len..].strip_prefix(':') {
        Some(after) if scheme_len > 0 && after.starts_with('/') => {
            let slashes = after.len() - after.trim_start_matches('/').len();
            text.split_at(scheme_len + 1 + slashes)
        }
        _ => ("", text),
    };
    let scheme = &text[..scheme_len];
    let keeps_bare_user = prefix.is_empty() || scheme.eq_ignore_ascii_case("clickhouse");
    // NB: the last `@`: a password may hold `@`, `/`, `?` or `#` unencoded.
    let (userinfo, after) = match rest.rsplit_once('@') {
        Some((u, a)) => (Some(u), a),
        None => (None, rest),
    };
    let mut out = String::with_capacity(text.len());
    out.push_str(prefix);
    if let Some(userinfo) = userinfo {
        let (user, password) = match userinfo.split_once(':') {
            Some((u, _)) => (u, true),
            None => (userinfo, false),
        };
        let plain_user = !user.is_empty() && !user.contains(['/', '?', '#']);
        match (plain_user, password) {
            (true, true) => {
                out.push_str(user);
                out.push_str(":***");
            }
            (true, false) if keeps_bare_user => out.push_str(user),
            _ => out.push_str("***"),
        }
        out.push('@');
    }
    let (before_query, query) = match after.find(['?', '#']) {
        Some(at) => (&after[..at], true),
        None => (after, false),
    };
    // NB: a port that is no number is hidden too: `clickhouse://user:password/db`
    // (the `@host` left out) reads as a host and a port.
    let (authority, path) =
        before_query.split_at(before_query.find('/').unwrap_or(before_query.len()));
    let host_end = if authority.starts_with('[') {
        authority.find(']').map_or(0, |i| i + 1)
    } else {
        0
    };
    match authority[host_end..].rfind(':') {
        Some(colon)
            if !authority[host_end + colon + 1..]
                .bytes()
                .all(|b| b.is_ascii_digit()) =>
        {
            out.push_str(&authority[..host_end + colon]);
            out.push_str(":***");
        }
        _ => out.push_str(authority),
    }
    out.push_str(path);
    if query {
        out.push_str("?…");
    }
    out
}

/// Percent-decoding of a URL's user or password.
fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = bytes.get(i + 1..i + 3)
            && let Some(b) = std::str::from_utf8(hex)
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_url_is_read_and_shown_without_its_password() {
        let u = ClickHouseUrl::parse(
            "clickhouse://diag:s%40cret@ch.example:9000/fleet?secure=true",
            None,
        )
        .unwrap();
        assert_eq!(u.user, "diag");
        assert_eq!(u.password, "s@cret");
        assert_eq!(
            (u.host.as_str(), u.port, u.database.as_str(), u.secure),
            ("ch.example", 9000, "fleet", true)
        );
        assert_eq!(u.http(), "https://ch.example:9000");
        assert!(!u.shown().contains("s@cret"));
        assert!(!format!("{u:?}").contains("cret"));
    }

    #[test]
    fn defaults_and_a_password_from_elsewhere() {
        let u = ClickHouseUrl::parse("clickhouse://ch/diag", Some("pw")).unwrap();
        assert_eq!(
            (u.user.as_str(), u.port, u.password.as_str()),
            ("default", 8123, "pw")
        );
        let s = ClickHouseUrl::parse("clickhouse://ch/diag?secure=true", None).unwrap();
        assert_eq!(s.port, 8443);
    }

    /// Regression (issue 44.3): a `/` in the password, a scheme typo or
    /// another scheme printed the whole URL, password and `api_key=` included.
    #[test]
    fn a_password_or_query_is_never_printed_whatever_the_scheme() {
        for (given, shown) in [
            (
                "clickhouse://diag:s3cr/etPW@h:18999/diag",
                "clickhouse://diag:***@h:18999/diag",
            ),
            (
                "clickhouse:/diag:s3cretPW@h/diag",
                "clickhouse:/diag:***@h/diag",
            ),
            (
                "Clickhouse://diag:s3cretPW@h/diag",
                "Clickhouse://diag:***@h/diag",
            ),
            (
                "https://diag:s3cretPW@h:8443/diag",
                "https://diag:***@h:8443/diag",
            ),
            (
                "otlp://u:s3cretPW@collector:4318",
                "otlp://u:***@collector:4318",
            ),
            (
                "otlp+https://collector/v1/logs?api_key=s3cretPW",
                "otlp+https://collector/v1/logs?…",
            ),
            (
                "clickhouse://h/diag?password=s3cretPW",
                "clickhouse://h/diag?…",
            ),
            ("diag:s3cretPW@h:8123/diag", "diag:***@h:8123/diag"),
            (
                "clickhouse://u:pa@ss?w#rd/s3cretPW@h/diag",
                "clickhouse://u:***@h/diag",
            ),
            (
                "otlp+https://s3cretPW@collector",
                "otlp+https://***@collector",
            ),
            ("clickhouse://diag@h/diag", "clickhouse://diag@h/diag"),
            ("clickhouse://h:8123/diag", "clickhouse://h:8123/diag"),
            ("h:8123", "h:8123"),
            ("clickhouse://u:s3cretPW/diag", "clickhouse://u:***/diag"),
            (
                "clickhouse://[::1]:8123/diag",
                "clickhouse://[::1]:8123/diag",
            ),
        ] {
            assert_eq!(redact(given), shown, "{given}");
        }
    }

    #[test]
    fn a_slash_in_the_password_is_read_as_part_of_it() {
        let u = ClickHouseUrl::parse("clickhouse://diag:s3cr/etPW@h:18999/diag", None).unwrap();
        assert_eq!(
            (
                u.password.as_str(),
                u.host.as_str(),
                u.port,
                u.database.as_str()
            ),
            ("s3cr/etPW", "h", 18999, "diag")
        );
    }

    #[test]
    fn bad_urls_say_what_to_write_and_never_echo_the_password() {
        for (bad, says) in [
            ("http://ch:8123/diag", "not a ClickHouse URL"),
            ("clickhouse://u:topsecret@ch:8123", "no database"),
            (
                "clickhouse://u:topsecret@ch:x/diag",
                "the port is not a number",
            ),
            ("clickhouse://ch:8123/my-db", "plain name"),
            ("clickhouse://ch:8123/diag?tls=1", "unknown option"),
            (
                "clickhouse://ch:8123/diag?password=topsecret",
                "unknown option \"password\"",
            ),
            ("clickhouse:/u:topsecret@ch/diag", "lower case, two slashes"),
            (
                "Clickhouse://u:topsecret@ch/diag",
                "lower case, two slashes",
            ),
            ("otlp://u:topsecret@ch:4318", "otlp+http://"),
            ("clickhouse://u:topsecret/diag", "the port is not a number"),
        ] {
            let e = ClickHouseUrl::parse(bad, None).unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
            assert!(!e.contains("topsecret"), "{e}");
        }
    }
}
