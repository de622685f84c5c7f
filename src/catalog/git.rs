//! The `base` comparison of `kb_check` (`docs/reference/catalog-spec.md` §6.4.5) through the `git`
//! executable.
//!
//! Invariants:
//!
//! - `base` is validated before git runs (not empty, no leading `-`) and is passed after
//!   `--end-of-options`, so it can never be read as an option.
//! - git runs in the knowledge-base root with NUL-separated output (`-z`), so Japanese file
//!   names arrive as they are; paths are root-relative (`--relative`), files outside the root
//!   are left out.

use std::path::Path;
use std::process::{Command, Output};

use super::Language;
use crate::error::{Error, Result};
use crate::messages::{Msg, msg};

/// Files changed between the merge base of `base` and `HEAD` and the working tree, plus
/// untracked files git does not ignore; root-relative.
pub fn changed_files(root: &Path, base: &str, lang: Language) -> Result<Vec<String>> {
    if base.is_empty() || base.starts_with('-') {
        return Err(Error::invalid_argument(msg!(lang, BadBase, base)));
    }
    let inside = git(root, &["rev-parse", "--is-inside-work-tree"], lang)?;
    if !inside.status.success() || String::from_utf8_lossy(&inside.stdout).trim() != "true" {
        return Err(Error::invalid_argument(Msg::NotARepository.text(lang)));
    }
    let spec = format!("{base}^{{commit}}");
    let commit = git(root, &["rev-parse", "--verify", "--quiet", "--end-of-options", &spec], lang)?;
    if !commit.status.success() {
        return Err(Error::invalid_argument(msg!(lang, UnknownRef, base)));
    }
    let commit = String::from_utf8_lossy(&commit.stdout).trim().to_owned();
    let merge_base = git(root, &["merge-base", &commit, "HEAD"], lang)?;
    let from = if merge_base.status.success() {
        String::from_utf8_lossy(&merge_base.stdout).trim().to_owned()
    } else {
        // No common history (or no HEAD yet): compare with the commit itself.
        commit
    };
    let diff = git(root, &["diff", "--name-only", "--no-renames", "--relative", "-z", &from], lang)?;
    let untracked = git(root, &["ls-files", "--others", "--exclude-standard", "-z"], lang)?;
    for out in [&diff, &untracked] {
        if !out.status.success() {
            tracing::error!("git failed: {}", String::from_utf8_lossy(&out.stderr).trim());
            return Err(Error::internal(Msg::Unexpected.text(lang)));
        }
    }
    let mut files: Vec<String> = Vec::new();
    for out in [&diff, &untracked] {
        for name in out.stdout.split(|b| *b == 0).filter(|s| !s.is_empty()) {
            let name = String::from_utf8_lossy(name).into_owned();
            if !files.contains(&name) {
                files.push(name);
            }
        }
    }
    Ok(files)
}

/// Runs git in `root`; a missing executable is E34.
fn git(root: &Path, args: &[&str], lang: Language) -> Result<Output> {
    Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["-c", "core.quotepath=off"])
        .args(args)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .output()
        .map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                Error::internal(Msg::GitMissing.text(lang))
            } else {
                Error::io("the git executable", &e)
            }
        })
}
