//! `run` (and `verify --repair`) on the terminal: signals, the intro,
//! progress, the summary table, and the exit code of the outcome.

use super::metrics::Metrics;
use super::progress::{Display, Ticker};
use super::say::{Level, say};
use super::{CliError, Exit, render};
use crate::job::{self, JobEvent, Observer, RunOptions, RunStatus, RunSummary};
use crate::spec::Spec;
use crate::util::redact::redact;
use serde_json::json;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// The first signal received (2: SIGINT, 15: SIGTERM; 0: none).
static SIGNAL: AtomicI32 = AtomicI32::new(0);

/// How a run is shown.
pub(super) struct Face {
    /// Errors only on stderr; no summary table.
    pub(super) quiet: bool,
    /// Print the plan's intro.
    pub(super) intro: bool,
    /// Seconds between progress lines when stderr is not a terminal (None: no progress).
    pub(super) progress_every: Option<Duration>,
    /// The summary on stdout as one JSON document (the run report) instead of the table.
    pub(super) summary_json: bool,
    /// Metrics to keep up to date, if asked for.
    pub(super) metrics: Option<Arc<Metrics>>,
}

/// Runs a job with signal handling, prints its intro, progress and
/// summary, keeps its metrics, and maps the outcome to an exit.
pub(super) async fn run_and_report(s: Spec, mut opts: RunOptions, face: Face) -> Result<Exit, CliError> {
    let (tx, rx) = tokio::sync::watch::channel(false);
    tokio::spawn(watch_signals(tx));
    let ticker: Arc<Mutex<Option<Ticker>>> = Arc::default();
    let display = Display::auto(face.progress_every);
    opts.observer = Some(observer(face.intro && !face.quiet, display, ticker.clone(), face.metrics.clone()));
    let result = job::run(s.clone(), opts, rx).await;
    if let Some(t) = ticker.lock().unwrap_or_else(PoisonError::into_inner).take() {
        t.finish();
    }
    if let Some(m) = &face.metrics {
        m.finish(result.as_ref().map_or(RunStatus::Failed, |s| s.status));
    }
    let summary = result?;
    if face.summary_json {
        let mut doc = serde_json::to_value(&summary).map_err(|e| CliError::io("rendering the summary", e))?;
        crate::util::redact::redact_json(&mut doc);
        outln!("{doc:#}");
    } else if !face.quiet {
        out!("{}", render::summary_table(&summary, &s.output.uri));
    }
    Ok(outcome(&summary))
}

/// Prints the intro when the run is planned (unless quiet), hands the
/// run's figures to the metrics, and starts the progress display when
/// units start.
fn observer(intro: bool, display: Display, ticker: Arc<Mutex<Option<Ticker>>>, metrics: Option<Arc<Metrics>>) -> Observer {
    Observer::new(move |event| match event {
        JobEvent::Started { live } => {
            if let Some(m) = &metrics {
                m.attach(live);
            }
        }
        JobEvent::Planned {
            spec,
            windows,
            segments,
            units,
            states,
        } if intro => {
            let text = render::intro(spec, windows, segments, units, states);
            let fields = super::say::json().then(|| super::json::intro(spec, windows, segments, units, states));
            say(Level::Info, "plan", &text, fields.unwrap_or_default());
        }
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
    if summary.status == RunStatus::Interrupted {
        let signal = SIGNAL.load(Ordering::SeqCst);
        say(
            Level::Warn,
            "interrupted",
            "interrupted: committed work is kept; run the same command again to resume\n",
            json!({"signal": signal, "status": summary.status}),
        );
        return Exit::Interrupted { signal };
    }
    // What the service refused, once each: the environment's to fix (2).
    for r in &summary.refused {
        let text = redact(&r.text);
        say(
            Level::Error,
            "refused",
            &format!("error: {text}\n"),
            json!({"error": text, "refused": r}),
        );
    }
    if let Some(e) = summary.error.as_ref().filter(|e| !summary.refused.iter().any(|r| &r.text == *e)) {
        let e = redact(e);
        say(
            Level::Error,
            "job_error",
            &format!("error: {e}; the job stopped (committed work is kept; re-run to resume)\n"),
            json!({"error": e}),
        );
    }
    if !summary.failed.is_empty() {
        say(Level::Error, "failed_units", &failed_text(summary), failed_fields(summary));
    }
    for u in &summary.undecoded {
        say(Level::Error, "undecoded", &format!("error: {u}\n"), json!({"error": u}));
    }
    if !summary.refused.is_empty() || !summary.undecoded.is_empty() {
        return Exit::Usage;
    }
    if summary.status == RunStatus::Failed {
        return Exit::Failed;
    }
    Exit::Success
}

fn failed_text(summary: &RunSummary) -> String {
    let mut text = format!(
        "{} unit(s) failed (committed work is kept; re-run to retry them):\n",
        summary.failed.len()
    );
    for f in &summary.failed {
        text.push_str(&format!(
            "  {} ({} {} {}): {}\n",
            f.unit,
            f.dataset,
            f.chain,
            f.range,
            redact(&f.error)
        ));
    }
    text
}

fn failed_fields(summary: &RunSummary) -> serde_json::Value {
    let units: Vec<serde_json::Value> = summary
        .failed
        .iter()
        .map(|f| json!({"unit": f.unit, "dataset": f.dataset, "chain": f.chain, "range": f.range, "error": redact(&f.error)}))
        .collect();
    json!({"count": units.len(), "units": units})
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
        let name = if sig == 15 { "SIGTERM" } else { "SIGINT" };
        if SIGNAL.swap(sig, Ordering::SeqCst) != 0 {
            say(
                Level::Warn,
                "signal",
                "second signal: exiting now\n",
                json!({"signal": name, "second": true}),
            );
            std::process::exit(if sig == 15 { 143 } else { 130 });
        }
        say(
            Level::Warn,
            "signal",
            "signal received: committing buffered work, then exiting (send it again to exit at once)\n",
            json!({"signal": name, "second": false}),
        );
        let _ = tx.send(true);
    }
}
