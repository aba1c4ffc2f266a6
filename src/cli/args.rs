//! The command line's arguments (clap): subcommands, flags and their help.

use crate::spec::SimOptions;
use clap::{Parser, Subcommand};

/// Export blockchain data from the Blockchain Data Service (v2) into
/// partitioned Parquet, Delta Lake or Apache Iceberg tables on local disk
/// or S3.
#[derive(Parser)]
#[command(name = "chainetl", version = crate::util::build::VERSION, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
    /// More log output (-v: debug, -vv: trace); RUST_LOG overrides.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub(crate) verbose: u8,
    /// Only errors.
    #[arg(short, long, global = true)]
    pub(crate) quiet: bool,
    /// Log format: text or json.
    #[arg(long, global = true, default_value = "text", value_parser = ["text", "json"])]
    pub(crate) log_format: String,
}

impl Cli {
    /// Whether the command serves the simulator (which keeps the
    /// allocator's default arenas: it is faster with them).
    pub fn serves_sim(&self) -> bool {
        matches!(self.command, Command::Sim { .. })
    }
}

/// A spec file and overrides of its values.
#[derive(clap::Args)]
pub(crate) struct SpecArgs {
    /// The spec file (TOML). `${VAR}` in it is replaced by the environment variable.
    pub(crate) spec: String,
    /// Override a spec value: --set source.max_concurrency=16 --set export.0.window=7d
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub(crate) sets: Vec<String>,
}

impl SpecArgs {
    /// The spec, its `--set` overrides applied.
    pub(crate) fn load(&self) -> Result<crate::spec::Spec, crate::spec::SpecErrors> {
        crate::spec::Spec::load_with(&self.spec, &self.sets)
    }
}

#[derive(Subcommand)]
pub(crate) enum Command {
    /// Run a pipeline spec; resumes from its checkpoints unless --fresh.
    Run {
        #[command(flatten)]
        spec: SpecArgs,
        /// Delete the job's earlier output and checkpoints and start over.
        #[arg(long)]
        fresh: bool,
        /// Run only shard K of N (e.g. 2/4): a deterministic share of the work units.
        #[arg(long, value_name = "K/N")]
        shard: Option<String>,
        /// Seconds between progress lines (0: none).
        #[arg(long, default_value_t = 10)]
        progress_secs: u64,
        /// Keep running: after catching up, poll the head and export newly
        /// confirmed blocks of incremental exports until SIGINT/SIGTERM.
        #[arg(long)]
        follow: bool,
        /// Run as if it were this instant (ISO 8601, e.g. 2025-05-31T00:00:00Z):
        /// relative and aligned windows resolve against it (scheduled backfills).
        #[arg(long, value_name = "TIMESTAMP")]
        as_of: Option<String>,
        /// The final summary on stdout: a table, or one JSON document (the run report).
        #[arg(long, default_value = "table", value_parser = ["table", "json"])]
        summary: String,
        /// Keep Prometheus metrics in this file (text format, for node-exporter's
        /// textfile collector): rewritten atomically every --progress-secs (10 s
        /// when 0) and when the run ends.
        #[arg(long, value_name = "PATH")]
        metrics_file: Option<String>,
        /// Serve Prometheus metrics at http://HOST:PORT/metrics while the run lasts.
        #[arg(long, value_name = "HOST:PORT")]
        metrics_addr: Option<String>,
    },
    /// Show the next run's work units and requests without fetching.
    ///
    /// For a job with state under its output: the windows frozen when it
    /// started, and the units and requests done and left.
    Plan {
        #[command(flatten)]
        spec: SpecArgs,
        /// Plan as if it were this instant (ISO 8601), as `run --as-of` runs.
        #[arg(long, value_name = "TIMESTAMP")]
        as_of: Option<String>,
        /// One line per export and chain instead of one per unit
        /// (`--summary`, `--summary=table`), or the plan as one JSON
        /// document (`--summary=json`), as `run --summary` takes them.
        #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "table", value_parser = ["table", "json"])]
        summary: Option<String>,
    },
    /// Check a spec and report every error at once.
    Validate {
        #[command(flatten)]
        spec: SpecArgs,
    },
    /// Check every committed file against its checkpoint (exists, size,
    /// content checksum; rows with --quick); exit 1 listing what is
    /// missing or changed, or an operation left unfinished.
    Verify {
        #[command(flatten)]
        spec: SpecArgs,
        /// Export again exactly the units whose files are missing or changed.
        #[arg(long)]
        repair: bool,
        /// Check sizes and Parquet row counts only (two small reads per
        /// file) instead of reading every file whole against its checksum.
        #[arg(long)]
        quick: bool,
    },
    /// Merge each finished partition's files into a few files of about
    /// `output.target_file_mb`, sorted, exactly once (runs by itself after a
    /// run unless `output.compact = false`; sharded runs leave it to this).
    Compact {
        #[command(flatten)]
        spec: SpecArgs,
    },
    /// Delete the files a Delta or Iceberg job's tables no longer need: data
    /// files removed longer ago than `output.delta_retention`, and the log
    /// (Delta) or metadata (Iceberg) files no version within it reads; runs
    /// by itself at the end of unsharded runs. A parquet job deletes replaced
    /// files at once and has nothing to vacuum.
    Vacuum {
        #[command(flatten)]
        spec: SpecArgs,
    },
    /// Write one self-contained HTML page of a job: its coverage, runs,
    /// failures and tables, read from its state (no request to the service).
    Report {
        #[command(flatten)]
        spec: SpecArgs,
        /// Where to write it (default: <job>-report.html here; `-`: stdout).
        #[arg(long, value_name = "FILE")]
        out: Option<String>,
        /// html: the page; json: the document the page is drawn from.
        #[arg(long, default_value = "html", value_parser = ["html", "json"])]
        format: String,
    },
    /// Show a job's progress from its checkpoints, and any operation left
    /// unfinished (a compaction swap, a repair, a --fresh clearing).
    Status {
        #[command(flatten)]
        spec: SpecArgs,
        /// text, or json: one document with `state` (not_started,
        /// in_progress, complete, interrupted), unit and row counts, and
        /// `interrupted[]` ({kind, at, what, readers, finish}).
        #[arg(long, default_value = "text", value_parser = ["text", "json"])]
        format: String,
    },
    /// Write a commented example spec to start from.
    Init {
        /// Where to write it.
        #[arg(default_value = "pipeline.toml")]
        path: String,
        /// Overwrite an existing file.
        #[arg(long)]
        force: bool,
    },
    /// Print a dataset's schema, a decoded event's (--event), or every
    /// table a spec writes (--spec).
    Schema {
        /// blocks, events, portfolio or tokens (or a preset: erc20_transfers,
        /// erc20_approvals, erc721_transfers).
        #[arg(required_unless_present_any = ["event", "spec"])]
        dataset: Option<String>,
        /// An event signature to decode, e.g. "event Transfer(address indexed from, address indexed to, uint256 value)".
        #[arg(long, value_name = "SIGNATURE", conflicts_with_all = ["dataset", "spec"])]
        event: Option<String>,
        /// Every table of this spec's exports (as its output settings make them).
        #[arg(long, value_name = "SPEC", conflicts_with = "dataset")]
        spec: Option<String>,
        /// Extra columns of wide integers with --event: decimal38, binary.
        #[arg(long, value_delimiter = ',', requires = "event")]
        u256: Vec<String>,
        /// json, arrow, duckdb or spark.
        #[arg(long, default_value = "json")]
        format: String,
    },
    /// Serve the built-in simulator of the service over HTTP.
    Sim {
        /// Port to listen on (loopback unless --host is given).
        #[arg(long, default_value_t = 8080)]
        port: u16,
        /// Address to bind.
        #[arg(long, default_value = "127.0.0.1")]
        host: String,
        #[command(flatten)]
        opts: SimOptions,
    },
    /// Print a shell completion script.
    ///
    /// e.g. chainetl completions bash > /etc/bash_completion.d/chainetl
    Completions {
        /// bash, zsh, fish, powershell or elvish.
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff), or write one per command with --out.
    ///
    /// e.g. chainetl man | man -l -
    Man {
        /// Write one page per command (chainetl.1, chainetl-run.1, …) into this directory instead.
        #[arg(long, value_name = "DIR")]
        out: Option<std::path::PathBuf>,
    },
}
