//! `chainetl` with crash points, for the crash tests only: the same
//! program as the `chainetl` binary, plus `CHAINETL_FAILPOINT=name:N`,
//! which aborts the process the N-th time it reaches crash point `name`
//! (names in `src/util/failpoint.rs`).
//!
//! An example target, so `cargo test` builds it (to
//! `target/<profile>/examples/`) while `cargo build`, `make build` and
//! `cargo install` never do: no binary a user runs reads the variable.

#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> std::process::ExitCode {
    if let Some(point) = std::env::var("CHAINETL_FAILPOINT").ok().filter(|p| !p.is_empty()) {
        chainetl::util::failpoint::arm(&point);
    }
    chainetl::cli::main()
}
