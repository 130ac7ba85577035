//! The command line: kubectl's global flags, exactly, plus `--db`, and one
//! subcommand per stage of the tool.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

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
    #[command(flatten)]
    pub global: GlobalArgs,

    #[command(subcommand)]
    pub command: Command,
}

/// kubectl's own connection and output flags, spelled as kubectl spells them.
#[derive(Debug, Args, Clone, Default)]
pub struct GlobalArgs {
    /// Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)
    #[arg(long, global = true, value_name = "PATH")]
    pub kubeconfig: Option<PathBuf>,

    /// The kubeconfig context to use (default: the current context)
    #[arg(long, global = true, value_name = "NAME")]
    pub context: Option<String>,

    /// Namespace scope (default: the context's namespace)
    #[arg(short = 'n', long, global = true, value_name = "NAMESPACE")]
    pub namespace: Option<String>,

    /// All namespaces
    #[arg(short = 'A', long, global = true)]
    pub all_namespaces: bool,

    /// Label selector, as kubectl's -l
    #[arg(short = 'l', long, global = true, value_name = "SELECTOR")]
    pub selector: Option<String>,

    /// Output format
    #[arg(short = 'o', long, global = true, value_enum)]
    pub output: Option<OutputFormat>,

    /// The recording (SQLite file)
    #[arg(
        long,
        global = true,
        value_name = "PATH",
        help = "The recording, a SQLite file [env: KUBECTL_DIAG_DB] [default: $XDG_DATA_HOME/kubectl-diag/diag.db]"
    )]
    // NB: KUBECTL_DIAG_DB is read in `paths::db_path`, not by clap, so that `check`
    // can tell an explicit --db (evaluate the recording) from the default.
    pub db: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    Table,
    Wide,
    Json,
    Jsonl,
    Csv,
    Html,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Record Events (every occurrence, exactly once) into the recording
    Record(RecordArgs),
    /// Write stored Event occurrences as JSON Lines
    Export(ExportArgs),
    /// Rebuild one object's history along its owner chain
    Timeline(TimelineArgs),
    /// Find stuck finalizers, hot loops, generation lag and scheduling failures (live, or in the recording with --db/--at)
    Check(CheckArgs),
    /// Run a named query (built-in, or yours in $XDG_CONFIG_HOME/kubectl-diag/queries/)
    Query(QueryArgs),
    /// Run read-only SQL over the recording (-o table|json|jsonl|csv)
    Sql(SqlArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell)
    Completion(CompletionArgs),
    /// Import Events from `kubectl get events` (tables, -o json|yaml), JSON Lines, or `kubectl describe` text
    Import(ImportArgs),
}

#[derive(Debug, Args)]
pub struct RecordArgs {
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
    #[arg(long, default_value = "30d", value_name = "DURATION")]
    pub retain: String,

    /// Drop the oldest data while the recording is larger than this (e.g. 2GiB); 0 means no limit
    #[arg(long, default_value = "4GiB", value_name = "SIZE")]
    pub max_db_size: String,

    /// Apply --retain and --max-db-size to every cluster in the file (imports, other
    /// recorders), not only to the cluster this recorder records
    #[arg(long)]
    pub retain_all: bool,

    /// Serve /healthz and Prometheus /metrics on this address (e.g. 0.0.0.0:9090)
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<String>,

    /// Also keep the history of these resource types, as kubectl names them
    /// (plural, kind or short name, optionally .group), custom resources included; comma separated
    #[arg(long, value_name = "TYPES", value_delimiter = ',')]
    pub kinds: Vec<String>,

    /// Record Events only: no object history
    #[arg(long, conflicts_with = "kinds")]
    pub events_only: bool,

    /// List in chunks of this many objects where a list is paged (as kubectl's --chunk-size);
    /// 0 lists all at once [default: 5000 for Events, 500 for other types]
    #[arg(long, value_name = "N")]
    pub chunk_size: Option<u32>,
}

#[derive(Debug, Args)]
pub struct TimelineArgs {
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
    #[arg(long, value_name = "DURATION|TIME")]
    pub since: Option<String>,

    /// End: a duration back from now or an RFC 3339 time [default: now]
    #[arg(long, value_name = "DURATION|TIME")]
    pub until: Option<String>,

    /// How many owner levels to walk up and down (Deployment -> ReplicaSet -> Pod is 2)
    #[arg(long, default_value_t = 2, value_name = "N")]
    pub depth: u32,

    /// Leave out each Pod's Node and PersistentVolumeClaims
    #[arg(long)]
    pub no_related: bool,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Checks to run (default: all)
    #[arg(value_enum)]
    pub checks: Vec<crate::checks::Check>,

    /// Evaluate the recording as it was at this moment: a duration back from now (2h) or an RFC 3339 time.
    /// Implies reading the recording [default with --db: the latest recorded time]
    #[arg(long, value_name = "TIME")]
    pub at: Option<String>,

    /// Which recorded cluster (uid or context label), when the recording holds several
    #[arg(long, value_name = "ID")]
    pub cluster: Option<String>,

    /// finalizers: a deletion waiting longer than this is stuck
    #[arg(long, default_value = "5m", value_name = "DURATION")]
    pub stuck_after: String,

    /// generation: status behind the spec for longer than this is reported
    #[arg(long, default_value = "5m", value_name = "DURATION")]
    pub lag_after: String,

    /// hotloop: updates per minute above which an object is in a hot loop (also Events per minute for storms)
    #[arg(long, default_value_t = 10.0, value_name = "PER_MINUTE")]
    pub rate: f64,

    /// hotloop, recorded: the span of update counters to rate
    #[arg(long, default_value = "10m", value_name = "DURATION")]
    pub window: String,

    /// hotloop, live: how long to watch every type to measure update rates
    #[arg(long, default_value = "30s", value_name = "DURATION")]
    pub sample: String,

    /// hotloop: also look at Leases, Endpoints, EndpointSlices, Events and Nodes, which churn by design
    #[arg(long)]
    pub include_noisy: bool,

    /// Exit 1 when a finding is at least this severe
    #[arg(long, value_enum, default_value = "warning", value_name = "SEVERITY")]
    pub fail_on: crate::checks::Severity,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Only occurrences whose last time is at or after this: a duration back from now (2h, 30m, 7d) or an RFC 3339 time
    #[arg(long, value_name = "DURATION|TIME")]
    pub since: Option<String>,

    /// Only this cluster (its id: the uid of its kube-system namespace, or its label)
    #[arg(long, value_name = "ID")]
    pub cluster: Option<String>,
}

#[derive(Debug, Args)]
pub struct CompletionArgs {
    /// The shell
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct QueryArgs {
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
    #[arg(long, value_name = "DURATION|TIME")]
    pub since: Option<String>,
}

#[derive(Debug, Args)]
pub struct SqlArgs {
    /// One SQL statement; writes are refused
    #[arg(value_name = "STATEMENT")]
    pub statement: String,

    /// A named parameter for the statement (`:key` in the SQL), repeatable
    #[arg(long = "param", value_name = "KEY=VALUE")]
    pub param: Vec<String>,

    /// Stop the statement after this long (e.g. 30s, 2m) and exit 2; default: no limit
    #[arg(long, value_name = "DURATION")]
    pub timeout: Option<String>,
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// Files to import; `-` reads standard input
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<String>,

    /// The cluster id to store the Events under (keeps imports apart from recorded clusters)
    #[arg(long, default_value = "imported", value_name = "ID")]
    pub cluster: String,

    /// When kubectl text was taken (RFC 3339): the moment its ages (`5m`, `2d`)
    /// count back from. Default: each file's modification time
    #[arg(long, value_name = "TIME")]
    pub taken_at: Option<String>,
}
