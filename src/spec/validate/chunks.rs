//! Unit sizes: `chunk_blocks` and `chunk_duration`, and refusing the one
//! an export's units are not cut by.

use super::Validator;
use super::export::At;
use crate::vocab::forms::parse_duration;
use crate::vocab::window::Window;
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
