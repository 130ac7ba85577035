//! The command line: kubectl's connection flags, `--db`, and one subcommand per
//! stage of the tool. Each subcommand takes only the flags it uses, and `-o`
//! only the formats it prints: clap refuses the rest (exit code 2), so no flag
//! is accepted and then ignored.
//!
//! A new subcommand flattens the flag groups it uses ([`KubeArgs`],
//! [`NamespaceArg`], [`AllNamespacesArg`], [`DbArg`]), gives its own `-o` enum
//! if it prints several formats, and names the groups in [`Command::takes`].

use std::path::PathBuf;

use clap::error::ErrorKind;
use clap::{Args, CommandFactory, Parser, Subcommand, ValueEnum};

mod resolve;
pub use resolve::{Invocation, Resolved};

use crate::units::{parse_duration_ms, parse_size, parse_taken_at_arg, parse_time_arg};

#[derive(Debug, Parser)]
#[command(
    name = "kubectl-diag",
    bin_name = "kubectl diag",
    version = crate::build_info::VERSION,
    about = "Keep what Kubernetes forgets: record Events and object transitions, rebuild timelines, diagnose stuck controllers",
    long_about = "kubectl-diag records every Event occurrence and every meaningful object transition into one \
portable SQLite file, so that what happened at 03:00 can still be read at 09:00 - after the apiserver's \
one-hour Event TTL has deleted the evidence.\n\nRun as `kubectl diag` once `kubectl-diag` is on PATH."
)]
pub struct Cli {
    /// The connection flags and `--db`: given before the subcommand, as kubectl
    /// allows (`kubectl diag --db X export`); after [`Cli::parse_args`], the
    /// effective values, the subcommand's own included.
    #[command(flatten)]
    pub global: GlobalArgs,

    #[command(subcommand)]
    pub command: Command,
}

impl Cli {
    /// Parses the process's arguments; on an error, prints it and exits 2.
    pub fn parse_args() -> Cli {
        Cli::try_parse_args_from(std::env::args_os()).unwrap_or_else(|e| e.exit())
    }

    /// Parses `args` and merges the flags given before the subcommand with the
    /// subcommand's own (those after it win). A flag before the subcommand that
    /// the subcommand does not use is an error, as it would be after it.
    // NB: not `Parser::parse`: that leaves the subcommand's own flags out of `global`.
    pub fn try_parse_args_from<I, T>(args: I) -> Result<Cli, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        let mut cli = Cli::try_parse_from(args)?;
        let takes = cli.command.takes();
        let g = &mut cli.global;
        let given_before: [(&str, bool, bool); 5] = [
            ("--kubeconfig", g.kubeconfig.is_some(), takes.kube.is_some()),
            ("--context", g.context.is_some(), takes.kube.is_some()),
            (
                "-n/--namespace",
                g.namespace.is_some(),
                takes.namespace.is_some(),
            ),
            (
                "-A/--all-namespaces",
                g.all_namespaces,
                takes.all_namespaces.is_some(),
            ),
            ("--db", g.db.is_some(), takes.db.is_some()),
        ];
        if let Some((flag, _, _)) = given_before
            .iter()
            .find(|(_, given, taken)| *given && !taken)
        {
            let name = cli.command.name();
            return Err(Cli::command().error(
                ErrorKind::UnknownArgument,
                format!(
                    "`kubectl diag {name}` does not use {flag}: remove it (`kubectl diag {name} --help` lists its flags)"
                ),
            ));
        }
        if let Some(k) = takes.kube {
            g.kubeconfig = k.kubeconfig.clone().or(g.kubeconfig.take());
            g.context = k.context.clone().or(g.context.take());
        }
        if let Some(n) = takes.namespace {
            g.namespace = n.namespace.clone().or(g.namespace.take());
        }
        if let Some(a) = takes.all_namespaces {
            g.all_namespaces |= a.all_namespaces;
        }
        if let Some(d) = takes.db {
            g.db = d.db.clone().or(g.db.take());
        }
        Ok(cli)
    }
}

/// kubectl's connection flags and `--db`, as the commands read them.
#[derive(Debug, Args, Clone, Default)]
pub struct GlobalArgs {
    /// Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)
    #[arg(long, value_name = "PATH")]
    pub kubeconfig: Option<PathBuf>,

    /// The kubeconfig context to use (default: the current context)
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,

    /// Namespace (for the subcommands that take -n; each one's help says what it means there)
    #[arg(short = 'n', long, value_name = "NAMESPACE")]
    pub namespace: Option<String>,

    /// All namespaces (for the subcommands that take -A)
    #[arg(short = 'A', long)]
    pub all_namespaces: bool,

    #[arg(long, value_name = "PATH", help = DB_HELP)]
    // NB: KUBECTL_DIAG_DB is read in `paths::db_path`, not by clap, so that `check`
    // can tell an explicit --db (evaluate the recording) from the default.
    pub db: Option<PathBuf>,
}

impl GlobalArgs {
    /// The cluster these flags name, for `k8s::connect`.
    pub fn kube(&self) -> crate::k8s::connect::Target {
        crate::k8s::connect::Target {
            kubeconfig: self.kubeconfig.clone(),
            context: self.context.clone(),
            namespace: self.namespace.clone(),
        }
    }
}

const DB_HELP: &str = "The recording, a SQLite file [env: KUBECTL_DIAG_DB] [default: $XDG_DATA_HOME/kubectl-diag/diag.db]";

/// `--kubeconfig` and `--context`: for the subcommands that talk to a cluster.
#[derive(Debug, Args, Clone, Default)]
pub struct KubeArgs {
    /// Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)
    #[arg(long, value_name = "PATH")]
    pub kubeconfig: Option<PathBuf>,

    /// The kubeconfig context to use (default: the current context)
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,
}

/// `-n`; its help is the subcommand's (`mut_arg`), since each reads it its own way.
#[derive(Debug, Args, Clone, Default)]
pub struct NamespaceArg {
    /// Namespace
    #[arg(short = 'n', long, value_name = "NAMESPACE")]
    pub namespace: Option<String>,
}

/// `-A`.
#[derive(Debug, Args, Clone, Default)]
pub struct AllNamespacesArg {
    /// All namespaces (overrides -n)
    #[arg(short = 'A', long)]
    pub all_namespaces: bool,
}

/// `--db`.
#[derive(Debug, Args, Clone, Default)]
pub struct DbArg {
    #[arg(long, value_name = "PATH", help = DB_HELP)]
    pub db: Option<PathBuf>,
}

/// `--store`: read a ClickHouse store instead of a recording.
#[derive(Debug, Args, Clone, Default)]
pub struct StoreArg {
    /// Read this ClickHouse store instead of a recording:
    /// clickhouse://[user[:password]@]host[:port]/database[?secure=true] (password also from
    /// $KUBECTL_DIAG_CLICKHOUSE_PASSWORD); --cluster chooses the cluster when it holds several
    #[arg(long, value_name = "URL", conflicts_with = "db")]
    pub store: Option<String>,
}

/// The flag groups a subcommand takes (see [`Command::takes`]).
#[derive(Default)]
pub struct Takes<'a> {
    pub kube: Option<&'a KubeArgs>,
    pub namespace: Option<&'a NamespaceArg>,
    pub all_namespaces: Option<&'a AllNamespacesArg>,
    pub db: Option<&'a DbArg>,
}

pub use crate::commands::changes::ChangesOutput;
pub use crate::commands::check::CheckOutput;
pub use crate::commands::sql::RowsOutput;
pub use crate::commands::timeline::TimelineOutput;

/// Makes the commands' `-o` enums clap's values: the commands keep plain
/// enums, the spelling and the help are said here, once.
macro_rules! value_enum {
    ($ty:ident { $($variant:ident => $name:literal $(: $help:literal)?),* $(,)? }) => {
        impl ValueEnum for $ty {
            fn value_variants<'a>() -> &'a [Self] {
                &[$($ty::$variant),*]
            }
            fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
                Some(match self {
                    $($ty::$variant => clap::builder::PossibleValue::new($name)$(.help($help))?),*
                })
            }
        }
    };
}

value_enum!(TimelineOutput { Table => "table", Wide => "wide", Json => "json", Html => "html" });
value_enum!(CheckOutput {
    Table => "table",
    Wide => "wide",
    Json => "json",
    Openmetrics => "openmetrics": "The findings as OpenMetrics gauges, once (a textfile collector, a CronJob)",
});
value_enum!(ChangesOutput { Table => "table", Wide => "wide", Json => "json" });
value_enum!(RowsOutput { Table => "table", Json => "json", Jsonl => "jsonl", Csv => "csv" });

/// `check NAME…`: the checks by the names their JSON prints.
impl ValueEnum for crate::checks::Check {
    fn value_variants<'a>() -> &'a [Self] {
        &crate::checks::Check::ALL
    }
    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.name()))
    }
}

/// `check --fail-on`.
impl ValueEnum for crate::checks::Severity {
    fn value_variants<'a>() -> &'a [Self] {
        use crate::checks::Severity;
        &[Severity::Info, Severity::Warning, Severity::Error]
    }
    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.as_str()))
    }
}

/// `--rate`: a positive, finite number of updates per minute.
fn per_minute(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(r) if r.is_finite() && r > 0.0 => Ok(r),
        _ => Err(format!(
            "'{text}' is not a rate: give updates per minute, a number above 0 such as 10"
        )),
    }
}

/// One name of `--kinds` or `--exclude-kinds`. NB: empty, `record --kinds ''`
/// recorded every type while `changes --kinds ''` matched none.
fn kind_name(text: &str) -> Result<String, String> {
    let name = text.trim();
    if name.is_empty() {
        return Err(
            "an empty resource type name: name a type as kubectl does (deploy, \
             configmaps, widgets.example.com), or leave the flag out"
                .into(),
        );
    }
    Ok(name.to_string())
}

/// One name of `record --exclude-kinds`. NB: `--exclude-kinds events` was
/// accepted and did nothing: Events are recorded by their own watch, not as
/// a type's objects. The names are kubectl's for Events (the spelling
/// discovery would resolve is checked again after discovery).
fn excluded_kind(text: &str) -> Result<String, String> {
    let name = kind_name(text)?;
    let lower = name.to_ascii_lowercase();
    let bare = lower
        .strip_suffix(".events.k8s.io")
        .or_else(|| lower.strip_suffix('.'))
        .unwrap_or(&lower);
    if matches!(bare, "events" | "event" | "ev") {
        return Err(EVENTS_NOT_EXCLUDED.into());
    }
    Ok(name)
}

pub use crate::record::types::EVENTS_NOT_EXCLUDED;

/// `import --cluster`: the id imported Events are stored under.
fn cluster_id(text: &str) -> Result<String, String> {
    if text.trim().is_empty() {
        return Err(
            "an empty cluster id: name the cluster these Events came from \
             (default: imported)"
                .into(),
        );
    }
    Ok(text.to_string())
}

/// A duration above zero, in milliseconds (an interval something repeats at).
fn every(text: &str) -> Result<i64, String> {
    match parse_duration_ms(text) {
        Ok(ms) if ms > 0 => Ok(ms),
        Ok(_) => Err(format!(
            "'{text}' is not an interval: give a duration above 0, such as 1m"
        )),
        Err(e) => Err(e.to_string()),
    }
}

/// `--metrics-max-series`: at least 1.
fn max_series(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!(
            "'{text}' is not a number of series: give 1 or more, such as 2000"
        )),
    }
}

/// The longest `--commit-every`. A session declares its window, and a recorder
/// on another host counts it as alive while its heartbeat is younger than the
/// window plus `store::session::REMOTE_SESSION_TIMEOUT_MS`; an open transaction
/// holds at most `record::flush::WORTH_BATCH` changes whatever the window.
pub const MAX_COMMIT_EVERY: std::time::Duration = std::time::Duration::from_secs(300);

/// `record --commit-every`: 0 (commit whenever the writer has nothing waiting)
/// up to [`MAX_COMMIT_EVERY`].
fn commit_every(text: &str) -> Result<i64, String> {
    let max = MAX_COMMIT_EVERY.as_millis() as i64;
    match parse_duration_ms(text) {
        Ok(ms) if ms <= max => Ok(ms),
        Ok(_) => Err(format!(
            "'{text}' is too long: at most {}m; a longer window holds more in memory and \
             leaves the recording's heartbeat stale for readers that cannot ask",
            max / 60_000
        )),
        Err(e) => Err(e.to_string()),
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Record Events (every occurrence, exactly once) into the recording
    Record(RecordArgs),
    /// Write stored Event occurrences as JSON Lines
    Export(ExportArgs),
    /// Rebuild one object's history along its owner chain
    Timeline(TimelineArgs),
    /// What changed in the cluster: spec diffs with their writers, objects created and deleted, types added and removed
    Changes(ChangesArgs),
    /// Why isn't it ready (progress), stuck finalizers, hot loops, generation lag, scheduling failures, containers that cannot start (pods): live, or in the recording with --db/--at
    Check(CheckArgs),
    /// Run a named query (built-in, or yours in $XDG_CONFIG_HOME/kubectl-diag/queries/)
    Query(QueryArgs),
    /// Run read-only SQL over the recording (-o table|json|jsonl|csv)
    Sql(SqlArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell)
    Completion(CompletionArgs),
    /// Import kube-apiserver audit logs (with who made each write), `kubectl get events` (tables,
    /// -o json|yaml), JSON Lines, or `kubectl describe` text
    Import(ImportArgs),
    /// Send a recording (or an import) to ClickHouse, once: sent again, it changes nothing there
    Ship(ShipArgs),
    /// Serve the recording to AI assistants: a read-only Model Context Protocol server on stdio
    Mcp(McpArgs),
}

impl Command {
    /// The subcommand's name, as typed.
    pub fn name(&self) -> &'static str {
        match self {
            Command::Record(_) => "record",
            Command::Export(_) => "export",
            Command::Timeline(_) => "timeline",
            Command::Changes(_) => "changes",
            Command::Check(_) => "check",
            Command::Query(_) => "query",
            Command::Sql(_) => "sql",
            Command::Completion(_) => "completion",
            Command::Import(_) => "import",
            Command::Ship(_) => "ship",
            Command::Mcp(_) => "mcp",
        }
    }

    /// The connection, namespace and `--db` flags this subcommand uses.
    pub fn takes(&self) -> Takes<'_> {
        match self {
            Command::Record(a) => Takes {
                kube: Some(&a.kube),
                namespace: Some(&a.namespace),
                all_namespaces: Some(&a.all_namespaces),
                db: Some(&a.db),
            },
            Command::Check(a) => Takes {
                kube: Some(&a.kube),
                namespace: Some(&a.namespace),
                all_namespaces: Some(&a.all_namespaces),
                db: Some(&a.db),
            },
            Command::Timeline(a) => Takes {
                kube: Some(&a.kube),
                namespace: Some(&a.namespace),
                db: Some(&a.db),
                ..Takes::default()
            },
            Command::Changes(a) => Takes {
                namespace: Some(&a.namespace),
                all_namespaces: Some(&a.all_namespaces),
                db: Some(&a.db),
                ..Takes::default()
            },
            Command::Export(a) => Takes {
                namespace: Some(&a.namespace),
                all_namespaces: Some(&a.all_namespaces),
                db: Some(&a.db),
                ..Takes::default()
            },
            Command::Import(a) => Takes {
                namespace: Some(&a.namespace),
                db: Some(&a.db),
                ..Takes::default()
            },
            Command::Query(a) => Takes {
                db: Some(&a.db),
                ..Takes::default()
            },
            Command::Sql(a) => Takes {
                db: Some(&a.db),
                ..Takes::default()
            },
            Command::Completion(_) => Takes::default(),
            Command::Mcp(a) => Takes {
                kube: Some(&a.kube),
                db: Some(&a.db),
                ..Takes::default()
            },
            Command::Ship(a) => Takes {
                db: Some(&a.db),
                ..Takes::default()
            },
        }
    }
}

#[derive(Debug, Args)]
#[command(mut_arg("namespace", |a| a.help("Record only these namespaces, comma separated (default: all)")))]
pub struct RecordArgs {
    #[command(flatten)]
    pub kube: KubeArgs,
    #[command(flatten)]
    pub namespace: NamespaceArg,
    #[command(flatten)]
    pub all_namespaces: AllNamespacesArg,
    #[command(flatten)]
    pub db: DbArg,

    /// Take what the apiserver holds now, store it, and exit
    #[arg(long)]
    pub once: bool,

    /// No status line on stderr
    #[arg(long, short = 'q')]
    pub quiet: bool,

    /// Log each watch's lifecycle on stderr (opened, ended, errors, relists, gaps)
    #[arg(long, short = 'v')]
    pub verbose: bool,

    /// Drop recorded data older than this (e.g. 30d, 12h); 0 keeps everything
    #[arg(long, default_value = "30d", value_name = "DURATION", value_parser = parse_duration_ms)]
    pub retain: i64,

    /// Drop the oldest data while the recording is larger than this (e.g. 2GiB); 0 means no limit
    #[arg(long, default_value = "4GiB", value_name = "SIZE", value_parser = parse_size)]
    pub max_db_size: u64,

    /// Apply --retain and --max-db-size to every cluster in the file (imports, other
    /// recorders), not only to the cluster this recorder records
    #[arg(long)]
    pub retain_all: bool,

    /// Commit at the latest this long after a change was received (default 1m, 5s with
    /// --ship; at most 5m). Readers (timeline, check, changes, query, sql, export) ask the
    /// recorder to commit before they read, so they never wait for it; a longer window writes less
    #[arg(long, value_name = "DURATION", value_parser = commit_every)]
    pub commit_every: Option<i64>,

    /// Serve /healthz and Prometheus /metrics (OpenMetrics) on this address (e.g. 0.0.0.0:9090)
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<String>,

    /// Run `check` on the recording this often and serve its findings on /metrics as
    /// kubectl_diag_finding gauges (check's defaults; the first check at once)
    #[arg(long, value_name = "DURATION", value_parser = every, requires = "listen", conflicts_with = "once")]
    pub check_every: Option<i64>,

    /// /metrics: series of one family at most (Event rates, findings); past it, new Event
    /// label sets count under reason="other" and findings only in kubectl_diag_findings
    #[arg(long, default_value_t = crate::metrics::DEFAULT_MAX_SERIES, value_name = "N", value_parser = max_series)]
    pub metrics_max_series: usize,

    /// Keep the history of these resource types only, as kubectl names them
    /// (plural, kind or short name, optionally .group), custom resources included; comma separated
    #[arg(long, value_name = "TYPES", value_delimiter = ',', value_parser = kind_name)]
    pub kinds: Vec<String>,

    /// Leave these resource types out (same names as --kinds); comma separated. Events
    /// are always recorded
    #[arg(
        long,
        value_name = "TYPES",
        value_delimiter = ',',
        conflicts_with = "events_only",
        value_parser = excluded_kind
    )]
    pub exclude_kinds: Vec<String>,

    /// Record Events only: no object history
    #[arg(long, conflicts_with = "kinds")]
    pub events_only: bool,

    /// How often to look for types that appeared, went, or became allowed by RBAC (besides
    /// noticing CRDs and APIServices within seconds)
    #[arg(long, default_value = "1m", value_name = "DURATION", value_parser = every, conflicts_with = "events_only")]
    pub rediscover_every: i64,

    /// Keep ConfigMap values in their diffs (old → new, cut at 256 bytes); by default only
    /// which keys changed, were added or removed. Secrets are never read, whatever this says
    #[arg(long, conflicts_with = "events_only")]
    pub configmap_values: bool,

    /// Also ship what is recorded to this store, exactly once, from an outbox in the recording
    /// (repeatable): clickhouse://[user[:password]@]host[:port]/database[?secure=true], or OTLP
    /// logs to a collector: otlp+http://host[:4318][/v1/logs] (or otlp+https://)
    #[arg(long, value_name = "URL")]
    pub ship: Vec<String>,

    /// A header sent with every OTLP request, such as an API key (repeatable): 'Name: value'.
    /// Never printed; prefer --ship-header-file for secrets
    #[arg(long, value_name = "HEADER", requires = "ship")]
    pub ship_header: Vec<String>,

    /// OTLP headers from this file: one 'Name: value' a line (# comments and blank lines skipped)
    #[arg(long, value_name = "PATH", requires = "ship")]
    pub ship_header_file: Option<PathBuf>,

    /// The --ship password, from this file (else the URL's, else $KUBECTL_DIAG_CLICKHOUSE_PASSWORD)
    #[arg(long, value_name = "PATH", requires = "ship")]
    pub ship_password_file: Option<PathBuf>,

    /// Create the tables in the --ship database first (IF NOT EXISTS; TTL from --retain)
    #[arg(long, requires = "ship")]
    pub ship_create_schema: bool,

    /// With --ship-create-schema: create them ON CLUSTER this ClickHouse cluster, with Replicated engines
    #[arg(long, value_name = "NAME", requires = "ship_create_schema", value_parser = on_cluster)]
    pub ship_on_cluster: Option<String>,

    /// List in chunks of this many objects where a list is paged (as kubectl's --chunk-size);
    /// 0 lists all at once [default: 5000 for Events, 500 for other types]
    #[arg(long, value_name = "N")]
    pub chunk_size: Option<u32>,
}

#[derive(Debug, Args)]
#[command(mut_arg("namespace", |a| a.help("The object's namespace (default: the context's)")))]
pub struct TimelineArgs {
    #[command(flatten)]
    pub kube: KubeArgs,
    #[command(flatten)]
    pub namespace: NamespaceArg,
    #[command(flatten)]
    pub db: DbArg,
    #[command(flatten)]
    pub store: StoreArg,

    /// Output format
    #[arg(short = 'o', long, value_enum, default_value_t = TimelineOutput::Table)]
    pub output: TimelineOutput,

    /// The object, as kubectl names it: deploy/web, pod/web-7c9d-x2, deployment.apps/web,
    /// or TYPE NAME; custom resources by plural, kind or short name
    #[arg(required = true, num_args = 1..=2, value_name = "TYPE/NAME")]
    pub object: Vec<String>,

    /// Pick one incarnation when several objects had this name
    #[arg(long, value_name = "UID")]
    pub uid: Option<String>,

    /// Which recorded cluster (uid or context label), when the recording holds several
    #[arg(long, value_name = "ID")]
    pub cluster: Option<String>,

    /// Start: a duration back from now (2h) or an RFC 3339 time [default: the object's beginning]
    #[arg(long, value_name = "DURATION|TIME", value_parser = parse_time_arg)]
    pub since: Option<i64>,

    /// End: a duration back from now or an RFC 3339 time [default: now]
    #[arg(long, value_name = "DURATION|TIME", value_parser = parse_time_arg)]
    pub until: Option<i64>,

    /// How many owner levels to walk up and down (Deployment -> ReplicaSet -> Pod is 2)
    #[arg(long, default_value_t = 2, value_name = "N")]
    pub depth: u32,

    /// Leave out each Pod's Node and PersistentVolumeClaims
    #[arg(long)]
    pub no_related: bool,
}

#[derive(Debug, Args)]
#[command(mut_arg("namespace", |a| a.help("Only changes in this namespace (cluster-scoped objects and types left out; default: all)")))]
pub struct ChangesArgs {
    #[command(flatten)]
    pub namespace: NamespaceArg,
    #[command(flatten)]
    pub all_namespaces: AllNamespacesArg,
    #[command(flatten)]
    pub db: DbArg,
    #[command(flatten)]
    pub store: StoreArg,

    /// Output format: table folds what controllers do in bulk; wide and json keep every change
    #[arg(short = 'o', long, value_enum, default_value_t = ChangesOutput::Table)]
    pub output: ChangesOutput,

    /// Start: a duration back from now (2h) or an RFC 3339 time
    #[arg(long, default_value = "1h", value_name = "DURATION|TIME", value_parser = parse_time_arg)]
    pub since: i64,

    /// End: a duration back from now or an RFC 3339 time [default: now]
    #[arg(long, value_name = "DURATION|TIME", value_parser = parse_time_arg)]
    pub until: Option<i64>,

    /// Only these resource types, as kubectl names them (plural, kind or short name); comma separated
    #[arg(long, value_name = "TYPES", value_delimiter = ',', value_parser = kind_name)]
    pub kinds: Vec<String>,

    /// Which recorded cluster (uid or context label), when the recording holds several
    #[arg(long, value_name = "ID")]
    pub cluster: Option<String>,

    /// Every cluster the recording or store holds, with a CLUSTER column
    #[arg(long, conflicts_with = "cluster")]
    pub all_clusters: bool,
}

#[derive(Debug, Args)]
#[command(mut_arg("namespace", |a| a.help("Only findings in this namespace, and about the Namespace itself (default: all)")))]
pub struct CheckArgs {
    #[command(flatten)]
    pub kube: KubeArgs,
    #[command(flatten)]
    pub namespace: NamespaceArg,
    #[command(flatten)]
    pub all_namespaces: AllNamespacesArg,
    #[command(flatten)]
    pub db: DbArg,
    #[command(flatten)]
    pub store: StoreArg,

    /// Output format
    #[arg(short = 'o', long, value_enum, default_value_t = CheckOutput::Table)]
    pub output: CheckOutput,

    /// Checks to run (default: all): controllers, progress, finalizers, hotloop, generation, scheduling, pods
    #[arg(value_enum)]
    pub checks: Vec<crate::checks::Check>,

    /// Evaluate the recording as it was at this moment: a duration back from now (2h) or an RFC 3339 time.
    /// Implies reading the recording [default with --db: the latest recorded time]
    #[arg(long, value_name = "TIME", value_parser = parse_time_arg)]
    pub at: Option<i64>,

    /// Which recorded cluster (uid or context label), when the recording holds several
    #[arg(long, value_name = "ID")]
    pub cluster: Option<String>,

    /// Every cluster the recording or store holds, with a CLUSTER column
    #[arg(long, conflicts_with = "cluster")]
    pub all_clusters: bool,

    /// progress: short of its replicas or not Ready for longer than this; finalizers: a deletion waiting longer than this is stuck; pods: a container waiting (ImagePullBackOff, CrashLoopBackOff, …) longer than this
    #[arg(long, default_value = "5m", value_name = "DURATION", value_parser = parse_duration_ms)]
    pub stuck_after: i64,

    /// generation: status behind the spec for longer than this is reported
    #[arg(long, default_value = "5m", value_name = "DURATION", value_parser = parse_duration_ms)]
    pub lag_after: i64,

    /// hotloop: updates per minute above which an object is in a hot loop (also Events per minute for storms)
    #[arg(long, default_value = "10", value_name = "PER_MINUTE", value_parser = per_minute)]
    pub rate: f64,

    /// hotloop, recorded: the span of update counters to rate
    #[arg(long, default_value = "10m", value_name = "DURATION", value_parser = parse_duration_ms)]
    pub window: i64,

    /// hotloop, live: how long to watch every type to measure update rates
    #[arg(long, default_value = "30s", value_name = "DURATION", value_parser = parse_duration_ms)]
    pub sample: i64,

    /// hotloop: also look at Leases, Endpoints, EndpointSlices, Events and Nodes, which churn by design
    #[arg(long)]
    pub include_noisy: bool,

    /// Exit 1 when a finding is at least this severe
    #[arg(long, value_enum, default_value = "warning", value_name = "SEVERITY")]
    pub fail_on: crate::checks::Severity,
}

#[derive(Debug, Args)]
#[command(mut_arg("namespace", |a| a.help("Only Events in this namespace: the Event's or its object's (default: all)")))]
pub struct ExportArgs {
    #[command(flatten)]
    pub namespace: NamespaceArg,
    #[command(flatten)]
    pub all_namespaces: AllNamespacesArg,
    #[command(flatten)]
    pub db: DbArg,
    #[command(flatten)]
    pub store: StoreArg,

    /// Only occurrences whose last time is at or after this: a duration back from now (2h, 30m, 7d) or an RFC 3339 time
    #[arg(long, value_name = "DURATION|TIME", value_parser = parse_time_arg)]
    pub since: Option<i64>,

    /// Only this cluster (its id: the uid of its kube-system namespace, or its label)
    #[arg(long, value_name = "ID")]
    pub cluster: Option<String>,
}

#[derive(Debug, Args)]
pub struct McpArgs {
    #[command(flatten)]
    pub kube: KubeArgs,
    #[command(flatten)]
    pub db: DbArg,
    #[command(flatten)]
    pub store: StoreArg,

    /// The cluster to read (its uid or label) when the recording or the store holds several
    #[arg(long, value_name = "ID")]
    pub cluster: Option<String>,

    /// Stop a tool call after this long (e.g. 30s, 2m) and answer with an error saying so
    #[arg(long, value_name = "DURATION", value_parser = parse_duration_ms, default_value = "60s")]
    pub timeout: i64,
}

#[derive(Debug, Args)]
pub struct CompletionArgs {
    /// The shell
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct QueryArgs {
    #[command(flatten)]
    pub db: DbArg,
    #[command(flatten)]
    pub store: StoreArg,

    /// Output format
    #[arg(short = 'o', long, value_enum, default_value_t = RowsOutput::Table)]
    pub output: RowsOutput,

    /// The query to run (see --list)
    #[arg(value_name = "NAME", required_unless_present = "list")]
    pub name: Option<String>,

    /// List the queries with their descriptions and parameters
    #[arg(long)]
    pub list: bool,

    /// A parameter of the query, repeatable
    #[arg(long = "param", value_name = "KEY=VALUE")]
    pub param: Vec<String>,

    /// Shorthand for --param since=…: a duration back from now (2h) or an RFC 3339 time
    #[arg(long, value_name = "DURATION|TIME", value_parser = parse_time_arg)]
    pub since: Option<i64>,

    /// Only this cluster's rows (uid or label), when the recording or store holds several
    #[arg(long, value_name = "ID")]
    pub cluster: Option<String>,

    /// The query once per cluster the recording or store holds, with a CLUSTER column
    #[arg(long, conflicts_with = "cluster")]
    pub all_clusters: bool,
}

#[derive(Debug, Args)]
pub struct SqlArgs {
    #[command(flatten)]
    pub db: DbArg,
    #[command(flatten)]
    pub store: StoreArg,

    /// Output format
    #[arg(short = 'o', long, value_enum, default_value_t = RowsOutput::Table)]
    pub output: RowsOutput,

    /// One SQL statement; writes are refused
    #[arg(value_name = "STATEMENT")]
    pub statement: String,

    /// A named parameter for the statement (`:key` in the SQL), repeatable
    #[arg(long = "param", value_name = "KEY=VALUE")]
    pub param: Vec<String>,

    /// Stop the statement after this long (e.g. 30s, 2m) and exit 2; default: no limit
    #[arg(long, value_name = "DURATION", value_parser = parse_duration_ms)]
    pub timeout: Option<i64>,
}

/// `--ship-on-cluster`: a name ON CLUSTER may take.
fn on_cluster(text: &str) -> Result<String, String> {
    if crate::ship::clickhouse::valid_cluster_name(text) {
        Ok(text.to_string())
    } else {
        Err(format!(
            "{text:?} is not a ClickHouse cluster name: letters, digits, _ and - only (as in remote_servers)"
        ))
    }
}

#[derive(Debug, Args)]
pub struct ShipArgs {
    #[command(flatten)]
    pub db: DbArg,

    /// Where to: clickhouse://[user[:password]@]host[:port]/database[?secure=true], or
    /// otlp+http://host[:4318][/v1/logs] (or otlp+https://) for OTLP logs
    #[arg(long, required = true, value_name = "URL")]
    pub to: String,

    /// With an OTLP --to: a header sent with every request, such as an API key (repeatable):
    /// 'Name: value'. Never printed; prefer --header-file for secrets
    #[arg(long, value_name = "HEADER")]
    pub header: Vec<String>,

    /// With an OTLP --to: headers from this file, one 'Name: value' a line
    #[arg(long, value_name = "PATH")]
    pub header_file: Option<PathBuf>,

    /// The password, from this file (else the URL's, else $KUBECTL_DIAG_CLICKHOUSE_PASSWORD)
    #[arg(long, value_name = "PATH")]
    pub password_file: Option<PathBuf>,

    /// Create the tables first (IF NOT EXISTS)
    #[arg(long)]
    pub create_schema: bool,

    /// With --create-schema: ON CLUSTER this ClickHouse cluster, with Replicated engines
    #[arg(long, value_name = "NAME", requires = "create_schema", value_parser = on_cluster)]
    pub on_cluster: Option<String>,

    /// With --create-schema: drop rows in ClickHouse older than this (e.g. 90d); 0 keeps everything
    #[arg(long, default_value = "0", value_name = "DURATION", value_parser = parse_duration_ms)]
    pub retain: i64,
}

/// `--object KIND/NAME`: (Kind as the API spells it, name).
fn object_arg(value: &str) -> Result<(String, String), String> {
    match value.split_once('/') {
        Some((kind, name)) if !kind.is_empty() && !name.is_empty() && !name.contains('/') => {
            let kind = crate::k8s::text::kind_from_lower(kind).map_or_else(
                || {
                    let mut c = kind.chars();
                    c.next()
                        .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
                        .unwrap_or_default()
                },
                str::to_string,
            );
            Ok((kind, name.to_string()))
        }
        _ => Err(format!(
            "{value:?} is not KIND/NAME (e.g. pod/web-1, deployment/web)"
        )),
    }
}

#[derive(Debug, Args)]
#[command(mut_arg("namespace", |a| a.help("The namespace kubectl text was taken in, for tables without a NAMESPACE column")))]
pub struct ImportArgs {
    #[command(flatten)]
    pub namespace: NamespaceArg,
    #[command(flatten)]
    pub db: DbArg,

    /// Files to import; `-` reads standard input
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<String>,

    /// The cluster id to store the Events under (keeps imports apart from recorded clusters;
    /// default: imported). Audit logs: every entry goes there; without it, entries that name
    /// their cluster (GKE, EKS, AKS) go to that cluster, and the others join the recorded
    /// cluster whose objects they write (matched by uid), else `imported`
    #[arg(long, value_name = "ID", value_parser = cluster_id)]
    pub cluster: Option<String>,

    /// When kubectl text was taken (RFC 3339): the moment its ages (`5m`, `2d`)
    /// count back from. Default: each file's modification time
    #[arg(long, value_name = "TIME", value_parser = parse_taken_at_arg)]
    pub taken_at: Option<(i64, i64)>,

    /// Whose Events are in text that does not say (an `Events:` table pasted alone, header-less
    /// describe rows): `KIND/NAME`, e.g. `pod/web-1` (its namespace from -n)
    #[arg(long, value_name = "KIND/NAME", value_parser = object_arg)]
    pub object: Option<(String, String)>,

    /// Audit logs: keep ConfigMap values in their diffs, as `record --configmap-values` does
    /// (off: a digest per value). A Secret's data is never stored
    #[arg(long)]
    pub configmap_values: bool,
}
