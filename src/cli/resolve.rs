//! A parsed command line resolved once into what the commands take (issue
//! 43), as ripgrep turns its flags into `HiArgs` before any search: the
//! namespace scope (`-A` over `-n`), the cluster to reach, the clusters to
//! read, `--store` URLs and destinations parsed, password and header files
//! read, and the history to read (a `--store` pulled). No command sees a clap
//! struct; every rule that reads two flags together is here, once.

use super::{
    ChangesArgs, CheckArgs, Cli, Command, ExportArgs, GlobalArgs, ImportArgs, McpArgs, QueryArgs,
    RecordArgs, ShipArgs, SqlArgs, TimelineArgs,
};
use crate::commands::changes::ChangesOptions;
use crate::commands::check::CheckOptions;
use crate::commands::export::ExportOptions;
use crate::commands::import::ImportOptions;
use crate::commands::mcp::McpOptions;
use crate::commands::query::QueryOptions;
use crate::commands::ship::ShipOptions;
use crate::commands::source::Source;
use crate::commands::sql::SqlOptions;
use crate::commands::timeline::TimelineOptions;
use crate::model::Which;
use crate::record::{CheckEvery, RecordOptions};

/// One subcommand with its options resolved.
pub enum Invocation {
    Record(Box<RecordOptions>),
    Export(ExportOptions),
    Timeline(Box<TimelineOptions>),
    Changes(ChangesOptions),
    Check(Box<CheckOptions>),
    Query(QueryOptions),
    Sql(SqlOptions),
    Completion(clap_complete::Shell),
    Import(ImportOptions),
    Ship(Box<ShipOptions>),
    Mcp(McpOptions),
}

/// A command line, resolved: what to run, and the history it reads.
pub struct Resolved {
    /// Where history is read (with `--store`, the pulled copy, removed
    /// when this is dropped).
    pub history: Source,
    pub invocation: Invocation,
}

impl Cli {
    /// Resolves this command line; Err names the flag and the fix. A
    /// `--store` is pulled last, once every other flag is known to be good.
    pub fn resolve(self) -> anyhow::Result<Resolved> {
        let Cli { global, command } = self;
        let db = global.db.clone();
        let whole = |store: &Option<String>, which: Which| {
            store.as_deref().map(|url| (url.to_string(), which))
        };
        let (invocation, store) = match command {
            Command::Record(a) => (Invocation::Record(Box::new(record(&global, a)?)), None),
            Command::Export(a) => {
                let which = Which::One(a.cluster.clone()).or_all(a.cluster.is_none());
                let store = whole(&a.store.store, which);
                (Invocation::Export(export(&global, a)), store)
            }
            Command::Timeline(a) => {
                let store = a.store.store.clone();
                let options = timeline(&global, a)?;
                let history = match &store {
                    Some(url) => Source::Store(crate::commands::timeline::pull_store(
                        &options,
                        &Source::store_url(url)?,
                        &Which::One(options.cluster.clone()),
                    )?),
                    None => Source::of_flags(db.as_deref()),
                };
                let invocation = Invocation::Timeline(Box::new(options));
                return Ok(Resolved {
                    history,
                    invocation,
                });
            }
            Command::Changes(a) => {
                let which = Which::One(a.cluster.clone()).or_all(a.all_clusters);
                let store = whole(&a.store.store, which);
                (Invocation::Changes(changes(&global, a)), store)
            }
            Command::Check(a) => {
                let which = Which::One(a.cluster.clone()).or_all(a.all_clusters);
                let store = whole(&a.store.store, which);
                (Invocation::Check(Box::new(check(&global, a))), store)
            }
            Command::Query(a) => {
                let which = Which::One(a.cluster.clone()).or_all(a.all_clusters);
                let store = whole(&a.store.store, which);
                (Invocation::Query(query(a)), store)
            }
            Command::Sql(a) => (Invocation::Sql(sql(a)?), None),
            Command::Completion(a) => (Invocation::Completion(a.shell), None),
            Command::Import(a) => (Invocation::Import(import(&global, a)), None),
            Command::Ship(a) => (Invocation::Ship(Box::new(ship(a)?)), None),
            Command::Mcp(a) => (Invocation::Mcp(mcp(&global, a)), None),
        };
        let history = match &store {
            Some((url, which)) => Source::Store(crate::ship::pull::pull(
                &Source::store_url(url)?,
                which,
                None,
            )?),
            None => Source::of_flags(db.as_deref()),
        };
        Ok(Resolved {
            history,
            invocation,
        })
    }

    /// What a bare `kubectl diag check` runs with: `record --check-every`
    /// checks with it, so the two never drift apart.
    pub fn check_defaults() -> CheckOptions {
        match Cli::try_parse_args_from(["kubectl-diag", "check"]) {
            Ok(Cli {
                global,
                command: Command::Check(args),
            }) => check(&global, args),
            // NB: a unit test parses this same line.
            _ => unreachable!("`kubectl diag check` parses"),
        }
    }
}

trait OrAll {
    fn or_all(self, all: bool) -> Which;
}

impl OrAll for Which {
    /// `--all-clusters` (or a reader's "every cluster" default) over `--cluster`.
    fn or_all(self, all: bool) -> Which {
        if all { Which::All } else { self }
    }
}

/// `-n`, unless `-A` asks for every namespace.
fn namespace(global: &GlobalArgs) -> Option<String> {
    global.namespace.clone().filter(|_| !global.all_namespaces)
}

fn record(global: &GlobalArgs, a: RecordArgs) -> anyhow::Result<RecordOptions> {
    let listen = match &a.listen {
        Some(addr) => Some(crate::record::listen_address(addr)?),
        None => None,
    };
    // NB: before connecting: a bad -n is refused even with no cluster to reach.
    let namespaces = crate::record::namespaces(namespace(global).as_deref())?;
    let ship = crate::record::destinations(
        &a.ship,
        a.ship_password_file.as_deref(),
        &a.ship_header,
        a.ship_header_file.as_deref(),
    )?;
    let check_every = a.check_every.map(|every_ms| {
        let bare = Cli::check_defaults();
        CheckEvery {
            every_ms,
            options: bare.thresholds,
            window_ms: bare.window_ms,
        }
    });
    Ok(RecordOptions {
        target: global.kube(),
        namespaces,
        db: crate::paths::db_path(global.db.as_ref()),
        once: a.once,
        quiet: a.quiet,
        verbose: a.verbose,
        retention: crate::record::retention::Retention {
            max_age_ms: a.retain,
            max_bytes: a.max_db_size,
            all_clusters: a.retain_all,
        },
        commit_every: a.commit_every,
        listen,
        check_every,
        metrics_max_series: a.metrics_max_series,
        kinds: a.kinds,
        exclude_kinds: a.exclude_kinds,
        events_only: a.events_only,
        rediscover_every: a.rediscover_every,
        configmap_values: a.configmap_values,
        ship,
        ship_create_schema: a.ship_create_schema,
        ship_on_cluster: a.ship_on_cluster,
        chunk_size: a.chunk_size,
    })
}

fn export(global: &GlobalArgs, a: ExportArgs) -> ExportOptions {
    ExportOptions {
        namespace: namespace(global),
        since: a.since,
        cluster: a.cluster,
    }
}

fn timeline(global: &GlobalArgs, a: TimelineArgs) -> anyhow::Result<TimelineOptions> {
    let (type_name, name) = crate::commands::timeline::split(&a.object)?;
    let target = global.kube();
    Ok(TimelineOptions {
        namespace: crate::k8s::connect::default_namespace(&target),
        target,
        output: a.output,
        type_name,
        name,
        uid: a.uid,
        cluster: a.cluster,
        since: a.since,
        until: a.until,
        depth: a.depth,
        related: !a.no_related,
    })
}

fn changes(global: &GlobalArgs, a: ChangesArgs) -> ChangesOptions {
    ChangesOptions {
        target: global.kube(),
        namespace: namespace(global),
        output: a.output,
        since: a.since,
        until: a.until,
        kinds: a.kinds,
        clusters: Which::One(a.cluster).or_all(a.all_clusters),
    }
}

fn check(global: &GlobalArgs, a: CheckArgs) -> CheckOptions {
    CheckOptions {
        target: global.kube(),
        namespace: namespace(global),
        output: a.output,
        checks: a.checks,
        at: a.at,
        clusters: Which::One(a.cluster).or_all(a.all_clusters),
        thresholds: crate::checks::Options {
            stuck_after_ms: a.stuck_after,
            lag_after_ms: a.lag_after,
            rate_per_minute: a.rate,
            include_noisy: a.include_noisy,
            storm_per_minute: a.rate,
        },
        window_ms: a.window,
        sample_ms: a.sample,
        fail_on: a.fail_on,
    }
}

fn query(a: QueryArgs) -> QueryOptions {
    QueryOptions {
        output: a.output,
        name: a.name.filter(|_| !a.list),
        param: a.param,
        since: a.since,
        clusters: Which::One(a.cluster).or_all(a.all_clusters),
    }
}

fn sql(a: SqlArgs) -> anyhow::Result<SqlOptions> {
    let store = match &a.store.store {
        Some(url) => Some(
            crate::ship::url::ClickHouseUrl::parse(
                url,
                std::env::var(crate::ship::url::PASSWORD_ENV)
                    .ok()
                    .as_deref(),
            )
            .map_err(|e| anyhow::anyhow!("--store {e}"))?,
        ),
        None => None,
    };
    Ok(SqlOptions {
        output: a.output,
        statement: a.statement,
        param: a.param,
        timeout: a.timeout,
        store,
    })
}

fn import(global: &GlobalArgs, a: ImportArgs) -> ImportOptions {
    ImportOptions {
        files: a.files,
        namespace: global.namespace.clone(),
        cluster: a.cluster,
        taken_at: a.taken_at,
        object: a.object,
        configmap_values: a.configmap_values,
    }
}

fn ship(a: ShipArgs) -> anyhow::Result<ShipOptions> {
    Ok(ShipOptions {
        destination: crate::commands::ship::destination(
            &a.to,
            a.password_file.as_deref(),
            &a.header,
            a.header_file.as_deref(),
        )?,
        create_schema: a.create_schema,
        on_cluster: a.on_cluster,
        retain: a.retain,
    })
}

fn mcp(global: &GlobalArgs, a: McpArgs) -> McpOptions {
    McpOptions {
        kubeconfig: global.kubeconfig.clone(),
        context: global.context.clone(),
        store: a.store.store,
        cluster: a.cluster,
        timeout: a.timeout,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolved(argv: &[&str]) -> Invocation {
        let cli =
            Cli::try_parse_args_from(std::iter::once("kubectl-diag").chain(argv.iter().copied()))
                .unwrap();
        cli.resolve().unwrap().invocation
    }

    /// The recorder checks with a bare `kubectl diag check`'s defaults.
    #[test]
    fn the_recorder_checks_with_the_defaults_of_check() {
        let bare = Cli::check_defaults();
        assert_eq!(bare.window_ms, 10 * 60_000);
        assert_eq!(bare.thresholds.stuck_after_ms, 5 * 60_000);
        assert_eq!(bare.thresholds.lag_after_ms, 5 * 60_000);
        let Invocation::Record(r) = resolved(&[
            "record",
            "--db=/nonexistent/x.db",
            "--listen=127.0.0.1:0",
            "--check-every=2m",
        ]) else {
            unreachable!()
        };
        let every = r.check_every.expect("--check-every");
        assert_eq!(every.every_ms, 120_000);
        assert_eq!(every.window_ms, bare.window_ms);
        assert_eq!(every.options.stuck_after_ms, bare.thresholds.stuck_after_ms);
    }

    /// `check NAME` takes each check by the name its JSON prints, and
    /// `--fail-on` each severity by its own.
    #[test]
    fn the_command_line_takes_the_names_the_json_prints() {
        use crate::checks::{Check, Severity};
        let names: Vec<&str> = Check::ALL.iter().map(|c| c.name()).collect();
        let mut argv = vec!["check"];
        argv.extend(&names);
        let Invocation::Check(c) = resolved(&argv) else {
            unreachable!()
        };
        assert_eq!(c.checks, Check::ALL);
        for s in [Severity::Info, Severity::Warning, Severity::Error] {
            let Invocation::Check(c) = resolved(&["check", "--fail-on", s.as_str()]) else {
                unreachable!()
            };
            assert_eq!(c.fail_on, s);
        }
    }

    /// `-A` wins over `-n`, wherever each was given.
    #[test]
    fn all_namespaces_wins_over_a_namespace() {
        let Invocation::Record(r) =
            resolved(&["-n", "ADV-A", "record", "-A", "--db=/nonexistent/x.db"])
        else {
            unreachable!()
        };
        assert_eq!(r.namespaces, [None]);
        let Invocation::Check(c) = resolved(&["check", "-n", "a", "-A"]) else {
            unreachable!()
        };
        assert_eq!(c.namespace, None);
        let Invocation::Check(c) = resolved(&["-n", "a", "check"]) else {
            unreachable!()
        };
        assert_eq!(c.namespace.as_deref(), Some("a"));
    }

    /// `--cluster` and `--all-clusters` become one choice.
    #[test]
    fn the_clusters_read_are_one_choice() {
        let Invocation::Changes(c) = resolved(&["changes", "--all-clusters"]) else {
            unreachable!()
        };
        assert_eq!(c.clusters, Which::All);
        let Invocation::Query(q) = resolved(&["query", "x", "--cluster", "prod"]) else {
            unreachable!()
        };
        assert_eq!(q.clusters, Which::One(Some("prod".into())));
        let Invocation::Query(q) = resolved(&["query", "--list"]) else {
            unreachable!()
        };
        assert_eq!((q.name, q.clusters), (None, Which::One(None)));
    }

    /// Regression: an MCP tool's `--namespace=--store=x` once risked reading
    /// the store; a value that looks like a flag stays a value.
    #[test]
    fn an_mcp_flag_whose_value_looks_like_a_flag_stays_a_value() {
        let cli = Cli::try_parse_args_from([
            "kubectl-diag",
            "timeline",
            "--namespace=--store=x",
            "--db=/nonexistent",
            "--",
            "--store=x",
        ])
        .unwrap();
        match cli.command {
            Command::Timeline(t) => assert!(t.store.store.is_none()),
            _ => unreachable!(),
        }
    }
}
