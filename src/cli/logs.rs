//! Process set-up for the binary: logging (text or JSON on stderr, every
//! line redacted) and the async runtime.
//!
//! Exporting, every thread allocates from one jemalloc arena: buffers cross
//! threads (fetch tasks, encoders, the blocking pool writing file parts),
//! and with an arena per few threads each keeps its own freed extents, so
//! peak memory would grow with the job's length. The simulator keeps
//! jemalloc's default arenas: it is faster with them.

use super::Cli;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// Installs the log subscriber: `-v`/`-vv`/`--quiet` or `RUST_LOG`, text
/// or JSON, on stderr through the redactor.
pub fn init_logs(cli: &Cli) {
    let level = if cli.quiet {
        "error"
    } else {
        match cli.verbose {
            0 => "info",
            1 => "debug",
            _ => "trace",
        }
    };
    super::say::set_json(cli.log_format == "json");
    let default = || format!("warn,chainetl={level}").parse::<Targets>().unwrap_or_default();
    let filter = match std::env::var("RUST_LOG") {
        Ok(v) if !v.trim().is_empty() => log_directives(&v).unwrap_or_else(|| {
            eprintln!("warning: RUST_LOG={v:?} ignored: expected `level` or `target=level` directives, comma-separated");
            default()
        }),
        _ => default(),
    };
    let builder = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(crate::util::redact::Stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_target(false);
    if cli.log_format == "json" {
        builder.json().finish().with(filter).init();
    } else {
        builder.finish().with(filter).init();
    }
}

/// `RUST_LOG` as `target=level` directives (`debug`, `warn,chainetl=trace`);
/// `None` for anything else, such as span filters (`chainetl[unit]=debug`),
/// which would otherwise name a target nothing logs to and hide every line.
fn log_directives(v: &str) -> Option<Targets> {
    let well_formed = v.split(',').map(str::trim).filter(|d| !d.is_empty()).all(|d| {
        let target = d.split_once('=').map_or(d, |(t, _)| t);
        !target.is_empty()
            && target
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | ':' | '-' | '.'))
    });
    if well_formed { v.parse().ok() } else { None }
}

/// The runtime for `cli`'s command (see the module doc for the arenas).
pub fn runtime(cli: &Cli) -> std::io::Result<tokio::runtime::Runtime> {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if !cli.serves_sim() {
        use_one_arena();
        builder.on_thread_start(use_one_arena);
    }
    builder.enable_all().build()
}

/// Moves the calling thread to jemalloc's arena 0.
fn use_one_arena() {
    let mut arena: std::ffi::c_uint = 0;
    // SAFETY: "thread.arena" is a NUL-terminated jemalloc control name whose
    // new value is an `unsigned`, passed by pointer with its size; arena 0
    // always exists; no old value is read.
    let rc = unsafe {
        tikv_jemalloc_sys::mallctl(
            c"thread.arena".as_ptr(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            (&raw mut arena).cast(),
            std::mem::size_of::<std::ffi::c_uint>(),
        )
    };
    if rc != 0 {
        tracing::debug!(rc, "could not select jemalloc arena 0");
    }
}

#[cfg(test)]
mod tests {
    use super::log_directives;

    #[test]
    fn rust_log_takes_levels_and_target_directives_and_refuses_the_rest() {
        for ok in [
            "debug",
            "DEBUG",
            "warn,chainetl=trace",
            "chainetl::job=debug, warn",
            "reqwest=trace",
        ] {
            assert!(log_directives(ok).is_some(), "{ok}");
        }
        // These parse as targets nothing logs to, which would hide every line.
        for bad in ["garbage[", "chainetl[unit]=debug", "chainetl{x}=info", "a b=debug", "=debug"] {
            assert!(log_directives(bad).is_none(), "{bad}");
        }
    }
}
