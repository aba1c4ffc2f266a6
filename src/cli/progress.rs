//! Progress on the terminal: indicatif bars (one per export: units, rows,
//! rows/s, requests, retries, ETA), a plain line every N seconds when
//! stderr is not a terminal, nothing with `--quiet`. A ticker task renders
//! the job's live counters ([`ExportProgress`]).
//!
//! The percentage counts units (see [`ExportProgress::fraction`]): 100%
//! only when every unit of the run is done. Labels are padded to the
//! longest, and the figures to fixed widths, so bars and lines align.

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
            let style = ProgressStyle::with_template("{prefix} [{bar:24.cyan/blue}] {msg} ETA {eta}")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> ");
            let width = label_width(&exports);
            let bars: Vec<ProgressBar> = exports
                .iter()
                .map(|e| {
                    let b = multi.add(ProgressBar::new(e.fraction().1.max(1)));
                    b.set_style(style.clone());
                    b.set_prefix(format!("{:<width$}", e.label));
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
            let width = label_width(&exports) + 1;
            let task = tokio::spawn(async move {
                let start = Instant::now();
                loop {
                    tokio::time::sleep(every).await;
                    for (i, e) in ex.iter().enumerate() {
                        let fields = super::say::json().then(|| super::json::progress(i, e, start.elapsed().as_secs_f64()));
                        let text = format!("progress: {:<width$} {}\n", format!("{}:", e.label), figures(e, start));
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

/// The widest label, so every bar and line starts its figures in one column.
fn label_width(exports: &[Arc<ExportProgress>]) -> usize {
    exports.iter().map(|e| e.label.chars().count()).max().unwrap_or(0)
}

/// The figures shown for an export, on a bar or a progress line: the
/// percentage of units done first, then fixed-width counts.
fn figures(e: &ExportProgress, start: Instant) -> String {
    let secs = start.elapsed().as_secs_f64().max(0.001);
    let rows = e.rows.load(Ordering::Relaxed);
    let total = e.units_total.load(Ordering::Relaxed);
    let w = total.to_string().len();
    format!(
        "{:>3}% units {:>w$}/{total}, rows {rows:>10} ({:>7.0}/s), requests {:>6}, retries {:>4}, 429s {:>4}",
        e.percent(),
        e.units_done.load(Ordering::Relaxed),
        rows as f64 / secs,
        e.sum(|s| &s.requests),
        e.sum(|s| &s.retries),
        e.sum(|s| &s.throttled),
    )
}

fn draw_bars(exports: &[Arc<ExportProgress>], bars: &[ProgressBar], start: Instant) {
    for (e, b) in exports.iter().zip(bars) {
        let (done, total) = e.fraction();
        b.set_length(total.max(1));
        b.set_position(done.min(total));
        b.set_message(figures(e, start));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_start_with_the_units_percentage_and_keep_their_widths() {
        let e = ExportProgress::default();
        e.units_total.store(12, Ordering::Relaxed);
        e.units_done.store(3, Ordering::Relaxed);
        // Estimated requests all spent: the percentage still follows units.
        e.work_total.store(4, Ordering::Relaxed);
        e.work_done.store(40, Ordering::Relaxed);
        let start = Instant::now();
        let a = figures(&e, start);
        assert!(a.starts_with(" 25% units  3/12, rows "), "{a}");
        e.units_done.store(12, Ordering::Relaxed);
        e.rows.store(1_234, Ordering::Relaxed);
        let b = figures(&e, start);
        assert!(b.starts_with("100% units 12/12, rows "), "{b}");
        assert_eq!(a.find("requests"), b.find("requests"), "{a}\n{b}");
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
