//! Stamps the build with the commit it was built from and the build date
//! (`src/build_info.rs` reads them), so `kubectl diag --version` and every
//! recording say which build made them.
//!
//! Without git (a source archive, `cargo install` from crates.io) the commit
//! comes from the `.cargo_vcs_info.json` that `cargo package` writes, else it
//! is `unknown`: the build never fails for want of git.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

#[path = "src/build_info/utc.rs"]
mod utc;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/build_info/utc.rs");
    println!("cargo:rerun-if-env-changed=SOURCE_DATE_EPOCH");
    let dir =
        PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let commit = git_commit(&dir)
        .or_else(|| vcs_info_commit(&dir))
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=KUBECTL_DIAG_COMMIT={commit}");
    println!(
        "cargo:rustc-env=KUBECTL_DIAG_BUILD_DATE={}",
        utc::rfc3339(build_time())
    );
}

/// `git` in `dir`, trimmed stdout; None when git is missing or fails.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .current_dir(dir)
        .args(args)
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let s = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!s.is_empty()).then_some(s)
}

/// HEAD's commit, when this package is the top of its own git work tree.
fn git_commit(dir: &Path) -> Option<String> {
    let top = git(dir, &["rev-parse", "--show-toplevel"])?;
    // NB: a source archive unpacked inside another repository (a distribution's
    // packaging repo, a monorepo) would otherwise be stamped with that
    // repository's HEAD.
    if fs::canonicalize(&top).ok()? != fs::canonicalize(dir).ok()? {
        return None;
    }
    let commit = git(dir, &["rev-parse", "--short=12", "HEAD"])?;
    // Run again when HEAD moves: a commit or a checkout. In a worktree these
    // live in different directories, hence --git-path. Only existing files:
    // cargo reruns the script on every build for a path that does not exist.
    let mut watched = vec![git(dir, &["rev-parse", "--git-path", "HEAD"])?];
    if let Some(branch) = git(dir, &["symbolic-ref", "-q", "HEAD"]) {
        watched.extend(git(dir, &["rev-parse", "--git-path", &branch]));
    }
    watched.extend(git(dir, &["rev-parse", "--git-path", "packed-refs"]));
    for path in watched {
        let path = dir.join(path);
        if path.exists() {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
    Some(commit)
}

/// The commit `cargo package` recorded: `{"git": {"sha1": "…"}, …}`.
fn vcs_info_commit(dir: &Path) -> Option<String> {
    let text = fs::read_to_string(dir.join(".cargo_vcs_info.json")).ok()?;
    // One fixed field of a file cargo writes: a search, not a JSON parser in the build.
    let after = &text[text.find("\"sha1\"")? + "\"sha1\"".len()..];
    let value = after.split('"').nth(1)?;
    (value.len() >= 12 && value.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| value[..12].to_string())
}

/// SOURCE_DATE_EPOCH when set (reproducible builds), else now.
fn build_time() -> i64 {
    match env::var("SOURCE_DATE_EPOCH") {
        // A malformed value fails the build, as the reproducible-builds spec asks,
        // rather than silently stamping the wrong date.
        Ok(v) => v
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("SOURCE_DATE_EPOCH is not a number of seconds: {v:?}")),
        Err(_) => SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64),
    }
}
