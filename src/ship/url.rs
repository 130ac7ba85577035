//! Where `record --ship`, `ship --to` and `--store` send or read:
//! `clickhouse://[user[:password]@]host[:port]/database[?secure=true]`.
//! The password may also come from `KUBECTL_DIAG_CLICKHOUSE_PASSWORD` or a
//! file; it is never printed ([`ClickHouseUrl::shown`] leaves it out).

use std::fmt;

/// The environment variable a ClickHouse password may come from.
pub const PASSWORD_ENV: &str = "KUBECTL_DIAG_CLICKHOUSE_PASSWORD";

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
    pub given: String,
    pub why: String,
}

impl ClickHouseUrl {
    /// Parses `text`; `password` (from the environment or a file) fills a
    /// password the URL leaves out.
    pub fn parse(text: &str, password: Option<&str>) -> Result<ClickHouseUrl, UrlError> {
        let fail = |why: &str| UrlError {
            given: redact(text),
            why: why.to_string(),
        };
        let rest = text.strip_prefix("clickhouse://").ok_or_else(|| {
            fail("not a ClickHouse URL: write clickhouse://[user[:password]@]host[:port]/database (e.g. clickhouse://diag@clickhouse:8123/diag)")
        })?;
        let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
        let (authority, database) = rest
            .split_once('/')
            .ok_or_else(|| fail("no database: end the URL with /DATABASE (e.g. /diag)"))?;
        let (userinfo, hostport) = match authority.rsplit_once('@') {
            Some((u, h)) => (Some(u), h),
            None => (None, authority),
        };
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
                _ => {
                    return Err(fail(&format!(
                        "unknown option {pair:?}: the only option is secure=true (HTTPS)"
                    )));
                }
            }
        }
        let (host, port) = match hostport.rsplit_once(':') {
            Some((h, p)) if !h.ends_with(']') || p.is_empty() => {
                let port = p.parse::<u16>().map_err(|_| {
                    fail(&format!("{p:?} is not a port: give a number such as 8123"))
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

/// `text` with any password replaced by `***`, for error messages.
pub fn redact(text: &str) -> String {
    let Some(rest) = text.strip_prefix("clickhouse://") else {
        return text.to_string();
    };
    let (authority, tail) = match rest.find('/') {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    match authority.rsplit_once('@') {
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _)) => format!("clickhouse://{user}:***@{host}{tail}"),
            None => text.to_string(),
        },
        None => text.to_string(),
    }
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

    #[test]
    fn bad_urls_say_what_to_write_and_never_echo_the_password() {
        for (bad, says) in [
            ("http://ch:8123/diag", "not a ClickHouse URL"),
            ("clickhouse://u:topsecret@ch:8123", "no database"),
            ("clickhouse://u:topsecret@ch:x/diag", "is not a port"),
            ("clickhouse://ch:8123/my-db", "plain name"),
            ("clickhouse://ch:8123/diag?tls=1", "unknown option"),
        ] {
            let e = ClickHouseUrl::parse(bad, None).unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
            assert!(!e.contains("topsecret"), "{e}");
        }
    }
}
