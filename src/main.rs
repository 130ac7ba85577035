//! `kubectl-diag`: parse the command line, run it, map the outcome to an exit code.
//!
//! Everything else lives in the library; see `kubectl_diag::run`.

use std::io::{self, Write};
use std::process::ExitCode;

use kubectl_diag::cli::{Cli, Command};
use kubectl_diag::exit;

fn main() -> ExitCode {
    let cli = Cli::parse_args();
    let stdout = io::stdout();
    // NB: `mcp` speaks on stdout through its own writer: holding the lock would block it.
    let mut out: Box<dyn Write> = match cli.command {
        Command::Mcp(_) => Box::new(io::sink()),
        _ => Box::new(stdout.lock()),
    };
    // NB: stderr stays unlocked: the recorder's tasks and threads write progress
    // to it too, and a lock held here for the whole run would deadlock them.
    let mut err = kubectl_diag::render::EscapeControls::new(io::stderr());
    match kubectl_diag::run(cli, &mut out, &mut err) {
        Ok(code) => {
            // NB: a flush that fails on a closed pipe is the reader's choice, not our error.
            let _ = out.flush();
            ExitCode::from(code)
        }
        Err(e) if exit::is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = writeln!(err, "error: {e}");
            for cause in e.chain().skip(1) {
                let _ = writeln!(err, "  caused by: {cause}");
            }
            ExitCode::from(exit::ERROR)
        }
    }
}
