//! What this build is: its version and the commit it was built from
//! (`build.rs` finds the commit), for `--version` and the run report.

/// `0.2.0 (commit 3b9b220a1c2d)`, as `chainetl --version` prints it.
pub const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (commit ", env!("CHAINETL_COMMIT"), ")");

/// The commit this build was built from (12 hex digits), or `unknown`.
pub const COMMIT: &str = env!("CHAINETL_COMMIT");
