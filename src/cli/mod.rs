//! The command-line face: argument types ([`args`]), the commands
//! ([`execute`]), and everything printed — plans, the run's intro,
//! progress, summaries, status and schemas ([`render`], [`progress`]).
//! The library's stages print nothing; this module turns their values and
//! events into text, and their errors into an [`Exit`] or a [`CliError`]
//! with a stable exit code:
//!
//! | code | meaning |
//! |------|---------|
//! | 0 | done |
//! | 1 | a run-time failure worth retrying (units failed, service down, I/O) |
//! | 2 | fix the spec, the arguments or the environment (the service refused the key, or a chain's endpoint to it) |
//! | 130 / 143 | interrupted by SIGINT / SIGTERM (committed work kept) |

/// `print!` to stdout, except that a reader gone (a closed pipe:
/// `chainetl schema … | head -1`) is no failure: what the command did
/// stands, and it ends as it would have. (`print!` panics there.)
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::cli::to_stdout(format_args!($($arg)*), false)
    };
}

/// [`out!`] with a newline, as `println!`.
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::cli::to_stdout(format_args!($($arg)*), true)
    };
}

/// Writes `text` (and a newline) to stdout for [`out!`]: a closed pipe is
/// ignored; any other failure (a full disk under `> file`) is said on
/// stderr once, and the command then exits 1 where it would have exited 0.
pub(crate) fn to_stdout(text: std::fmt::Arguments<'_>, newline: bool) {
    use std::io::Write as _;
    let mut stdout = std::io::stdout().lock();
    let written = stdout
        .write_fmt(text)
        .and_then(|()| if newline { stdout.write_all(b"\n") } else { Ok(()) })
        .and_then(|()| stdout.flush());
    if let Err(e) = written
        && e.kind() != std::io::ErrorKind::BrokenPipe
        && !STDOUT_FAILED.swap(true, std::sync::atomic::Ordering::Relaxed)
    {
        let _ = writeln!(std::io::stderr(), "error: cannot write to stdout: {e}");
    }
}

/// Set when stdout failed other than by its reader going: the command's
/// output is incomplete, so it does not exit 0 ([`main`]).
static STDOUT_FAILED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

pub mod args;
mod commands;
pub mod ddl;
mod generate;
mod json;
mod logs;
mod metrics;
mod page;
pub mod plan;
pub mod progress;
pub mod render;
mod run;
mod say;
mod schema;
mod verify;

pub use args::Cli;
pub use ddl::{schema_text, table_schema_text};
pub use logs::{init_logs, runtime};
pub use plan::plan_listing;
pub use render::{bytes, intro, status_table, summary_table};

use crate::job::RunError;
use crate::spec::SpecErrors;
use crate::util::redact::redact;

/// How a command ended, when it ran to an end of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Done (0).
    Success,
    /// Something failed and is worth retrying; what is printed already (1).
    Failed,
    /// The spec, arguments or environment must change; printed already (2).
    Usage,
    /// A signal stopped it (130 for SIGINT, 143 for SIGTERM).
    Interrupted {
        /// The signal's number.
        signal: i32,
    },
}

impl Exit {
    /// The process exit code.
    pub fn code(self) -> u8 {
        match self {
            Exit::Success => 0,
            Exit::Failed => 1,
            Exit::Usage => 2,
            Exit::Interrupted { signal: 15 } => 143,
            Exit::Interrupted { .. } => 130,
        }
    }
}

/// Why a command could not run; [`CliError::exit_code`] is its class.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CliError {
    /// The spec could not be read or is invalid (every error, at once).
    #[error("{0}")]
    Spec(SpecErrors),
    /// A bad argument.
    #[error("{0}")]
    Usage(String),
    /// The job could not run.
    #[error(transparent)]
    Run(#[from] RunError),
    /// Something the command does failed (`what` says what it was doing).
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// Why it failed.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl CliError {
    /// 2: fix the spec, arguments or environment; 1: worth retrying.
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Spec(_) | CliError::Usage(_) => 2,
            CliError::Run(e) => e.exit_code(),
            CliError::Io { .. } => 1,
        }
    }

    /// The text to print on stderr, secrets masked: the spec's errors as the
    /// loader lists them, anything else as one `error:` line.
    pub fn render(&self) -> String {
        match self {
            CliError::Spec(e) => e.to_string(),
            e => format!("error: {}\n", redact(&e.to_string())),
        }
    }

    /// Prints [`CliError::render`] on stderr; with `--log-format json`, one
    /// JSON line per spec error (with its `file`, `line`, `column` and
    /// `key`) or one for any other error.
    pub fn print(&self) {
        if !say::json() {
            eprint!("{}", self.render());
            return;
        }
        match self {
            CliError::Spec(errors) => {
                for e in &errors.0 {
                    let fields = serde_json::json!({
                        "file": e.file, "line": e.line, "column": e.col, "key": e.key, "error": e.message,
                    });
                    say::say(say::Level::Error, "spec_error", &redact(&e.to_string()), fields);
                }
            }
            e => {
                let kind = if e.exit_code() == 2 { "usage_error" } else { "error" };
                say::say(say::Level::Error, kind, &redact(&e.to_string()), serde_json::json!({}));
            }
        }
    }

    fn io(what: impl Into<String>, source: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> CliError {
        CliError::Io {
            what: what.into(),
            source: source.into(),
        }
    }
}

/// A command line the parser refused: clap's text (help and version as
/// they are), or one JSON line with `--log-format json`; exit 2 for errors.
pub fn usage_error(e: clap::Error) -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if e.use_stderr() && say::usage_error_json(&args, &e.render().to_string()) {
        return std::process::ExitCode::from(2);
    }
    e.exit()
}

/// Runs the command `cli` names.
pub async fn execute(cli: Cli) -> Result<Exit, CliError> {
    commands::execute(cli).await
}

/// The whole program behind a binary's `main`: parse the arguments, set up
/// logs and the runtime, run the command, map its end to an exit code.
pub fn main() -> std::process::ExitCode {
    use clap::Parser;
    use std::process::ExitCode;
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(e),
    };
    crate::util::redact::register_env();
    let open_files = crate::util::fd_limit::raise();
    init_logs(&cli);
    tracing::debug!(?open_files, "open-file limit");
    let rt = match runtime(&cli) {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    match rt.block_on(execute(cli)) {
        Ok(exit) if exit.code() == 0 && STDOUT_FAILED.load(std::sync::atomic::Ordering::Relaxed) => ExitCode::from(1),
        Ok(exit) => ExitCode::from(exit.code()),
        Err(e) => {
            e.print();
            ExitCode::from(e.exit_code())
        }
    }
}
