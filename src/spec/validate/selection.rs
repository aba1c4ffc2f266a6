//! What an export selects, by dataset: block numbers or a block window,
//! events with their filters, wallets' portfolios, token lookups.

use super::export::At;
use super::{Validator, dedup, short};
use crate::spec::{Selection, defaults};
use crate::vocab::Dataset;
use crate::vocab::evm::{EventSignature, is_hash32};
use crate::vocab::window::{MAX_BLOCK, Window};

impl Validator<'_> {
    /// The selection of `dataset`; `window` is the export's (for an
    /// incremental one, its placeholder), `chunks` its unit sizes.
    pub(super) fn selection(
        &mut self,
        at: &At<'_>,
        dataset: Dataset,
        window: Option<Window>,
        chunks: (Option<u64>, Option<i64>),
        incremental: bool,
    ) -> Option<Selection> {
        let (chunk_blocks, chunk_secs) = chunks;
        match dataset {
            Dataset::Blocks => self.blocks(at, window, chunks, incremental),
            Dataset::Events => {
                if at.raw.window.is_none() && !incremental {
                    self.err(
                        at.dataset_span.clone(),
                        at.key("window"),
                        format!("dataset `{dataset}` needs a window (e.g. `7d`, `2024-01-01..2024-02-01` or `18000000..18100000`)"),
                    );
                }
                let contract_address = at
                    .raw
                    .contract_address
                    .as_ref()
                    .map(|c| self.address(c, &at.key("contract_address")));
                let (topics, signatures) = self.signatures(at);
                Some(Selection::Events {
                    window: window?,
                    contract_address,
                    topics,
                    signatures,
                    chunk_blocks,
                    chunk_secs,
                })
            }
            Dataset::Portfolio => self.portfolio(at, window, incremental),
            Dataset::Tokens => {
                let addresses: Vec<String> = match self.list(&at.raw.addresses, &at.key("addresses"), 1_000_000) {
                    Some(l) => l.iter().map(|a| self.address(a, &at.key("addresses"))).collect(),
                    None => {
                        self.err(at.dataset_span.clone(), at.key("addresses"), "dataset `tokens` needs `addresses`");
                        Vec::new()
                    }
                };
                Some(Selection::Tokens {
                    addresses: dedup(addresses),
                })
            }
        }
    }

    /// Blocks: explicit `numbers`, or a window.
    fn blocks(&mut self, at: &At<'_>, window: Option<Window>, chunks: (Option<u64>, Option<i64>), incremental: bool) -> Option<Selection> {
        let (chunk_blocks, chunk_secs) = chunks;
        match (&at.raw.numbers, window) {
            (Some(_), w) => {
                if w.is_some() {
                    self.err(
                        At::span(&at.raw.window),
                        at.key("window"),
                        "give either `numbers` or `window`, not both",
                    );
                }
                Some(Selection::BlockNumbers(self.numbers(at)))
            }
            (None, Some(window)) => Some(Selection::BlockWindow {
                window,
                chunk_blocks,
                chunk_secs,
            }),
            (None, None) => {
                if at.raw.window.is_none() && !incremental {
                    self.err(
                        at.dataset_span.clone(),
                        at.key("window"),
                        "dataset `blocks` needs a `window` or `numbers`",
                    );
                }
                None
            }
        }
    }

    /// `numbers`: block numbers, sorted and without repeats.
    fn numbers(&mut self, at: &At<'_>) -> Vec<u64> {
        let list = self.list(&at.raw.numbers, &at.key("numbers"), 10_000_000).unwrap_or_default();
        let mut out = Vec::with_capacity(list.len());
        for n in list {
            match u64::try_from(*n.get_ref()) {
                Ok(b) if b <= MAX_BLOCK => out.push(b),
                _ => self.err(
                    n.span(),
                    at.key("numbers"),
                    format!("{} is not a block number from 0 to {MAX_BLOCK}", n.get_ref()),
                ),
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// `signatures`: the topic0 hashes they select (each once), and the
    /// ABI signatures among them in canonical form.
    fn signatures(&mut self, at: &At<'_>) -> (Vec<String>, Vec<EventSignature>) {
        let mut topics = Vec::new();
        let mut signatures = Vec::new();
        for s in self.list(&at.raw.signatures, &at.key("signatures"), 100).unwrap_or_default() {
            let t = s.get_ref().trim();
            if t.starts_with("0x") || t.starts_with("0X") {
                if is_hash32(t) {
                    topics.push(t.to_ascii_lowercase());
                } else {
                    self.err(
                        s.span(),
                        at.key("signatures"),
                        format!("`{}` is not a topic0 hash: expected 0x followed by 64 hex digits", short(t)),
                    );
                }
                continue;
            }
            match EventSignature::parse(t) {
                Ok(sig) => {
                    topics.push(sig.topic0.clone());
                    signatures.push(sig);
                }
                Err(why) => self.err(
                    s.span(),
                    at.key("signatures"),
                    format!(
                        "`{}`: {why} (expected an event signature such as `Transfer(address indexed from, address indexed to, uint256 value)` or a 0x topic0 hash)",
                        short(t)
                    ),
                ),
            }
        }
        // Two spellings of one event select it once.
        (dedup(topics), signatures)
    }

    /// Portfolio: `wallets`, an optional token filter, and a time window
    /// (the last 30 days when none is written).
    fn portfolio(&mut self, at: &At<'_>, window: Option<Window>, incremental: bool) -> Option<Selection> {
        let wallets: Vec<String> = match self.list(&at.raw.wallets, &at.key("wallets"), 100_000) {
            Some(l) => l.iter().map(|w| self.address(w, &at.key("wallets"))).collect(),
            None => {
                self.err(at.dataset_span.clone(), at.key("wallets"), "dataset `portfolio` needs `wallets`");
                Vec::new()
            }
        };
        let token_address = at.raw.token_address.as_ref().map(|c| self.address(c, &at.key("token_address")));
        let window = match window {
            Some(Window::Blocks { .. }) => {
                self.err(
                    At::span(&at.raw.window),
                    at.key("window"),
                    "portfolios take a relative window (`30d`) or a time interval, not a block range",
                );
                return None;
            }
            Some(w) => w,
            None if at.raw.window.is_some() || incremental => return None,
            None => Window::Relative {
                secs: defaults::PORTFOLIO_WINDOW_SECS,
            },
        };
        Some(Selection::Portfolio {
            wallets: dedup(wallets),
            token_address,
            window,
        })
    }
}
