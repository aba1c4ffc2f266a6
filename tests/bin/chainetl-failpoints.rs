//! `chainetl` with crash points, for the crash tests only: the same
//! program as the `chainetl` binary, plus `CHAINETL_FAILPOINT=name:N`,
//! which aborts the process the N-th time it reaches crash point `name`
//! (`name:N:stop` freezes it with SIGSTOP instead; names in
//! `src/util/failpoint.rs`), and `CHAINETL_TEST_LEASE_TTL=SECS`, a short
//! object-store lease.
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
    // Seconds: an object-store lease that runs out quickly, for the tests
    // of a holder paused past it.
    if let Some(secs) = std::env::var("CHAINETL_TEST_LEASE_TTL").ok().and_then(|s| s.parse().ok()) {
        chainetl::state::lease::set_test_ttl(secs);
    }
    chainetl::cli::main()
}
