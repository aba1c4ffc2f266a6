//! Unit sizes: `chunk_blocks` and `chunk_duration`, and refusing the one
//! an export's units are not cut by.
//!
//! # The bound
//!
//! The bound on work units: an export and chain may plan at most
//! [`MAX_UNITS`] units, counted here without making them.

use super::Validator;
use super::export::At;
use crate::spec::Selection;
use crate::vocab::chain::Chain;
use crate::vocab::cuts::{ALIGNMENT_SLACK, CutRule, MAX_UNITS};
use crate::vocab::forms::parse_duration;
use crate::vocab::window::{Resolved, Window};
use std::ops::Range;

impl Validator<'_> {
    /// Refuses a unit size that the export's units are not cut by: units of
    /// a block window (and of incremental runs) are block ranges, of a time
    /// window time spans, and blocks listed by number are batched per request.
    pub(super) fn chunk_keys_fit(&mut self, at: &At<'_>, window: Option<Window>, incremental: bool) {
        let e = at.raw;
        let blocks = e.chunk_blocks.as_ref().map(|x| ("chunk_blocks", x.span()));
        let duration = e.chunk_duration.as_ref().map(|x| ("chunk_duration", x.span()));
        let misfits: Vec<((&str, Range<usize>), &str)> = if e.numbers.is_some() {
            let why = "does not apply to `numbers`: blocks listed by number are fetched in batches per request";
            blocks.into_iter().chain(duration).map(|k| (k, why)).collect()
        } else if incremental {
            let why = "does not apply to an incremental export: its runs cut block ranges, by `chunk_blocks`";
            duration.map(|k| (k, why)).into_iter().collect()
        } else {
            match window {
                Some(Window::Blocks { .. }) => {
                    let why = "does not apply to a block window (`first..last`): its units are cut by `chunk_blocks`";
                    duration.map(|k| (k, why)).into_iter().collect()
                }
                Some(Window::Interval { .. } | Window::Relative { .. }) => {
                    let why = "does not apply to a time window: its units are cut by `chunk_duration`";
                    blocks.map(|k| (k, why)).into_iter().collect()
                }
                None => Vec::new(),
            }
        };
        for ((key, span), why) in misfits {
            self.err(span, at.key(key), why);
        }
    }

    /// `chunk_blocks` and `chunk_duration` (in seconds): the unit sizes.
    pub(super) fn chunks(&mut self, at: &At<'_>) -> (Option<u64>, Option<i64>) {
        let e = at.raw;
        let chunk_blocks = e.chunk_blocks.as_ref().map(|_| {
            let default = crate::spec::defaults::CHUNK_BLOCKS as i64;
            self.int_in(&e.chunk_blocks, &at.key("chunk_blocks"), 1, 100_000_000, default) as u64
        });
        let chunk_secs = match &e.chunk_duration {
            None => None,
            Some(d) => match parse_duration(d.get_ref()) {
                Ok(secs) => Some(secs),
                Err(msg) => {
                    self.err(d.span(), at.key("chunk_duration"), msg);
                    None
                }
            },
        };
        (chunk_blocks, chunk_secs)
    }
}

impl Validator<'_> {
    /// Refuses an export and chain cut into more than [`MAX_UNITS`]
    /// units, counted without making them at page size 1 plus
    /// [`ALIGNMENT_SLACK`] (the most units any page size gives, so a resumed
    /// job with another page size is covered too) under the hourly rule
    /// (the most any rule gives, so a job started under it is covered too).
    /// Incremental exports are cut per run, from the mark.
    pub(super) fn unit_bound(&mut self, at: &At<'_>, chains: &[Chain], selection: &Selection, incremental: bool) {
        let Some((window, chunk_blocks, chunk_secs)) = selection.chunked_window().filter(|_| !incremental) else {
            return;
        };
        // A relative window's length is what decides its units.
        let resolved = window.resolve(0);
        for &chain in chains {
            let n = selection.unit_count(chain, resolved, 1, CutRule::Hourly) + ALIGNMENT_SLACK;
            if n <= MAX_UNITS {
                continue;
            }
            let e = at.raw;
            let (key, span, fix) = match (resolved, chunk_blocks, chunk_secs) {
                (Resolved::Blocks { .. }, Some(_), _) => {
                    ("chunk_blocks", e.chunk_blocks.as_ref().map(|x| x.span()), "a larger chunk_blocks")
                }
                (Resolved::Time { .. }, _, Some(_)) => (
                    "chunk_duration",
                    e.chunk_duration.as_ref().map(|x| x.span()),
                    "a longer chunk_duration",
                ),
                _ => ("window", e.window.as_ref().map(|x| x.span()), "chunk_blocks / chunk_duration"),
            };
            self.err(
                span.unwrap_or(at.dataset_span.clone()),
                at.key(key),
                format!(
                    "cuts the window into up to {n} units on {chain}, more than the {MAX_UNITS} an export may have on a chain: set {fix}, or split the window over several jobs"
                ),
            );
            return;
        }
    }
}
