//! The units of one export on one chain, each with its deterministic id
//! and an estimate of the requests it takes (for balancing shards and
//! estimating work).

use super::Cutting;
use super::unit::{Unit, UnitRange};
use crate::spec::{Export, Selection};
use crate::vocab::chain::Chain;
use crate::vocab::cuts::{Cuts, NUMBERS_PER_REQUEST, PORTFOLIO_DAYS_PER_PAGE, TOKENS_PER_UNIT};
use crate::vocab::window::{Resolved, day_of};

/// Adds the units of `e` on `chain` to `out`: over `frozen` when given (a
/// frozen window or a segment's range), else over the export's window
/// resolved at 0; cut as `cut` says.
pub(super) fn plan_export(e: &Export, chain: Chain, frozen: Option<Resolved>, cut: Cutting, out: &mut Vec<Unit>) {
    let page = u64::from(cut.page_size.max(1));
    let mut units = Units {
        prefix: format!("e{}-{}-{}", e.index, e.dataset, chain),
        export: e,
        chain,
        out,
    };
    if let Some((window, chunk_blocks, chunk_secs)) = e.selection.chunked_window() {
        let resolved = frozen.unwrap_or_else(|| window.resolve(0));
        let per_block = e.selection.rows_per_block();
        let cuts = Cuts::of_window(resolved, chunk_blocks, chunk_secs, per_block, chain, page, cut.rule);
        match resolved {
            Resolved::Blocks { .. } => units.blocks(&cuts, per_block, page),
            Resolved::Time { .. } => units.times(&cuts, per_block, page),
        }
        return;
    }
    match &e.selection {
        Selection::BlockWindow { .. } | Selection::Events { .. } => {}
        Selection::BlockNumbers(numbers) => units.numbers(numbers, page),
        Selection::Portfolio { wallets, window, .. } => match frozen.unwrap_or_else(|| window.resolve(0)) {
            Resolved::Time { start, end } => units.wallets(wallets, start, end, page),
            // Validation rejects block ranges for portfolios.
            Resolved::Blocks { .. } => {}
        },
        Selection::Tokens { addresses } => units.tokens(addresses),
    }
}

/// Units of one export and chain being made.
struct Units<'a> {
    /// `e<export>-<dataset>-<chain>`, the start of every id.
    prefix: String,
    export: &'a Export,
    chain: Chain,
    out: &'a mut Vec<Unit>,
}

impl Units<'_> {
    fn push(&mut self, id: String, range: UnitRange, estimated_requests: u64) {
        self.out.push(Unit {
            id,
            export: self.export.index,
            dataset: self.export.dataset,
            chain: self.chain,
            range,
            estimated_requests: estimated_requests.max(1),
        });
    }

    /// Block ranges `[s, end)`, ids `…-b<s>-<end>`.
    fn blocks(&mut self, cuts: &Cuts, per_block: u64, page: u64) {
        for (s, end) in cuts.ranges() {
            // Cuts lie within [first, last + 1]; only last = u64::MAX
            // (refused by validation) could saturate here.
            let (s, end) = (u64::try_from(s).unwrap_or(u64::MAX), u64::try_from(end).unwrap_or(u64::MAX));
            let blocks = end.saturating_sub(s);
            self.push(
                format!("{}-b{s}-{end}", self.prefix),
                UnitRange::Blocks { start: s, end },
                (blocks.saturating_mul(per_block) / page).saturating_add(1),
            );
        }
    }

    /// Time ranges `[s, t)`, ids `…-t<s>-<t>`.
    fn times(&mut self, cuts: &Cuts, per_block: u64, page: u64) {
        for (s, t) in cuts.ranges() {
            // Cuts lie within [start, end], both i64.
            let (s, t) = (i64::try_from(s).unwrap_or(i64::MAX), i64::try_from(t).unwrap_or(i64::MAX));
            let ms = u64::try_from(self.chain.block_ms()).unwrap_or(1).max(1);
            let blocks = u64::try_from(i128::from(t) - i128::from(s)).unwrap_or(0).saturating_mul(1000) / ms;
            self.push(
                format!("{}-t{s}-{t}", self.prefix),
                UnitRange::Time { start: s, end: t },
                (blocks.saturating_mul(per_block) / page).saturating_add(1),
            );
        }
    }

    /// Batches of explicit block numbers, one request each, ids `…-n<5 digits>`.
    fn numbers(&mut self, numbers: &[u64], page: u64) {
        for (i, batch) in numbers.chunks(NUMBERS_PER_REQUEST).enumerate() {
            let n = batch.len() as u64;
            self.push(
                format!("{}-n{i:05}", self.prefix),
                UnitRange::Numbers { numbers: batch.to_vec() },
                n.div_ceil(page),
            );
        }
    }

    /// One unit per wallet over the days of `[start, end)`, ids
    /// `…-w<40 hex>-d<day>-<day>`.
    fn wallets(&mut self, wallets: &[String], start: i64, end: i64, page: u64) {
        let days = u64::try_from((i128::from(end) - i128::from(start)) / 86_400 + 1).unwrap_or(0);
        for w in wallets {
            self.push(
                format!("{}-w{}-d{}-{}", self.prefix, &w[2..], day_of(start), day_of(end)),
                UnitRange::Wallet {
                    wallet: w.clone(),
                    start,
                    end,
                },
                days.div_ceil(page.min(PORTFOLIO_DAYS_PER_PAGE)),
            );
        }
    }

    /// Batches of token addresses, ids `…-a<5 digits>`.
    fn tokens(&mut self, addresses: &[String]) {
        for (i, batch) in addresses.chunks(TOKENS_PER_UNIT).enumerate() {
            self.push(
                format!("{}-a{i:05}", self.prefix),
                UnitRange::Tokens { addresses: batch.to_vec() },
                batch.len() as u64,
            );
        }
    }
}
