//! Where the recording lives when `--db` is not given.

use std::path::PathBuf;

/// `$XDG_DATA_HOME/kubectl-diag/diag.db`, else `~/.local/share/kubectl-diag/diag.db`.
pub fn default_db() -> PathBuf {
    let data = std::env::var_os("XDG_DATA_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
        .unwrap_or_else(|| PathBuf::from("."));
    data.join("kubectl-diag").join("diag.db")
}

/// The `--db` flag, else `KUBECTL_DIAG_DB`, else the default.
pub fn db_path(flag: Option<&PathBuf>) -> PathBuf {
    flag.cloned()
        .or_else(|| {
            std::env::var_os("KUBECTL_DIAG_DB")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        })
        .unwrap_or_else(default_db)
}
