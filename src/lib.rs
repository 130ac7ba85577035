//! kubectl-diag: keep what Kubernetes forgets.
//!
//! The stages, one folder each:
//! - [`k8s`]: the only code that speaks Kubernetes; converts wire objects to [`model`] types.
//! - [`record`]: watches the cluster and feeds the store.
//! - [`store`]: the SQLite recording (schema, writer, readers); every statement lives in `queries/`.
//! - [`commands`]: what each subcommand does, rendering into a `Write`.
//! - [`render`]: output shared by commands.

// NB: here, not in main.rs, so that the benchmarks and tests run on the
// allocator the binary ships with.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

pub mod build_info;
pub mod changes;
pub mod checks;
pub mod cli;
pub mod commands;
pub mod exit;
pub mod k8s;
pub mod metrics;
pub mod model;
pub mod paths;
pub mod quantity;
pub mod record;
pub mod render;
pub mod ship;
pub mod specdiff;
pub mod store;
pub mod timeline;
pub mod units;

use std::io::Write;

use cli::{Cli, Command};

/// Runs one command line parsed by [`Cli::parse_args`]; returns the process exit code.
///
/// Output goes to `out`, progress and warnings to `err`, so every command can
/// be driven from a test with two `Vec<u8>`.
pub fn run(cli: Cli, out: &mut dyn Write, err: &mut dyn Write) -> anyhow::Result<u8> {
    let mut err = render::EscapeControls::new(err);
    let code = dispatch(cli, out, &mut err);
    let _ = err.flush();
    code
}

fn dispatch(mut cli: Cli, out: &mut dyn Write, err: &mut dyn Write) -> anyhow::Result<u8> {
    // NB: `--store`: the command runs on a recording pulled from the store,
    // removed when this returns (`pulled` lives until then).
    let _pulled = match cli.command.store() {
        Some((url, which)) => {
            let url = ship::url::ClickHouseUrl::parse(
                url,
                std::env::var(ship::url::PASSWORD_ENV).ok().as_deref(),
            )
            .map_err(|e| anyhow::anyhow!("--store {e}"))?;
            let pulled = match &cli.command {
                Command::Timeline(t) => {
                    commands::timeline::pull_store(&cli.global, t, &url, &which)?
                }
                _ => ship::pull::pull(&url, &which, None)?,
            };
            cli.global.db = Some(pulled.path.clone());
            Some(pulled)
        }
        None => None,
    };
    match &cli.command {
        Command::Ship(args) => commands::ship::run(&cli.global, args, out, err),
        Command::Record(args) => record::run(&cli.global, args, err),
        Command::Export(args) => commands::export::run(&cli.global, args, out),
        Command::Timeline(args) => {
            commands::timeline::run(&cli.global, args, out, err, render::Paint::for_stdout())
        }
        Command::Changes(args) => {
            commands::changes::run(&cli.global, args, out, render::Paint::for_stdout())
        }
        Command::Check(args) => {
            commands::check::run(&cli.global, args, out, err, render::Paint::for_stdout())
        }
        Command::Query(args) => commands::query::run(&cli.global, args, out, err),
        Command::Sql(args) => commands::sql::run(&cli.global, args, out),
        Command::Completion(args) => {
            let mut cmd = <Cli as clap::CommandFactory>::command();
            // NB: clap_complete panics when its writer fails (a closed pipe), so the
            // script is built in memory and written here, where errors are handled.
            let mut script = Vec::new();
            clap_complete::generate(args.shell, &mut cmd, "kubectl-diag", &mut script);
            out.write_all(&script)?;
            Ok(exit::OK)
        }
        Command::Import(args) => commands::import::run(&cli.global, args, out, err),
        // NB: stdin and stdout are the protocol's; `out` is not used.
        Command::Mcp(args) => commands::mcp::run(&cli.global, args, err),
    }
}
