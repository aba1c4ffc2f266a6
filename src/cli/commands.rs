//! Each subcommand: load the spec, call the library, print the result.

use super::args::{Cli, Command, SpecArgs};
use super::render::interrupted_lines;
use super::run::Face;
use super::{CliError, Exit, render};
use crate::job::view::status_view::{MarkLine, status_view};
use crate::job::{self, RunOptions};
use crate::plan;
use crate::spec::Spec;
use crate::util::redact::redact;
use crate::vocab::window;
use std::time::Duration;

/// Runs the command `cli` names.
pub(super) async fn execute(cli: Cli) -> Result<Exit, CliError> {
    let quiet = cli.quiet;
    match cli.command {
        Command::Validate { spec } => validate(&spec),
        Command::Plan { spec, as_of, summary } => plan(&spec, as_of.as_deref(), summary.as_deref()).await,
        Command::Status { spec, format } => status(&spec, &format).await,
        Command::Report { spec, out, format } => report(&spec, out.as_deref(), &format).await,
        Command::Compact { spec } => compact(&spec, quiet).await,
        Command::Vacuum { spec } => vacuum(&spec, quiet).await,
        Command::Verify { spec, repair, quick } => super::verify::verify(&spec, repair, quick, quiet).await,
        Command::Init { path, force } => init(&path, force),
        Command::Completions { shell } => super::generate::completions(shell),
        Command::Man { out } => super::generate::man(out.as_deref()),
        Command::Schema {
            dataset,
            event,
            spec,
            u256,
            format,
        } => super::schema::schema(dataset.as_deref(), event.as_deref(), spec.as_deref(), &u256, &format),
        Command::Sim { port, host, opts } => {
            let listener = tokio::net::TcpListener::bind((host.as_str(), port))
                .await
                .map_err(|e| CliError::io(format!("cannot listen on {host}:{port}"), e))?;
            let addr = listener.local_addr().map_err(|e| CliError::io("the simulator's address", e))?;
            super::say::say(
                super::say::Level::Info,
                "listening",
                &format!("chainetl sim listening on http://{addr}\n"),
                serde_json::json!({"url": format!("http://{addr}")}),
            );
            crate::sim::serve(opts, listener).await.map_err(CliError::Usage)?;
            Ok(Exit::Success)
        }
        Command::Run {
            spec,
            fresh,
            shard,
            progress_secs,
            follow,
            as_of,
            summary,
            metrics_file,
            metrics_addr,
        } => {
            let s = load(&spec)?;
            let as_of = parse_as_of(as_of.as_deref())?;
            let shard = shard.as_deref().map(job::parse_shard).transpose()?;
            let opts = RunOptions {
                fresh,
                shard,
                follow,
                as_of,
                ..RunOptions::default()
            };
            let every = (!quiet && progress_secs > 0).then(|| Duration::from_secs(progress_secs));
            let tick = Duration::from_secs(if progress_secs > 0 { progress_secs } else { 10 });
            let metrics = super::metrics::start(&s.name, metrics_file, metrics_addr, tick).await?;
            let face = Face {
                quiet,
                intro: true,
                progress_every: every,
                summary_json: summary == "json",
                metrics,
            };
            super::run::run_and_report(s, opts, face).await
        }
    }
}

fn load(args: &SpecArgs) -> Result<Spec, CliError> {
    args.load().map_err(CliError::Spec)
}

fn validate(args: &SpecArgs) -> Result<Exit, CliError> {
    let s = load(args)?;
    for w in decoding_warnings(&s) {
        eprintln!("warning: {w}");
    }
    // The spec alone is checked; `plan` and `run` refuse what the
    // environment lacks.
    if let Some(m) = s.source.unset_key_message() {
        eprintln!("warning: {m} (`plan` and `run` refuse until it is set)");
    }
    let n = s.exports.len();
    outln!("{}: ok ({n} export{})", args.spec, if n == 1 { "" } else { "s" });
    Ok(Exit::Success)
}

/// Decoded events that declare no `indexed` parameter: the form people
/// paste from block explorers, which logs carrying their parameters in
/// topics never fit.
fn decoding_warnings(s: &crate::spec::Spec) -> Vec<String> {
    let mut out = Vec::new();
    for e in &s.exports {
        for t in e.decoding.iter().flat_map(|d| d.tables.iter()) {
            let inputs = &t.event.inputs;
            if !inputs.is_empty() && inputs.iter().all(|p| !p.indexed) {
                out.push(format!(
                    "export[{}]: event {} declares no indexed parameter, so it fits only logs with topic0 alone; \
                     most events index some (ERC-20 Transfer: `Transfer(address indexed from, address indexed to, uint256 value)`, \
                     or dataset = \"erc20_transfers\"): copy the event from the contract's ABI, `indexed` marks included",
                    e.index,
                    t.event.signature()
                ));
            }
        }
    }
    out
}

/// `plan`: the next run's units, from the job's state when it has one. A
/// state that cannot be read (an unreachable bucket) is said, and the plan
/// is that of a new job; a spec or `--as-of` that `run` would refuse is
/// refused the same way.
async fn plan(args: &SpecArgs, as_of: Option<&str>, summary: Option<&str>) -> Result<Exit, CliError> {
    let s = load(args)?;
    let as_of = parse_as_of(as_of)?;
    let view = match job::plan_view(&s, as_of).await {
        Ok(v) => v,
        Err(e) if e.exit_code() == 2 => return Err(e.into()),
        Err(e) => {
            eprintln!(
                "warning: cannot read the job's state ({}): planned as a new job",
                redact(&e.to_string())
            );
            job::PlanView::new_job(&s, as_of.unwrap_or_else(|| plan::job_now(&s)))
        }
    };
    if summary == Some("json") {
        outln!("{}", json_text(&super::plan::plan_json(&s, &view)));
    } else {
        out!("{}", super::plan::plan_listing(&s, &view, summary.is_some()));
    }
    Ok(Exit::Success)
}

/// `--as-of`: an ISO 8601 instant, a usage error otherwise.
fn parse_as_of(as_of: Option<&str>) -> Result<Option<i64>, CliError> {
    as_of
        .map(window::parse_instant)
        .transpose()
        .map_err(|m| CliError::Usage(format!("--as-of: {m}")))
}

async fn status(args: &SpecArgs, format: &str) -> Result<Exit, CliError> {
    let s = load(args)?;
    let status = job::status(&s).await.map_err(|e| CliError::io("reading the job's state", e))?;
    let view = status_view(&s, &status);
    if format == "json" {
        outln!("{}", json_text(&view));
        return Ok(Exit::Success);
    }
    out!("{}", render::status_table(&view));
    for p in &view.periods_exported {
        outln!("export[{}]: aligned period {} exported", p.export, p.window);
    }
    for m in &view.marks {
        outln!("{}", mark_line(m));
    }
    if !view.interrupted.is_empty() {
        outln!("interrupted, not finished:");
        for line in interrupted_lines(&view.interrupted) {
            outln!("{line}");
        }
    }
    for r in &view.refused {
        outln!("the newest run stopped: {}", redact(&r.text));
    }
    Ok(Exit::Success)
}

/// A view as the JSON scripts read: pretty, and through a
/// `serde_json::Value` so that keys come in the order they always have
/// (sorted), whatever the order of the struct's fields.
fn json_text(view: &impl serde::Serialize) -> String {
    serde_json::to_value(view)
        .and_then(|v| serde_json::to_string_pretty(&v))
        .unwrap_or_default()
}

/// `chainetl report`: the job's page (or its JSON) written to `out`.
async fn report(args: &SpecArgs, out: Option<&str>, format: &str) -> Result<Exit, CliError> {
    let s = load(args)?;
    let doc = job::view::overview::overview(&s)
        .await
        .map_err(|e| CliError::io("reading the job's state", e))?;
    let body = if format == "json" {
        format!("{}\n", json_text(&doc))
    } else {
        super::page::render(&doc)
    };
    let path = match out {
        Some("-") => {
            out!("{body}");
            return Ok(Exit::Success);
        }
        Some(p) => p.to_string(),
        None if format == "json" => {
            out!("{body}");
            return Ok(Exit::Success);
        }
        None => format!("{}-report.html", s.name),
    };
    std::fs::write(&path, body.as_bytes()).map_err(|e| CliError::io(format!("cannot write {path}"), e))?;
    super::say::say(
        super::say::Level::Info,
        "report",
        &format!("wrote {path}\n"),
        serde_json::json!({"path": path, "bytes": body.len()}),
    );
    Ok(Exit::Success)
}

/// Where an incremental export stands, for `status`.
fn mark_line(m: &MarkLine) -> String {
    let below = if m.by_day {
        format!("days before {}", window::iso(m.next as i64))
    } else {
        format!("blocks below {}", m.next)
    };
    format!(
        "export[{}] {}: incremental, exported {below} ({} reorg{} repaired){}",
        m.export,
        m.chain,
        m.reorgs,
        if m.reorgs == 1 { "" } else { "s" },
        if m.repairing {
            "; a reorg repair is unfinished: run again"
        } else {
            ""
        }
    )
}

/// One line per interrupted operation: what, where, what readers see and
/// what finishes it.
fn init(path: &str, force: bool) -> Result<Exit, CliError> {
    if std::path::Path::new(path).exists() && !force {
        return Err(CliError::Usage(format!("{path} exists; use --force to overwrite it")));
    }
    std::fs::write(path, crate::spec::EXAMPLE).map_err(|e| CliError::io(format!("writing {path}"), e))?;
    outln!("wrote {path}: edit it, then `chainetl validate {path}` and `chainetl run {path}`");
    Ok(Exit::Success)
}

async fn vacuum(args: &SpecArgs, quiet: bool) -> Result<Exit, CliError> {
    let s = load(args)?;
    if !crate::sink::format::for_output(&s.output).publishes() {
        outln!(
            "job `{}` writes {}: replaced files are deleted at once, nothing to vacuum",
            s.name,
            s.output.format
        );
        return Ok(Exit::Success);
    }
    match job::maintain::vacuum::vacuum_job(&s).await? {
        None => outln!("job `{}` has not run yet: nothing to vacuum", s.name),
        Some(v) if !quiet => outln!(
            "vacuum: deleted {} ({:.1} MiB) and {} that no version within the retention ({}s) reads",
            crate::util::words::count(v.files as u64, "data file"),
            v.bytes as f64 / (1024.0 * 1024.0),
            crate::util::words::count(
                v.log_files as u64,
                if s.output.format == crate::spec::OutputFormat::Iceberg {
                    "metadata file"
                } else {
                    "log file"
                }
            ),
            v.retention_secs
        ),
        Some(_) => {}
    }
    Ok(Exit::Success)
}

async fn compact(args: &SpecArgs, quiet: bool) -> Result<Exit, CliError> {
    let s = load(args)?;
    match job::compact_job(&s, None).await? {
        None => outln!("job `{}` has not run yet: nothing to compact", s.name),
        Some(c) => {
            if !quiet {
                outln!("{}", render::compaction(&c));
            }
            if !c.skipped.is_empty() {
                // Each was logged with its error; the exit says it.
                return Ok(Exit::Failed);
            }
        }
    }
    Ok(Exit::Success)
}
