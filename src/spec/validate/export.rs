//! One `[[export]]`: its dataset, chains, window, the keys that apply to
//! its dataset, unit sizes, schedule (`align`) and incremental settings.
//! What it selects is checked in [`super::selection`].

use super::Validator;
use crate::spec::raw::RawExport;
use crate::spec::shape::nearest;
use crate::spec::{Export, Incremental};
use crate::vocab::Dataset;
use crate::vocab::chain::Chain;
use crate::vocab::forms::parse_block;
use crate::vocab::window::{Align, Window};
use std::collections::BTreeMap;
use std::ops::Range;
use std::time::Duration;
use toml::Spanned;

/// The export being checked: where its errors point and what they name.
pub(super) struct At<'e> {
    /// Its position in the spec.
    pub(super) i: usize,
    /// As written.
    pub(super) raw: &'e RawExport,
    /// Where its `dataset` is, for errors about keys that are missing.
    pub(super) dataset_span: Range<usize>,
}

impl At<'_> {
    /// The key path of `name` in this export: `export[2].window`.
    pub(super) fn key(&self, name: &str) -> String {
        format!("export[{}].{name}", self.i)
    }

    /// Where `v` is, or nowhere in particular when it is absent.
    pub(super) fn span<T>(v: &Option<Spanned<T>>) -> Range<usize> {
        v.as_ref().map(|x| x.span()).unwrap_or(0..0)
    }
}

/// The keys each dataset takes (beside `dataset` and `chains`).
fn keys_of(dataset: Dataset) -> &'static [&'static str] {
    match dataset {
        Dataset::Blocks => &[
            "window",
            "numbers",
            "chunk_blocks",
            "chunk_duration",
            "align",
            "incremental",
            "start",
            "confirmations",
            "poll_interval",
            "roll_interval",
            "columns",
            "exclude_columns",
        ],
        Dataset::Events => &[
            "window",
            "contract_address",
            "signatures",
            "decode",
            "abi",
            "table",
            "u256",
            "also_raw",
            "chunk_blocks",
            "chunk_duration",
            "align",
            "incremental",
            "start",
            "confirmations",
            "poll_interval",
            "roll_interval",
            "columns",
            "exclude_columns",
        ],
        Dataset::Portfolio => &[
            "window",
            "wallets",
            "token_address",
            "align",
            "incremental",
            "start",
            "columns",
            "exclude_columns",
        ],
        Dataset::Tokens => &["addresses", "columns", "exclude_columns"],
    }
}

/// Every value `dataset` takes: the datasets and the decoding presets.
fn dataset_names() -> impl Iterator<Item = &'static str> {
    Dataset::ALL
        .into_iter()
        .map(Dataset::name)
        .chain(crate::spec::decoding::PRESETS.iter().map(|(name, _)| *name))
}

impl Validator<'_> {
    pub(super) fn export(&mut self, i: usize, e: &RawExport, poll: i64, roll: i64) -> Option<Export> {
        let at = At {
            i,
            raw: e,
            dataset_span: At::span(&e.dataset),
        };
        let dataset = self.dataset(&at);
        let chains = self.chains(&at);
        let window = e.window.as_ref().and_then(|w| match Window::parse(w.get_ref()) {
            Ok(x) => Some(x),
            Err(msg) => {
                self.err(w.span(), at.key("window"), msg);
                None
            }
        });
        let dataset = dataset?;
        // Without chains (reported by the schema pass) there is nothing to check further.
        e.chains.as_ref()?;
        self.keys_apply(&at, dataset);
        let chunks = self.chunks(&at);
        let window_text = e.window.as_ref().map(|w| w.get_ref().trim().to_string());
        let align = e.align.as_ref().and_then(|a| self.align(&at, a, window));
        let incremental = self.incremental(&at, dataset);
        let poll_interval = Duration::from_secs(self.duration(&e.poll_interval, &at.key("poll_interval"), poll) as u64);
        let roll_interval = Duration::from_secs(self.duration(&e.roll_interval, &at.key("roll_interval"), roll) as u64);
        // Incremental exports have no window of their own: each run's range
        // comes from the mark; the placeholder keeps the selection's shape.
        let window = match &incremental {
            Some(inc) if dataset == Dataset::Portfolio => Some(Window::Interval {
                start: inc.start as i64,
                end: inc.start as i64 + 86_400,
            }),
            Some(inc) => Some(Window::Blocks {
                first: inc.start,
                last: inc.start,
            }),
            None => window,
        };
        let is_incremental = e.incremental.as_ref().is_some_and(|x| *x.get_ref());
        self.chunk_keys_fit(&at, window, is_incremental);
        let Some(mut selection) = self.selection(&at, dataset, window, chunks, is_incremental) else {
            // The columns are checked all the same, so that one `validate`
            // lists every problem of the export (a bad window hid them).
            // Decoded tables' columns depend on the decoding, which needs
            // the selection: their names wait for it.
            let preset = e
                .dataset
                .as_ref()
                .is_some_and(|d| crate::spec::decoding::PRESETS.iter().any(|(name, _)| name == d.get_ref()));
            if !(preset || e.abi.is_some() || e.decode.is_some()) {
                self.columns(&at, dataset, None);
            }
            return None;
        };
        let decoding = if dataset == Dataset::Events {
            self.decoding(&at, &mut selection)
        } else {
            None
        };
        let dropped_columns = self.columns(&at, dataset, decoding.as_ref());
        self.unit_bound(&at, &chains, &selection, incremental.is_some());
        Some(Export {
            index: i,
            dataset,
            chains,
            selection,
            window_text,
            align,
            incremental,
            poll_interval,
            roll_interval,
            decoding,
            dropped_columns,
        })
    }

    /// `dataset`; a missing one is reported by the schema pass.
    fn dataset(&mut self, at: &At<'_>) -> Option<Dataset> {
        let d = at.raw.dataset.as_ref()?;
        let preset = crate::spec::decoding::PRESETS.iter().any(|(name, _)| name == d.get_ref());
        let parsed = if preset {
            Some(Dataset::Events)
        } else {
            Dataset::parse(d.get_ref())
        };
        if parsed.is_none() {
            self.err(
                d.span(),
                at.key("dataset"),
                match nearest(d.get_ref(), dataset_names()) {
                    Some(n) => format!("unknown dataset `{}`: did you mean `{n}`?", super::short(d.get_ref())),
                    None => format!(
                        "unknown dataset `{}`: expected blocks, events, portfolio, tokens, erc20_transfers, erc20_approvals or erc721_transfers",
                        super::short(d.get_ref())
                    ),
                },
            );
        }
        parsed
    }

    /// `chains`: at least one, each known, none twice.
    fn chains(&mut self, at: &At<'_>) -> Vec<Chain> {
        let mut chains = Vec::new();
        let Some(c) = &at.raw.chains else {
            return chains;
        };
        if c.get_ref().is_empty() {
            self.err(
                c.span(),
                at.key("chains"),
                format!("must name at least one chain ({})", Chain::names()),
            );
        }
        for c in c.get_ref() {
            match c.get_ref().parse::<Chain>() {
                Ok(ch) if chains.contains(&ch) => self.err(c.span(), at.key("chains"), format!("`{ch}` is listed twice")),
                Ok(ch) => chains.push(ch),
                Err(msg) => {
                    let msg = match nearest(c.get_ref(), Chain::ALL.iter().map(|c| c.name())) {
                        Some(n) => format!("unknown chain `{}`: did you mean `{n}`?", super::short(c.get_ref())),
                        None => msg,
                    };
                    self.err(c.span(), at.key("chains"), msg)
                }
            }
        }
        chains
    }

    /// Refuses keys that belong to other datasets.
    fn keys_apply(&mut self, at: &At<'_>, dataset: Dataset) {
        let e = at.raw;
        let present: [(&str, Option<Range<usize>>); 22] = [
            ("window", e.window.as_ref().map(|x| x.span())),
            ("numbers", e.numbers.as_ref().map(|x| x.span())),
            ("contract_address", e.contract_address.as_ref().map(|x| x.span())),
            ("signatures", e.signatures.as_ref().map(|x| x.span())),
            ("wallets", e.wallets.as_ref().map(|x| x.span())),
            ("token_address", e.token_address.as_ref().map(|x| x.span())),
            ("addresses", e.addresses.as_ref().map(|x| x.span())),
            ("chunk_blocks", e.chunk_blocks.as_ref().map(|x| x.span())),
            ("chunk_duration", e.chunk_duration.as_ref().map(|x| x.span())),
            ("align", e.align.as_ref().map(|x| x.span())),
            ("incremental", e.incremental.as_ref().map(|x| x.span())),
            ("start", e.start.as_ref().map(|x| x.span())),
            ("confirmations", e.confirmations.as_ref().map(|x| x.span())),
            ("poll_interval", e.poll_interval.as_ref().map(|x| x.span())),
            ("roll_interval", e.roll_interval.as_ref().map(|x| x.span())),
            ("decode", e.decode.as_ref().map(|x| x.span())),
            ("abi", e.abi.as_ref().map(|x| x.span())),
            ("table", e.table.as_ref().map(|x| x.span())),
            ("u256", e.u256.as_ref().map(|x| x.span())),
            ("also_raw", e.also_raw.as_ref().map(|x| x.span())),
            ("columns", e.columns.as_ref().map(|x| x.span())),
            ("exclude_columns", e.exclude_columns.as_ref().map(|x| x.span())),
        ];
        let allowed = keys_of(dataset);
        for (name, span) in present {
            if let Some(span) = span
                && !allowed.contains(&name)
            {
                self.err(
                    span,
                    at.key(name),
                    format!("does not apply to dataset `{dataset}` (it takes: {})", allowed.join(", ")),
                );
            }
        }
    }

    /// `align`: whole UTC days or hours, for a relative window of whole periods.
    fn align(&mut self, at: &At<'_>, a: &Spanned<String>, window: Option<Window>) -> Option<Align> {
        let al = match a.get_ref().as_str() {
            "day" => Some(Align::Day),
            "hour" => Some(Align::Hour),
            other => {
                self.err(a.span(), at.key("align"), format!("`{other}`: expected \"day\" or \"hour\""));
                None
            }
        };
        match (window, al) {
            (Some(Window::Relative { secs }), Some(al)) if secs % al.secs() != 0 => {
                self.err(
                    At::span(&at.raw.window),
                    at.key("window"),
                    format!(
                        "with align = \"{}\" the window must be whole {}s, got {secs} s",
                        a.get_ref(),
                        a.get_ref()
                    ),
                );
                None
            }
            (Some(Window::Relative { .. }), al) => al,
            (_, _) => {
                self.err(
                    a.span(),
                    at.key("align"),
                    "applies to a relative window (`1d`, `24h`): it snaps the window to whole UTC periods",
                );
                None
            }
        }
    }

    /// `incremental = true` with its `start` and `confirmations`, which
    /// apply to nothing else.
    fn incremental(&mut self, at: &At<'_>, dataset: Dataset) -> Option<Incremental> {
        let e = at.raw;
        if !e.incremental.as_ref().is_some_and(|x| *x.get_ref()) {
            for (name, span) in [
                ("start", e.start.as_ref().map(|x| x.span())),
                ("confirmations", e.confirmations.as_ref().map(|x| x.span())),
            ] {
                if let Some(span) = span {
                    self.err(span, at.key(name), "applies only with incremental = true");
                }
            }
            return None;
        }
        if let Some(a) = &e.align {
            self.err(
                a.span(),
                at.key("align"),
                "an incremental export follows the chain; it takes no align",
            );
        }
        if let Some(w) = &e.window {
            self.err(w.span(), at.key("window"), "an incremental export takes `start`, not a window");
        }
        if let Some(n) = &e.numbers {
            self.err(
                n.span(),
                at.key("numbers"),
                "an incremental export takes `start`, not block numbers",
            );
        }
        let Some(st) = &e.start else {
            let example = if dataset == Dataset::Portfolio {
                "the first day, e.g. start = \"2025-01-01\""
            } else {
                "the first block, e.g. start = 18000000"
            };
            self.err(
                At::span(&e.incremental),
                at.key("start"),
                format!("an incremental export needs `start`: {example}"),
            );
            return None;
        };
        let start = self.start(st, &at.key("start"), dataset);
        let confirmations = match &e.confirmations {
            Some(c) => self.confirmations(c, &at.key("confirmations")),
            None => Default::default(),
        };
        Some(Incremental { start, confirmations })
    }

    /// `start` of an incremental export: a block number, or a date for portfolios.
    fn start(&mut self, v: &Spanned<toml::Value>, key: &str, dataset: Dataset) -> u64 {
        let text = match v.get_ref() {
            toml::Value::String(s) => s.trim().to_string(),
            toml::Value::Datetime(d) => d.to_string(),
            toml::Value::Integer(n) => n.to_string(),
            other => other.to_string(),
        };
        if dataset == Dataset::Portfolio {
            match crate::vocab::window::parse_instant(&text) {
                Ok(t) => return (t.div_euclid(86_400) * 86_400).max(0) as u64,
                Err(m) => self.err(v.span(), key, format!("{m}: portfolios start at a date such as 2025-01-01")),
            }
        } else {
            match parse_block(&text) {
                Ok(n) => return n,
                Err(m) => self.err(v.span(), key, format!("{m}: incremental {dataset} start at a block")),
            }
        }
        0
    }

    /// `confirmations`: one number for every chain, or a table by chain.
    fn confirmations(&mut self, v: &Spanned<toml::Value>, key: &str) -> BTreeMap<Chain, u64> {
        let mut out = BTreeMap::new();
        let mut one = |this: &mut Self, value: &toml::Value, chain: Option<Chain>| match value {
            toml::Value::Integer(n) if (0..=1_000_000).contains(n) => match chain {
                Some(c) => {
                    out.insert(c, *n as u64);
                }
                None => {
                    for c in Chain::ALL {
                        out.insert(c, *n as u64);
                    }
                }
            },
            other => this.err(v.span(), key, format!("expected a number of blocks from 0 to 1000000, got {other}")),
        };
        match v.get_ref() {
            toml::Value::Table(t) => {
                for (name, value) in t {
                    match name.parse::<Chain>() {
                        Ok(c) => one(self, value, Some(c)),
                        Err(m) => self.err(v.span(), key, m),
                    }
                }
            }
            value => one(self, value, None),
        }
        out
    }
}
