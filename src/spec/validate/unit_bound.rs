//! The bound on work units: an export and chain may plan at most
//! [`MAX_UNITS`] units, counted here without making them.

use super::Validator;
use super::export::At;
use crate::spec::Selection;
use crate::vocab::chain::Chain;
use crate::vocab::cuts::{ALIGNMENT_SLACK, CutRule, MAX_UNITS};
use crate::vocab::window::Resolved;

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
