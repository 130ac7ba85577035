//! What `record` was asked, its flags resolved once (`cli::resolve`, as
//! ripgrep resolves its arguments before any search): the watches' namespaces
//! checked, `--listen` and every `--ship` destination parsed, its password
//! and headers read, all before anything connects.

use std::net::SocketAddr;
use std::path::PathBuf;

use crate::k8s::connect::Target;
use crate::ship::Destination;

use super::retention::Retention;

/// `record`'s resolved flags.
pub struct RecordOptions {
    /// The cluster to record.
    pub target: Target,
    /// One watch per namespace named (`-n a,b`), or one cluster-wide (None).
    pub namespaces: Vec<Option<String>>,
    /// The recording's file.
    pub db: PathBuf,
    /// `--once`, `--quiet`, `--verbose`.
    pub once: bool,
    pub quiet: bool,
    pub verbose: bool,
    /// `--retain`, `--max-db-size`, `--retain-all`.
    pub retention: Retention,
    /// `--commit-every`, in milliseconds.
    pub commit_every: Option<i64>,
    /// `--listen`.
    pub listen: Option<SocketAddr>,
    /// `--check-every`, with the options a bare `check` runs with.
    pub check_every: Option<CheckEvery>,
    /// `--metrics-max-series`.
    pub metrics_max_series: usize,
    /// `--kinds`, `--exclude-kinds`: as typed, resolved after discovery.
    pub kinds: Vec<String>,
    pub exclude_kinds: Vec<String>,
    /// `--events-only`.
    pub events_only: bool,
    /// `--rediscover-every`, in milliseconds.
    pub rediscover_every: i64,
    /// `--configmap-values`.
    pub configmap_values: bool,
    /// `--ship`, each with its password or headers.
    pub ship: Vec<Destination>,
    /// `--ship-create-schema`, `--ship-on-cluster`.
    pub ship_create_schema: bool,
    pub ship_on_cluster: Option<String>,
    /// `--chunk-size`.
    pub chunk_size: Option<u32>,
}

/// `record --check-every`: how often, and the options and `--window` of a
/// bare `kubectl diag check`, so the two never drift apart.
#[derive(Debug, Clone)]
pub struct CheckEvery {
    pub every_ms: i64,
    pub options: crate::checks::Options,
    pub window_ms: i64,
}

/// `--ship` URLs with `--ship-password-file`, `--ship-header` and
/// `--ship-header-file` read: the destinations, or what is wrong with them.
pub fn destinations(
    urls: &[String],
    password_file: Option<&std::path::Path>,
    header: &[String],
    header_file: Option<&std::path::Path>,
) -> anyhow::Result<Vec<Destination>> {
    let password = crate::ship::url::password_from("--ship-password-file", password_file)?;
    let headers = crate::ship::otlp::parse_headers(
        header,
        header_file,
        "--ship-header",
        "--ship-header-file",
    )?;
    let mut destinations = Vec::new();
    for url in urls {
        destinations.push(
            Destination::parse(url, password.as_deref(), &headers)
                .map_err(|e| anyhow::anyhow!("--ship {e}"))?,
        );
    }
    if !headers.is_empty() && !destinations.iter().any(|d| d.takes_headers()) {
        anyhow::bail!(
            "--ship-header/--ship-header-file: headers are for OTLP destinations (--ship otlp+http://…); ClickHouse takes a password (--ship-password-file)"
        );
    }
    Ok(destinations)
}
