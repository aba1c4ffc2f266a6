//! The `chainetl` binary: parse arguments, run, map the outcome to an exit
//! code. 0 done; 1 failed at run time; 2 invalid spec or usage; 130/143
//! interrupted by SIGINT/SIGTERM.

use anyhow::Context;

/// jemalloc: with glibc's allocator, page and encoder buffers freed on one
/// thread and reused on another left peak memory 15–25% higher and growing
/// with the job; jemalloc is also a few percent faster here.
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

use chainetl::redact::redact;
use chainetl::run::{RunError, RunOptions};
use chainetl::spec::{Dataset, Spec};
use chainetl::{cli, plan, run, sim};
use clap::{Parser, Subcommand};
use std::process::ExitCode;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Duration;

/// Export blockchain data from the Blockchain Data Service (v2) into
/// partitioned Parquet on local disk or S3.
#[derive(Parser)]
#[command(name = "chainetl", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// More log output (-v: debug, -vv: trace); RUST_LOG overrides.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    verbose: u8,
    /// Only errors.
    #[arg(short, long, global = true)]
    quiet: bool,
    /// Log format: text or json.
    #[arg(long, global = true, default_value = "text", value_parser = ["text", "json"])]
    log_format: String,
}

/// A spec file and overrides of its values.
#[derive(clap::Args)]
struct SpecArgs {
    /// The spec file (TOML). `${VAR}` in it is replaced by the environment variable.
    spec: String,
    /// Override a spec value: --set source.max_concurrency=16 --set export.0.window=7d
    #[arg(long = "set", value_name = "KEY=VALUE")]
    sets: Vec<String>,
}

#[derive(Subcommand)]
enum Command {
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
    },
    /// Show the work units and a request estimate without fetching.
    Plan {
        #[command(flatten)]
        spec: SpecArgs,
    },
    /// Check a spec and report every error at once.
    Validate {
        #[command(flatten)]
        spec: SpecArgs,
    },
    /// Check every committed file against its checkpoint (exists, size,
    /// rows); exit 1 listing what is missing or changed.
    Verify {
        #[command(flatten)]
        spec: SpecArgs,
        /// Export again exactly the units whose files are missing or changed.
        #[arg(long)]
        repair: bool,
    },
    /// Show a job's progress from its checkpoints.
    Status {
        #[command(flatten)]
        spec: SpecArgs,
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
    /// Print a dataset's schema.
    Schema {
        /// blocks, events, portfolio or tokens.
        dataset: String,
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
        opts: sim::SimOptions,
    },
}

static SIGNAL: AtomicI32 = AtomicI32::new(0);

/// Exporting, every thread allocates from one jemalloc arena: buffers cross
/// threads (fetch tasks, encoders, the blocking pool writing file parts),
/// and with an arena per few threads each kept its own freed extents, so
/// peak memory grew with the job's length (+8–15% from 1 M to 4 M rows,
/// against +3–9% with one arena, for ~3% more CPU). The simulator keeps
/// jemalloc's default arenas: it is faster with them.
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    chainetl::redact::register_env();
    init_logs(&cli);
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if !matches!(cli.command, Command::Sim { .. }) {
        use_one_arena();
        builder.on_thread_start(use_one_arena);
    }
    let rt = match builder.enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    match rt.block_on(dispatch(cli)) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {}", redact(&format!("{e:#}")));
            ExitCode::from(1)
        }
    }
}

fn init_logs(cli: &Cli) {
    let level = if cli.quiet {
        "error"
    } else {
        match cli.verbose {
            0 => "info",
            1 => "debug",
            _ => "trace",
        }
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(format!("warn,chainetl={level}")));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(chainetl::redact::Stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_target(false);
    if cli.log_format == "json" {
        builder.json().init();
    } else {
        builder.init();
    }
}

fn load(args: &SpecArgs) -> Result<Spec, ExitCode> {
    Spec::load_with(&args.spec, &args.sets).map_err(|e| {
        eprint!("{e}");
        ExitCode::from(2)
    })
}

async fn dispatch(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Validate { spec } => {
            let s = match load(&spec) {
                Ok(s) => s,
                Err(code) => return Ok(code),
            };
            println!(
                "{}: ok ({} export{})",
                spec.spec,
                s.exports.len(),
                if s.exports.len() == 1 { "" } else { "s" }
            );
            Ok(ExitCode::SUCCESS)
        }
        Command::Plan { spec } => {
            let s = match load(&spec) {
                Ok(s) => s,
                Err(code) => return Ok(code),
            };
            let now = plan::job_now(&s);
            let windows = plan::freeze_windows(&s, now);
            let segments: Vec<plan::Segment> = s.exports.iter().filter_map(|e| plan::aligned_segment(e, now)).collect();
            let units = plan::plan(&s, &windows, s.source.page_size, &segments);
            print!("{}", cli::plan_listing(&s, &windows, &segments, &units));
            Ok(ExitCode::SUCCESS)
        }
        Command::Status { spec } => {
            let s = match load(&spec) {
                Ok(s) => s,
                Err(code) => return Ok(code),
            };
            let run::JobStatus {
                units,
                states,
                marks,
                periods,
            } = run::status(&s).await.context("reading the job's state")?;
            print!("{}", cli::status_table(&s, &units, &states, marks.len() + periods.len()));
            for p in periods {
                println!("export[{}]: aligned period {} exported", p.export, p.window);
            }
            for m in marks {
                let by_day = s.exports.get(m.export).is_some_and(|e| e.dataset == Dataset::Portfolio);
                let below = if by_day {
                    format!("days before {}", chainetl::window::iso(m.next as i64))
                } else {
                    format!("blocks below {}", m.next)
                };
                println!(
                    "export[{}] {}: incremental, exported {below} ({} reorg{} repaired){}",
                    m.export,
                    m.chain,
                    m.reorgs,
                    if m.reorgs == 1 { "" } else { "s" },
                    if m.repair_from.is_some() {
                        "; a reorg repair is unfinished: run again"
                    } else {
                        ""
                    }
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Verify { spec, repair } => {
            let s = match load(&spec) {
                Ok(s) => s,
                Err(code) => return Ok(code),
            };
            let problems = match run::verify(&s).await {
                Ok(p) => p,
                Err(e) => {
                    eprintln!("error: {}", redact(&e.to_string()));
                    return Ok(ExitCode::from(1));
                }
            };
            if problems.is_empty() {
                println!("{}: every committed file is in place", s.name);
                return Ok(ExitCode::SUCCESS);
            }
            let units: std::collections::BTreeSet<String> = problems.iter().map(|p| p.unit.clone()).collect();
            println!(
                "{}: {} committed file{} missing or changed, in {} unit{}:",
                s.name,
                problems.len(),
                if problems.len() == 1 { "" } else { "s" },
                units.len(),
                if units.len() == 1 { "" } else { "s" }
            );
            for p in &problems {
                println!("  {}: {} (unit {})", p.path, p.what, p.unit);
            }
            if !repair {
                println!("run `chainetl verify {} --repair` to export those units again", spec.spec);
                return Ok(ExitCode::from(1));
            }
            let opts = RunOptions {
                display: None,
                intro: false,
                repair: units.into_iter().collect(),
                ..RunOptions::default()
            };
            run_and_report(s, opts, cli.quiet).await
        }
        Command::Init { path, force } => {
            if std::path::Path::new(&path).exists() && !force {
                eprintln!("error: {path} exists; use --force to overwrite it");
                return Ok(ExitCode::from(2));
            }
            std::fs::write(&path, chainetl::spec::EXAMPLE).with_context(|| format!("writing {path}"))?;
            println!("wrote {path}: edit it, then `chainetl validate {path}` and `chainetl run {path}`");
            Ok(ExitCode::SUCCESS)
        }
        Command::Schema { dataset, format } => {
            let Some(d) = Dataset::parse(&dataset) else {
                eprintln!("error: unknown dataset `{dataset}`: expected blocks, events, portfolio or tokens");
                return Ok(ExitCode::from(2));
            };
            match cli::schema_text(d, &format) {
                Ok(t) => {
                    print!("{t}");
                    Ok(ExitCode::SUCCESS)
                }
                Err(m) => {
                    eprintln!("error: {m}");
                    Ok(ExitCode::from(2))
                }
            }
        }
        Command::Sim { port, host, opts } => {
            let listener = tokio::net::TcpListener::bind((host.as_str(), port))
                .await
                .with_context(|| format!("cannot listen on {host}:{port}"))?;
            eprintln!("chainetl sim listening on http://{}", listener.local_addr()?);
            if let Err(m) = sim::serve(opts, listener).await {
                eprintln!("error: {m}");
                return Ok(ExitCode::from(2));
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Run {
            spec,
            fresh,
            shard,
            progress_secs,
            follow,
            as_of,
        } => {
            let s = match load(&spec) {
                Ok(s) => s,
                Err(code) => return Ok(code),
            };
            let as_of = match as_of.as_deref().map(chainetl::window::parse_instant).transpose() {
                Ok(v) => v,
                Err(m) => {
                    eprintln!("error: --as-of: {m}");
                    return Ok(ExitCode::from(2));
                }
            };
            let shard = match shard.as_deref().map(run::parse_shard).transpose() {
                Ok(v) => v,
                Err(e) => {
                    eprintln!("error: {e}");
                    return Ok(ExitCode::from(2));
                }
            };
            let display = if cli.quiet || progress_secs == 0 {
                None
            } else {
                Some(chainetl::progress::Display::auto(Some(Duration::from_secs(progress_secs))))
            };
            let opts = RunOptions {
                fresh,
                shard,
                display,
                intro: !cli.quiet,
                follow,
                as_of,
                repair: Vec::new(),
            };
            run_and_report(s, opts, cli.quiet).await
        }
    }
}

/// Runs a job with signal handling, prints its summary, and maps the
/// outcome to an exit code.
async fn run_and_report(s: Spec, opts: RunOptions, quiet: bool) -> anyhow::Result<ExitCode> {
    let (tx, rx) = tokio::sync::watch::channel(false);
    tokio::spawn(watch_signals(tx));
    match run::run(s.clone(), opts, rx).await {
        Ok(summary) => {
            if !quiet {
                print!("{}", cli::summary_table(&summary, &s.output.uri));
            }
            if summary.interrupted {
                let sig = SIGNAL.load(Ordering::SeqCst);
                eprintln!("interrupted: committed work is kept; run the same command again to resume");
                return Ok(ExitCode::from(if sig == 15 { 143 } else { 130 }));
            }
            if let Some(e) = &summary.error {
                eprintln!("error: {}; the job stopped (committed work is kept; re-run to resume)", redact(e));
            }
            if !summary.failed.is_empty() {
                eprintln!(
                    "{} unit(s) failed (committed work is kept; re-run to retry them):",
                    summary.failed.len()
                );
                for f in &summary.failed {
                    eprintln!("  {} ({} {} {}): {}", f.unit, f.dataset, f.chain, f.range, redact(&f.error));
                }
            }
            if summary.error.is_some() || !summary.failed.is_empty() {
                return Ok(ExitCode::from(1));
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(
            e @ (RunError::SpecChanged { .. }
            | RunError::JobChanged { .. }
            | RunError::MissingKey(_)
            | RunError::BadKey { .. }
            | RunError::Shard(_)
            | RunError::Follow
            | RunError::AsOf { .. }),
        ) => {
            eprintln!("error: {}", redact(&e.to_string()));
            Ok(ExitCode::from(2))
        }
        Err(e) => {
            eprintln!("error: {}", redact(&e.to_string()));
            Ok(ExitCode::from(1))
        }
    }
}

/// First SIGINT/SIGTERM: stop fetching, commit what is buffered, exit
/// 130/143. A second one exits at once.
async fn watch_signals(tx: tokio::sync::watch::Sender<bool>) {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut int), Ok(mut term)) = (signal(SignalKind::interrupt()), signal(SignalKind::terminate())) else {
        return;
    };
    loop {
        let sig = tokio::select! {
            _ = int.recv() => 2,
            _ = term.recv() => 15,
        };
        if SIGNAL.swap(sig, Ordering::SeqCst) != 0 {
            eprintln!("second signal: exiting now");
            std::process::exit(if sig == 15 { 143 } else { 130 });
        }
        eprintln!("signal received: committing buffered work, then exiting (send it again to exit at once)");
        let _ = tx.send(true);
    }
}
