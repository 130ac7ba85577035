//! Exit codes, shared by every command so scripts and cron can rely on them.

/// Success, and for `check`: nothing at or above `--fail-on`.
pub const OK: u8 = 0;
/// `check` found something at or above `--fail-on`.
pub const FINDINGS: u8 = 1;
/// Bad input, a cluster that said no, a database that cannot be used.
pub const ERROR: u8 = 2;

/// True when the error is a write to a closed pipe (`kubectl diag … | head`):
/// the reader has what it wanted, so this is not a failure.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
