//! The `chainetl` binary: parse arguments, run the command, map the
//! outcome to an exit code (see [`chainetl::cli`] for the codes).

use clap::Parser;
use std::process::ExitCode;

/// jemalloc: with glibc's allocator, buffers freed on one thread and reused
/// on another leave peak memory higher and growing with the job.
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> ExitCode {
    let cli = match chainetl::cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return chainetl::cli::usage_error(e),
    };
    chainetl::util::redact::register_env();
    chainetl::cli::init_logs(&cli);
    let rt = match chainetl::cli::runtime(&cli) {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    match rt.block_on(chainetl::cli::execute(cli)) {
        Ok(exit) => ExitCode::from(exit.code()),
        Err(e) => {
            e.print();
            ExitCode::from(e.exit_code())
        }
    }
}
