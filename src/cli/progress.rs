//! Progress on the terminal: indicatif bars (one per export: units, rows,
//! rows/s, requests, retries, ETA), a plain line every N seconds when
//! stderr is not a terminal, nothing with `--quiet`. A ticker task renders
//! the job's live counters ([`ExportProgress`]).

use crate::job::ExportProgress;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// How progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Display {
    /// Bars on a terminal.
    Bars,
    /// A line every so often.
    Lines(Duration),
    /// Nothing.
    Off,
}

impl Display {
    /// Bars when stderr is a terminal, else lines every `every` (None: off).
    pub fn auto(every: Option<Duration>) -> Display {
        match every {
            None => Display::Off,
            // JSON logs are for machines: lines, even on a terminal.
            Some(_) if std::io::stderr().is_terminal() && !super::say::json() => Display::Bars,
            Some(d) => Display::Lines(d),
        }
    }
}

/// Renders `exports` until the returned task is aborted; `finish` draws the final state.
pub fn spawn(display: Display, exports: Vec<Arc<ExportProgress>>) -> Option<Ticker> {
    match display {
        Display::Off => None,
        Display::Bars => {
            let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr_with_hz(8));
            let style = ProgressStyle::with_template("{prefix:<34} [{bar:24.cyan/blue}] {percent:>3}% {msg} ETA {eta}")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> ");
            let bars: Vec<ProgressBar> = exports
                .iter()
                .map(|e| {
                    let b = multi.add(ProgressBar::new(e.work_total.load(Ordering::Relaxed).max(1)));
                    b.set_style(style.clone());
                    b.set_prefix(e.label.clone());
                    b
                })
                .collect();
            let ex = exports.clone();
            let bars2 = bars.clone();
            let task = tokio::spawn(async move {
                let start = Instant::now();
                loop {
                    draw_bars(&ex, &bars2, start);
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
            });
            Some(Ticker {
                task,
                bars,
                exports,
                start: Instant::now(),
            })
        }
        Display::Lines(every) => {
            let ex = exports.clone();
            let task = tokio::spawn(async move {
                let start = Instant::now();
                loop {
                    tokio::time::sleep(every).await;
                    for (i, e) in ex.iter().enumerate() {
                        let fields = super::say::json().then(|| super::json::progress(i, e, start.elapsed().as_secs_f64()));
                        let text = format!("progress: {}: {}\n", e.label, figures(e, start));
                        super::say::say(super::say::Level::Info, "progress", &text, fields.unwrap_or_default());
                    }
                }
            });
            Some(Ticker {
                task,
                bars: Vec::new(),
                exports,
                start: Instant::now(),
            })
        }
    }
}

/// The figures shown for an export, on a bar or a progress line.
fn figures(e: &ExportProgress, start: Instant) -> String {
    let secs = start.elapsed().as_secs_f64().max(0.001);
    let rows = e.rows.load(Ordering::Relaxed);
    format!(
        "units {}/{}, rows {} ({:.0}/s), requests {}, retries {}, 429s {}",
        e.units_done.load(Ordering::Relaxed),
        e.units_total.load(Ordering::Relaxed),
        rows,
        rows as f64 / secs,
        e.sum(|s| &s.requests),
        e.sum(|s| &s.retries),
        e.sum(|s| &s.throttled),
    )
}

fn draw_bars(exports: &[Arc<ExportProgress>], bars: &[ProgressBar], start: Instant) {
    for (e, b) in exports.iter().zip(bars) {
        let total = e.work_total.load(Ordering::Relaxed).max(1);
        b.set_length(total);
        b.set_position(e.work_done.load(Ordering::Relaxed).min(total));
        b.set_message(figures(e, start));
    }
}

/// The running renderer.
#[derive(Debug)]
pub struct Ticker {
    task: tokio::task::JoinHandle<()>,
    bars: Vec<ProgressBar>,
    exports: Vec<Arc<ExportProgress>>,
    start: Instant,
}

impl Ticker {
    /// Stops rendering, leaving the final state on screen.
    pub fn finish(self) {
        self.task.abort();
        if !self.bars.is_empty() {
            draw_bars(&self.exports, &self.bars, self.start);
            for b in &self.bars {
                b.finish();
            }
        }
    }
}
