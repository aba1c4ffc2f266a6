//! `chainetl verify`: what it found, how much it read, and `--repair`.

use super::args::SpecArgs;
use super::render::interrupted_lines;
use super::run::Face;
use super::{CliError, Exit};
use crate::job::view::status_view::InterruptedLine;
use crate::job::{self, RunOptions};
use crate::spec::Spec;
use crate::state::{Depth, Operation, Progress};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::collections::BTreeSet;
use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// Verifies `s` to the depth asked, with a bar on a terminal, and says how
/// much was read.
async fn checked(s: &Spec, quick: bool, quiet: bool) -> Result<job::view::inspect::Verification, CliError> {
    let depth = if quick { Depth::Quick } else { Depth::Content };
    let progress = Arc::new(Progress::default());
    let bar = (!quiet && std::io::stderr().is_terminal() && !super::say::json()).then(|| spawn_bar(progress.clone()));
    let started = Instant::now();
    let result = job::verify(s, depth, &progress).await;
    if let Some((bar, task)) = bar {
        task.abort();
        bar.finish_and_clear();
    }
    let v = result?;
    let files = progress.files_done.load(Ordering::Relaxed);
    let read = progress.bytes_read.load(Ordering::Relaxed);
    let secs = started.elapsed().as_secs_f64();
    if !quiet && files > 0 {
        if depth == Depth::Quick || read == 0 {
            eprintln!("checked {files} file{} by size and row count in {secs:.1} s", plural(files));
        } else {
            eprintln!(
                "checked {files} file{} by content: {} read in {secs:.1} s",
                plural(files),
                super::render::bytes(read)
            );
        }
        let bare = progress.without_checksum.load(Ordering::Relaxed);
        if depth == Depth::Content && bare > 0 {
            eprintln!(
                "{bare} file{} committed by an older build without a checksum: checked by size and row count only",
                plural(bare)
            );
        }
    }
    Ok(v)
}

/// A bar of bytes read (files to read whole), redrawn until aborted.
fn spawn_bar(progress: Arc<Progress>) -> (ProgressBar, tokio::task::JoinHandle<()>) {
    let bar = ProgressBar::with_draw_target(Some(1), ProgressDrawTarget::stderr_with_hz(8));
    bar.set_style(
        ProgressStyle::with_template("verify [{bar:24.cyan/blue}] {bytes}/{total_bytes} ({bytes_per_sec}) {msg} ETA {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    let b = bar.clone();
    let task = tokio::spawn(async move {
        loop {
            b.set_length(progress.bytes.load(Ordering::Relaxed).max(1));
            b.set_position(progress.bytes_read.load(Ordering::Relaxed));
            let (done, all) = (progress.files_done.load(Ordering::Relaxed), progress.files.load(Ordering::Relaxed));
            b.set_message(format!("files {done}/{all}"));
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    });
    (bar, task)
}

/// `"s"` unless `n` is one.
fn plural(n: impl Into<u64>) -> &'static str {
    if n.into() == 1 { "" } else { "s" }
}

/// Prints the files `verify` found missing or changed; returns the units
/// whose rows they held (those `--repair` exports again).
fn print_problems(job: &str, problems: &[crate::state::FileProblem]) -> BTreeSet<String> {
    let units: BTreeSet<String> = problems.iter().flat_map(|p| p.units.iter().cloned()).collect();
    if !problems.is_empty() {
        outln!(
            "{}: {} problem{} (committed files or rows missing or changed), in {} unit{}:",
            job,
            problems.len(),
            plural(problems.len() as u64),
            units.len(),
            plural(units.len() as u64)
        );
    }
    for p in problems {
        let unit = match p.units.as_slice() {
            [] => String::new(),
            [u] => format!(" (unit {u})"),
            us => format!(" (rows of {} units: {})", us.len(), us.join(", ")),
        };
        outln!("  {}: {}{unit}", p.path, p.what);
    }
    units
}

/// The rows readers see per table and chain, against those the job
/// committed: one line of the tables that agree, one a table and chain
/// that does not.
fn print_rows(rows: &[crate::state::TableRows], uncounted: usize) {
    let chain = |r: &crate::state::TableRows| r.chain.clone().unwrap_or_else(|| "several chains".into());
    let agree: Vec<String> = rows
        .iter()
        .filter(|r| r.committed == r.seen)
        .map(|r| format!("{} on {}: {}", r.table, chain(r), r.seen))
        .collect();
    if !agree.is_empty() {
        outln!("rows as committed: {}", agree.join(", "));
    }
    for r in rows.iter().filter(|r| r.committed != r.seen) {
        let (n, how) = if r.seen < r.committed {
            (r.committed - r.seen, "missing")
        } else {
            (r.seen - r.committed, "more than committed")
        };
        outln!(
            "rows of {} on {}: readers see {}, the job committed {} ({n} {how})",
            r.table,
            chain(r),
            r.seen,
            r.committed
        );
    }
    if uncounted > 0 {
        outln!(
            "{uncounted} compacted partition{} checked file by file only: the files their rows came from are counted \
             by no checkpoint (a closed period or segment, or a table derived from compacted files)",
            plural(uncounted as u64)
        );
    }
}

pub(super) async fn verify(args: &SpecArgs, repair: bool, quick: bool, quiet: bool) -> Result<Exit, CliError> {
    let s = args.load().map_err(CliError::Spec)?;
    if repair {
        let moved = job::maintain::settle_job_pointers(&s).await?;
        if moved > 0 {
            outln!(
                "pointed {moved} table{}' version pointer at its newest version (a writer died between the two)",
                plural(moved as u64)
            );
        }
    }
    let job::view::inspect::Verification {
        interrupted,
        problems,
        rows,
        uncounted,
        mixed,
        started,
        tables,
    } = checked(&s, quick, quiet).await?;
    if !started {
        outln!(
            "{}: no state of this job at {}: it has not run there, so there is nothing to verify",
            s.name,
            s.output.uri
        );
        return Ok(Exit::Success);
    }
    if !interrupted.is_empty() {
        let n = interrupted.len();
        outln!("{}: {n} operation{} begun and not finished:", s.name, plural(n as u64));
        for line in interrupted_lines(&interrupted.iter().map(InterruptedLine::from).collect::<Vec<_>>()) {
            outln!("{line}");
        }
    }
    if repair && !interrupted.is_empty() {
        // Swaps are finished first, with no request; what is still wrong
        // afterwards is repaired by exporting units again.
        let finished = job::maintain::compact::finish_swaps(&s).await?;
        if !finished.is_empty() {
            outln!("finished {} compaction swap{}", finished.len(), plural(finished.len() as u64));
        }
        let needs_run = interrupted.iter().any(|op| op.kind.needs_run());
        if !needs_run {
            return Box::pin(verify(args, repair, quick, quiet)).await;
        }
    }
    if let Some(c) = crate::job::view::status_view::CatalogLine::of(&s) {
        outln!("{}", c.text());
    }
    print_rows(&rows, uncounted);
    out!("{}", super::render::live_tables(&tables));
    if !mixed.is_empty() {
        outln!(
            "{}: table folders shared with other jobs that write them in another format or layout (readers cannot \
             read them as one table; give one job an output of its own, `--fresh` with another `uri`): {}",
            s.name,
            mixed.join(", ")
        );
        if problems.is_empty() && interrupted.is_empty() {
            return Ok(Exit::Failed);
        }
    }
    if problems.is_empty() && interrupted.is_empty() {
        outln!("{}: every committed file is in place, and readers see every committed row", s.name);
        return Ok(Exit::Success);
    }
    if problems.is_empty() && !repair {
        if interrupted.iter().any(|op| op.kind == Operation::Fresh) {
            outln!("run `chainetl run {}` to finish the clearing and export the job again", args.spec);
        } else if interrupted.iter().any(|op| op.kind.changes_output()) {
            outln!(
                "run `chainetl run {}` (or `chainetl verify {} --repair`) to finish the conversion (itself with no request to the service; the run then does what else it has to)",
                args.spec,
                args.spec
            );
        } else {
            outln!(
                "run `chainetl verify {} --repair` (or `chainetl compact`) to finish them",
                args.spec
            );
        }
        return Ok(Exit::Failed);
    }
    if problems.is_empty() {
        outln!("running the job to finish them (units whose rows are gone are exported again)");
    }
    let units = print_problems(&s.name, &problems);
    if repair && let Some(p) = problems.iter().find(|p| p.unit.is_empty()) {
        return Err(job::RunError::Repair(format!("{} cannot be repaired by exporting units again: {}", p.path, p.what)).into());
    }
    if !repair {
        outln!("run `chainetl verify {} --repair` to export those units again", args.spec);
        return Ok(Exit::Failed);
    }
    let opts = RunOptions {
        repair: units.into_iter().collect(),
        ..RunOptions::default()
    };
    // `verify --repair` has listed what it repairs: no plan intro after it.
    let face = Face {
        quiet,
        intro: false,
        progress_every: None,
        summary_json: false,
        metrics: None,
    };
    super::run::run_and_report(s, opts, face).await
}
