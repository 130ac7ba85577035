//! The OTLP endpoint as `--ship` names it, and the headers `--ship-header` adds.

/// An OTLP/HTTP logs endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OtlpUrl {
    pub secure: bool,
    pub host: String,
    pub port: u16,
    /// The path requests are posted to (default `/v1/logs`).
    pub path: String,
}

impl OtlpUrl {
    /// `otlp+http://host[:port][/path]` or `otlp+https://…`; port 4318 (http) or
    /// 443 (https) when left out, path `/v1/logs` when left out (or `/`).
    pub fn parse(text: &str) -> Result<OtlpUrl, crate::ship::url::UrlError> {
        let fail = |why: &str| crate::ship::url::UrlError::new(text, why);
        let (secure, rest) = if let Some(r) = text.strip_prefix("otlp+https://") {
            (true, r)
        } else if let Some(r) = text.strip_prefix("otlp+http://") {
            (false, r)
        } else {
            return Err(fail(
                "not an OTLP URL: write otlp+http://host[:port][/path] or otlp+https://… (e.g. otlp+http://collector:4318)",
            ));
        };
        if rest.contains('?') || rest.contains('#') {
            return Err(fail(
                "a query or fragment is not understood: give credentials with --ship-header/--header",
            ));
        }
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, ""),
        };
        if authority.contains('@') {
            return Err(fail(
                "credentials do not go in the URL: give them as a header (--ship-header-file/--header-file)",
            ));
        }
        let (host, port) = match authority.rsplit_once(':') {
            Some((h, p)) if !h.is_empty() && !p.contains(']') => {
                let port = p
                    .parse::<u16>()
                    .map_err(|_| fail("the port is not a number: give one such as 4318"))?;
                (h.to_string(), port)
            }
            _ => (authority.to_string(), if secure { 443 } else { 4318 }),
        };
        if host.is_empty() {
            return Err(fail("no host: write otlp+http://HOST:4318"));
        }
        let path = if path.is_empty() || path == "/" {
            "/v1/logs".to_string()
        } else {
            path.to_string()
        };
        Ok(OtlpUrl {
            secure,
            host,
            port,
            path,
        })
    }

    /// As it is shown and stored (it holds no secret: headers are never part of it).
    pub fn shown(&self) -> String {
        format!(
            "otlp+{}://{}:{}{}",
            if self.secure { "https" } else { "http" },
            self.host,
            self.port,
            self.path
        )
    }

    /// The HTTP URL requests go to.
    pub fn http(&self) -> String {
        format!(
            "{}://{}:{}{}",
            if self.secure { "https" } else { "http" },
            self.host,
            self.port,
            self.path
        )
    }
}

/// A header whose name is not one. NB: the name is not quoted: `api-key s3cretTOKEN: x`
/// (a space for the colon) puts the secret before the first colon.
pub(super) const NOT_A_NAME: &str = "the text before the first ':' is not a header name (its text is not shown): write 'Name: value', the name in letters, digits and '-'";

/// Headers from `--ship-header 'Name: value'` (each) and a header file (one per
/// line; blank lines and lines starting with `#` skipped). The value is never
/// part of an error message.
pub fn parse_headers(
    given: &[String],
    file: Option<&std::path::Path>,
    flag: &str,
    file_flag: &str,
) -> anyhow::Result<Vec<(String, String)>> {
    let mut lines: Vec<(String, String)> = given
        .iter()
        .enumerate()
        .map(|(i, h)| (format!("{flag} #{}", i + 1), h.clone()))
        .collect();
    if let Some(path) = file {
        let text = std::fs::read_to_string(path).map_err(|e| {
            anyhow::anyhow!(
                "{file_flag} {}: cannot read it ({e}); give a file of 'Name: value' lines",
                path.display()
            )
        })?;
        for (i, line) in text.lines().enumerate() {
            let line = line.trim_end_matches('\r');
            if line.trim().is_empty() || line.trim_start().starts_with('#') {
                continue;
            }
            lines.push((
                format!("{file_flag} {} line {}", path.display(), i + 1),
                line.to_string(),
            ));
        }
    }
    let mut out = Vec::new();
    for (whence, line) in lines {
        let Some((name, value)) = line.split_once(':') else {
            anyhow::bail!("{whence}: not 'Name: value' (no colon)");
        };
        let (name, value) = (name.trim(), value.trim());
        if http::HeaderName::from_bytes(name.as_bytes()).is_err() {
            anyhow::bail!("{whence}: {NOT_A_NAME}");
        }
        if http::HeaderValue::from_str(value).is_err() {
            anyhow::bail!(
                "{whence}: the value of {name} is not a valid header value (its text is not shown)"
            );
        }
        let lower = name.to_ascii_lowercase();
        if matches!(
            lower.as_str(),
            "content-type" | "content-encoding" | "content-length" | "host" | "transfer-encoding"
        ) {
            anyhow::bail!("{whence}: {name} is set by kubectl-diag itself");
        }
        out.push((name.to_string(), value.to_string()));
    }
    Ok(out)
}
