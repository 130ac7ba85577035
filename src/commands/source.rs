//! Where a reading command's history comes from, resolved once, at the top
//! (issue 43), as ripgrep resolves its arguments before any search: the
//! recording `--db` names, one pulled from a ClickHouse store (`--store`),
//! the one `$KUBECTL_DIAG_DB` names, or the default file. The commands ask
//! it, instead of each reading `--db` and the environment again (and
//! deciding "is there a recording?" three times), and `--store` no longer
//! works by overwriting `--db`.

use std::path::{Path, PathBuf};

use crate::ship::pull::Pulled;

/// Where history is read from.
#[derive(Debug)]
pub enum Source {
    /// `--db PATH`.
    Flag(PathBuf),
    /// `--store URL`: a copy of what the command needs, pulled into a
    /// temporary recording that is removed when this is dropped.
    Store(Pulled),
    /// `$KUBECTL_DIAG_DB`.
    Env(PathBuf),
    /// Neither: the default recording (`paths::default_db`), which may not exist.
    Default(PathBuf),
}

impl Source {
    /// The ClickHouse store `--store URL` names (its password from the
    /// environment when the URL has none). The caller pulls from it what its
    /// command reads ([`crate::ship::pull::pull`], or only a timeline's slice)
    /// and holds the copy as [`Source::Store`].
    pub fn store_url(url: &str) -> anyhow::Result<crate::ship::url::ClickHouseUrl> {
        crate::ship::url::ClickHouseUrl::parse(
            url,
            std::env::var(crate::ship::url::PASSWORD_ENV)
                .ok()
                .as_deref(),
        )
        .map_err(|e| anyhow::anyhow!("--store {e}"))
    }

    /// The source `--db` and the environment name (no `--store`).
    pub fn of_flags(db: Option<&Path>) -> Source {
        if let Some(path) = db {
            return Source::Flag(path.to_path_buf());
        }
        match std::env::var_os("KUBECTL_DIAG_DB").filter(|v| !v.is_empty()) {
            Some(path) => Source::Env(PathBuf::from(path)),
            None => Source::Default(crate::paths::default_db()),
        }
    }

    /// The recording's file.
    pub fn path(&self) -> &Path {
        match self {
            Source::Flag(p) | Source::Env(p) | Source::Default(p) => p,
            Source::Store(pulled) => &pulled.path,
        }
    }

    /// Whether the command line itself names the history (`--db` or
    /// `--store`): `check` reads the live cluster unless it does (or `--at`
    /// asks for a past moment).
    pub fn on_command_line(&self) -> bool {
        matches!(self, Source::Flag(_) | Source::Store(_))
    }

    /// Whether there is a recording to read: one named (a missing file is
    /// then an error the reader says), or the default one on disk. Without
    /// one, `timeline`, `changes` and `check --at` answer from the live
    /// cluster as far as its evidence reaches.
    pub fn has_recording(&self) -> bool {
        match self {
            Source::Default(p) => p.exists(),
            _ => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_named_recording_counts_even_when_missing_and_the_default_only_when_on_disk() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("none.db");
        assert!(Source::Flag(missing.clone()).has_recording());
        assert!(Source::Env(missing.clone()).has_recording());
        assert!(!Source::Default(missing.clone()).has_recording());
        std::fs::write(&missing, b"").unwrap();
        assert!(Source::Default(missing.clone()).has_recording());
        assert!(Source::Flag(missing.clone()).on_command_line());
        assert!(!Source::Env(missing).on_command_line());
    }
}
