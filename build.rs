//! Build script: the commit chainetl is built from, for `chainetl --version`
//! and the run report (`CHAINETL_COMMIT` in the crate's environment).
//!
//! Taken from `CHAINETL_BUILD_COMMIT` when set (the Docker build, which has
//! no `.git`), else from `git` in the source tree, else `unknown`. Reruns
//! only when that variable or the checked-out commit changes, so an edit
//! of the sources does not rerun it.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=CHAINETL_BUILD_COMMIT");
    let commit = std::env::var("CHAINETL_BUILD_COMMIT")
        .ok()
        .map(|c| c.trim().to_string())
        .filter(|c| !c.is_empty())
        .or_else(git_commit)
        .unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=CHAINETL_COMMIT={commit}");
}

/// The checked-out commit (12 hex digits), watching the files that move
/// when another commit is checked out. (No `-dirty` mark: knowing it would
/// mean rerunning on every edit.)
fn git_commit() -> Option<String> {
    let git = |args: &[&str]| -> Option<String> {
        let out = Command::new("git").args(args).output().ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    };
    let dir = PathBuf::from(git(&["rev-parse", "--absolute-git-dir"])?);
    for watched in [dir.join("HEAD"), dir.join("packed-refs")] {
        watch(&watched);
    }
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        watch(&dir.join(branch));
    }
    let commit = git(&["rev-parse", "--short=12", "HEAD"])?;
    Some(commit)
}

/// Reruns the build script when `path` changes; a path that does not exist
/// is not watched (cargo would rerun the script on every build).
fn watch(path: &Path) {
    if path.exists() {
        println!("cargo:rerun-if-changed={}", path.display());
    }
}
