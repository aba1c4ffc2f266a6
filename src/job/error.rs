//! Why a job or one of its units stopped. Each variant keeps the error it
//! came from as its source; [`RunError::exit_code`] sorts them into the
//! binary's two classes (2: fix the spec or the environment; 1: a run-time
//! failure worth retrying).

use super::guard::PagingError;
use crate::api::ApiError;
use crate::decode::DecodeError;
use crate::fetch::FetchError;
use crate::sink::SinkError;
use crate::state::StateError;
use crate::state::lease::LeaseError;
use crate::vocab::Chain;

/// Errors that stop a job before or outside its units.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// The spec changed under the same job name.
    #[error(
        "job `{name}` was started with a different spec (hash {old}, now {new}); \
         its output and checkpoints would not match. Re-run with --fresh to start over \
         (this deletes the job's earlier output), or give the job another name"
    )]
    SpecChanged {
        /// Job name.
        name: String,
        /// Stored hash.
        old: String,
        /// Current hash.
        new: String,
    },
    /// What the job exports changed under the same job name.
    #[error(
        "job `{name}` was started with a different spec: its output and checkpoints would not match:\n{}\n\
         Settings of how to fetch (base_url, api_key_env, concurrency, rate, page size, timeouts, retries, \
         memory, compression) may change between runs, exports may be appended and chains added. \
         To start over, re-run with --fresh: it deletes the job's {deletes}. Or give the job another name.",
        changes.iter().map(|c| format!("  {c}")).collect::<Vec<_>>().join("\n")
    )]
    JobChanged {
        /// Job name.
        name: String,
        /// One line per changed key.
        changes: Vec<String>,
        /// What `--fresh` would delete.
        deletes: String,
    },
    /// Another run holds the job's lease.
    #[error(transparent)]
    Lease(#[from] LeaseError),
    /// The API key variable is named but not set: where, and how to fix
    /// it ([`crate::spec::Source::unset_key_message`]).
    #[error("{0}")]
    MissingKey(String),
    /// The API key variable holds something that cannot be a key.
    #[error("source.api_key_env names ${var}, but its value {why}: set it to the key alone")]
    BadKey {
        /// The variable's name (never its value: it is a secret).
        var: String,
        /// What is wrong with the value.
        why: &'static str,
    },
    /// Output problems.
    #[error(transparent)]
    Sink(#[from] SinkError),
    /// State problems.
    #[error(transparent)]
    State(#[from] StateError),
    /// Client could not start.
    #[error(transparent)]
    Api(#[from] ApiError),
    /// The simulator could not start.
    #[error("the built-in simulator failed to start: {0}")]
    Sim(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// `--follow` without an incremental export.
    #[error("--follow needs an export with incremental = true (and a start): it follows the chain's head")]
    Follow,
    /// `--as-of` for a job whose relative windows were frozen at another instant.
    #[error(
        "--as-of: job `{name}` froze its relative windows when it started ({created}); \
         use align = \"day\" or \"hour\" for scheduled runs of a spec, or --fresh, or another job name"
    )]
    AsOf {
        /// Job name.
        name: String,
        /// When the job started.
        created: String,
    },
    /// Bad shard argument.
    #[error("--shard {0}: expected K/N with 1 <= K <= N")]
    Shard(String),
    /// `verify --repair` cannot export the damaged files' rows again.
    #[error("repair: {0}")]
    Repair(String),
    /// A change of how the output stores its rows that this command cannot
    /// make now (under `--shard`, mid-way, or from another command).
    #[error("{0}")]
    Migration(String),
    /// The process's environment cannot run a job (the open-file limit).
    #[error("{0}")]
    Environment(String),
    /// A decoding export's events cannot be decoded.
    #[error("export[{export}]: {message}")]
    Decoder {
        /// Export index.
        export: usize,
        /// Why.
        message: String,
    },
}

impl RunError {
    /// The format a job's identity records, `name`: one this build writes,
    /// or refused (a newer build's job).
    pub(crate) fn recorded_format(spec: &crate::spec::Spec, name: &str) -> Result<crate::spec::OutputFormat, RunError> {
        crate::spec::OutputFormat::named(name).ok_or_else(|| {
            RunError::Migration(format!(
                "job `{}`: its output is in format {name}, which this build does not write: run it with the release \
                 that wrote it",
                spec.name
            ))
        })
    }

    /// The refusal of a command other than `run` on a job whose format is to change.
    pub(crate) fn unconverted(spec: &crate::spec::Spec, c: &crate::spec::FormatChange) -> RunError {
        if !c.converts() {
            return RunError::Migration(format!(
                "job `{}`: its files are laid out otherwise than the spec says ({}): `chainetl run {}` rewrites them \
                 first, from the files the output holds, with no request to the service",
                spec.name,
                c.layout_lines(),
                spec.file
            ));
        }
        RunError::Migration(format!(
            "job `{}`: its output is in format {}, and the spec says {}: `chainetl run {}` converts it first, \
             from the files the output holds, with no request to the service",
            spec.name, c.from, c.to, spec.file
        ))
    }

    /// 2 when the spec, the arguments or the environment must change before
    /// a retry can succeed; 1 for a failure at run time worth retrying.
    pub fn exit_code(&self) -> u8 {
        match self {
            RunError::SpecChanged { .. }
            | RunError::JobChanged { .. }
            | RunError::MissingKey(_)
            | RunError::BadKey { .. }
            | RunError::Shard(_)
            | RunError::Follow
            | RunError::AsOf { .. }
            | RunError::Repair(_)
            | RunError::Migration(_)
            | RunError::Environment(_)
            | RunError::Decoder { .. } => 2,
            // The output is not as the job needs it (no failure behind it):
            // whichever command met it, no retry fixes it.
            RunError::Sink(crate::sink::SinkError::Config { source: None, .. }) => 2,
            _ => 1,
        }
    }
}

/// Why a unit (or an incremental export's bookkeeping on a chain) failed.
#[derive(Debug, thiserror::Error)]
pub enum UnitError {
    /// Fetching failed.
    #[error(transparent)]
    Api(#[from] ApiError),
    /// The unit's fetch task stopped without handing over its last page.
    #[error(transparent)]
    Fetch(#[from] FetchError),
    /// A response had a bad value.
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// Writing failed.
    #[error(transparent)]
    Sink(#[from] SinkError),
    /// Checkpointing failed.
    #[error(transparent)]
    State(#[from] StateError),
    /// The server looped or repeated rows.
    #[error(transparent)]
    Paging(#[from] PagingError),
    /// The service's latest block has no usable number.
    #[error("{chain}: the latest block has no valid `number`")]
    NoHead {
        /// The chain asked.
        chain: Chain,
    },
}

impl UnitError {
    /// Whether the job says this once for the whole run (a signal, the
    /// service unreachable, the key or a chain's endpoint refused) rather
    /// than for each unit in turn.
    pub fn said_once(&self) -> bool {
        match self {
            UnitError::Api(e) | UnitError::Fetch(FetchError::Api(e)) => {
                matches!(e, ApiError::Cancelled | ApiError::ServiceDown { .. }) || refused(e)
            }
            _ => false,
        }
    }
}

/// Whether `e` is a refusal of the key or of a chain's endpoint
/// ([`crate::api::refusal`]): what a unit stops at as at a signal.
pub(crate) fn refused(e: &ApiError) -> bool {
    matches!(e, ApiError::Unauthorized { .. } | ApiError::Forbidden { .. })
}
