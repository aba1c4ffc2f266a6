//! Build script: the commit chainetl is built from, for `chainetl --version`
//! and the run report (`CHAINETL_COMMIT` in the crate's environment); and
//! packed relative relocations for the binary where the C library loads
//! them ([`pack_relative_relocs`]).
//!
//! Taken from `CHAINETL_BUILD_COMMIT` when set (the Docker build, which has
//! no `.git`), else from `git` when this crate is the top of a checkout,
//! else `unknown`; always 12 hex digits or `unknown`. Reruns only when that
//! variable changes or HEAD moves (its reflog), so editing sources does not.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=CHAINETL_BUILD_COMMIT");
    let commit = std::env::var("CHAINETL_BUILD_COMMIT")
        .ok()
        .and_then(|c| short_hex(&c))
        .or_else(git_commit)
        .unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=CHAINETL_COMMIT={commit}");
    pack_relative_relocs();
}

/// A position-independent executable carries a relocation for every
/// pointer in its tables; packed as DT_RELR they take a hundredth of the
/// room (figures: docs/performance.md). glibc loads DT_RELR from 2.36 on
/// (and the linker then records the need for it, so an older glibc
/// refuses the binary with a clear message rather than misloading it):
/// asked for only when building for this machine's own glibc, 2.36 or
/// later, unless `CHAINETL_NO_RELR` is set.
fn pack_relative_relocs() {
    println!("cargo:rerun-if-env-changed=CHAINETL_NO_RELR");
    let (Ok(target), Ok(host)) = (std::env::var("TARGET"), std::env::var("HOST")) else {
        return;
    };
    if target != host || !target.ends_with("-linux-gnu") || std::env::var_os("CHAINETL_NO_RELR").is_some() {
        return;
    }
    let Ok(out) = Command::new("getconf").arg("GNU_LIBC_VERSION").output() else {
        return;
    };
    // "glibc 2.36"
    let text = String::from_utf8_lossy(&out.stdout);
    let version: Vec<u32> = text
        .trim()
        .trim_start_matches("glibc ")
        .split('.')
        .filter_map(|p| p.parse().ok())
        .collect();
    if version.len() >= 2 && (version[0], version[1]) >= (2, 36) {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

/// The first 12 digits of a hex commit id; `None` for anything else.
fn short_hex(c: &str) -> Option<String> {
    let c = c.trim();
    (c.len() >= 7 && c.chars().all(|x| x.is_ascii_hexdigit())).then(|| c.chars().take(12).collect::<String>().to_ascii_lowercase())
}

/// The checked-out commit, if this crate's directory is the top of a git
/// checkout (not a copy unpacked inside some other repository).
fn git_commit() -> Option<String> {
    let git = |args: &[&str]| -> Option<String> {
        let out = Command::new("git").args(args).output().ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    };
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR")?);
    let top = PathBuf::from(git(&["rev-parse", "--show-toplevel"])?);
    if top.canonicalize().ok()? != manifest_dir.canonicalize().ok()? {
        return None;
    }
    // HEAD's reflog moves with every commit, checkout and reset, in any
    // worktree and however refs are packed; HEAD itself for a detached one.
    for what in ["logs/HEAD", "HEAD"] {
        if let Some(p) = git(&["rev-parse", "--git-path", what]) {
            watch(&manifest_dir.join(p));
        }
    }
    short_hex(&git(&["rev-parse", "HEAD"])?)
}

/// Reruns the build script when `path` changes; a path that does not exist
/// is not watched (cargo would rerun the script on every build).
fn watch(path: &Path) {
    if path.exists() {
        println!("cargo:rerun-if-changed={}", path.display());
    }
}
