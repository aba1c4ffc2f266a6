//! The `chainetl` binary: the allocator, then [`chainetl::cli::main`]
//! (see [`chainetl::cli`] for the exit codes).

/// jemalloc: with glibc's allocator, buffers freed on one thread and reused
/// on another leave peak memory higher and growing with the job.
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> std::process::ExitCode {
    chainetl::cli::main()
}
