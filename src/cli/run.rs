//! `run` (and `verify --repair`) on the terminal: signals, the intro,
//! progress, the summary table, and the exit code of the outcome.

use super::progress::{Display, Ticker};
use super::{CliError, Exit, render};
use crate::job::{self, JobEvent, Observer, RunOptions, RunSummary};
use crate::spec::Spec;
use crate::util::redact::redact;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// The first signal received (2: SIGINT, 15: SIGTERM; 0: none).
static SIGNAL: AtomicI32 = AtomicI32::new(0);

/// Runs a job with signal handling, prints its intro (with `intro`),
/// progress and summary, and maps the outcome to an exit.
/// `progress_every`: seconds between progress lines when stderr is not a
/// terminal (None: no progress).
pub(super) async fn run_and_report(
    s: Spec,
    mut opts: RunOptions,
    quiet: bool,
    intro: bool,
    progress_every: Option<Duration>,
) -> Result<Exit, CliError> {
    let (tx, rx) = tokio::sync::watch::channel(false);
    tokio::spawn(watch_signals(tx));
    let ticker: Arc<Mutex<Option<Ticker>>> = Arc::default();
    opts.observer = Some(observer(intro && !quiet, Display::auto(progress_every), ticker.clone()));
    let result = job::run(s.clone(), opts, rx).await;
    if let Some(t) = ticker.lock().unwrap_or_else(PoisonError::into_inner).take() {
        t.finish();
    }
    let summary = result?;
    if !quiet {
        print!("{}", render::summary_table(&summary, &s.output.uri));
    }
    Ok(outcome(&summary))
}

/// Prints the intro when the run is planned (unless quiet) and starts the
/// progress display when units start.
fn observer(intro: bool, display: Display, ticker: Arc<Mutex<Option<Ticker>>>) -> Observer {
    Observer::new(move |event| match event {
        JobEvent::Planned {
            spec,
            windows,
            segments,
            units,
            states,
        } if intro => eprint!("{}", render::intro(spec, windows, segments, units, states)),
        JobEvent::Fetching { progress } => {
            let mut t = ticker.lock().unwrap_or_else(PoisonError::into_inner);
            if t.is_none() {
                *t = super::progress::spawn(display, progress.to_vec());
            }
        }
        _ => {}
    })
}

/// The exit of a finished run, its failures printed.
fn outcome(summary: &RunSummary) -> Exit {
    if summary.interrupted {
        eprintln!("interrupted: committed work is kept; run the same command again to resume");
        return Exit::Interrupted {
            signal: SIGNAL.load(Ordering::SeqCst),
        };
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
        return Exit::Failed;
    }
    Exit::Success
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
