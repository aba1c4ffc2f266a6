//! Pipeline specs: parse TOML into the raw model ([`raw`]), then validate
//! without I/O into a typed, ready-to-plan [`Spec`]. Validation collects
//! every error, each with `file:line:col`, the key path and what was
//! expected, so a user fixes a spec in one pass.

mod identity;
mod raw;
mod text;

pub use identity::{ExportIdentity, JobIdentity};

use crate::chain::Chain;
use crate::evm::{is_abi_signature, is_address, is_hash32, signature_topic};
use crate::sim::SimOptions;
use crate::window::{Align, Window, parse_duration};
use raw::*;
use serde::Serialize;
use std::fmt;
use std::ops::Range;
use std::time::Duration;
use toml::Spanned;

/// The commented example spec written by `chainetl init`.
pub const EXAMPLE: &str = include_str!("example.toml");

/// One problem in a spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecError {
    /// The spec file.
    pub file: String,
    /// 1-based line (0 when unknown).
    pub line: usize,
    /// 1-based column.
    pub col: usize,
    /// Key path such as `export[1].window`.
    pub key: String,
    /// What is wrong and what was expected.
    pub message: String,
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(f, "{}:{}:{}: ", self.file, self.line, self.col)?;
        } else {
            write!(f, "{}: ", self.file)?;
        }
        if !self.key.is_empty() {
            write!(f, "{}: ", self.key)?;
        }
        f.write_str(&self.message)
    }
}

/// Every problem found in a spec.
#[derive(Debug, Clone, thiserror::Error)]
pub struct SpecErrors(pub Vec<SpecError>);

impl fmt::Display for SpecErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0.len();
        writeln!(f, "{n} error{} in the spec:", if n == 1 { "" } else { "s" })?;
        for e in &self.0 {
            writeln!(f, "  {e}")?;
        }
        Ok(())
    }
}

/// The four datasets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Dataset {
    /// Block headers.
    Blocks,
    /// Event logs.
    Events,
    /// Wallet daily holdings.
    Portfolio,
    /// Token metadata.
    Tokens,
}

impl Dataset {
    /// All datasets.
    pub const ALL: [Dataset; 4] = [Dataset::Blocks, Dataset::Events, Dataset::Portfolio, Dataset::Tokens];

    /// Its name in specs, paths and the CLI.
    pub fn name(self) -> &'static str {
        match self {
            Dataset::Blocks => "blocks",
            Dataset::Events => "events",
            Dataset::Portfolio => "portfolio",
            Dataset::Tokens => "tokens",
        }
    }

    /// Parses a dataset name.
    pub fn parse(s: &str) -> Option<Dataset> {
        Dataset::ALL.into_iter().find(|d| d.name() == s)
    }
}

impl fmt::Display for Dataset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Where the data comes from.
#[derive(Debug, Clone)]
pub enum BaseUrl {
    /// The built-in simulator, in-process.
    Sim(SimOptions),
    /// A real service.
    Http(String),
}

/// `[source]`, validated.
#[derive(Debug, Clone)]
pub struct Source {
    /// Service location.
    pub base_url: BaseUrl,
    /// Variable holding the API key.
    pub api_key_env: Option<String>,
    /// Requests in flight.
    pub max_concurrency: usize,
    /// Rate bound.
    pub requests_per_second: Option<f64>,
    /// `limit` per request before per-endpoint caps.
    pub page_size: u32,
    /// Per-request timeout.
    pub timeout: Duration,
    /// Retries per request.
    pub max_retries: usize,
    /// Largest response body, in bytes.
    pub max_response_bytes: u64,
    /// Longest `Retry-After` honoured.
    pub max_retry_after: Duration,
}

/// Parquet compression.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Compression {
    /// zstd at a level.
    Zstd(i32),
    /// Snappy.
    Snappy,
    /// LZ4 (raw).
    Lz4,
    /// Gzip.
    Gzip,
    /// Uncompressed.
    None,
}

/// How hashes and addresses are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum HashEncoding {
    /// Lower-case 0x-hex strings.
    Hex,
    /// Raw bytes.
    Binary,
}

/// `[output]`, validated.
#[derive(Debug, Clone, Serialize)]
pub struct Output {
    /// Where files go.
    pub uri: String,
    /// Hive keys, a subset of `chain`, `date` in that order.
    pub partition_by: Vec<String>,
    /// Codec.
    pub compression: Compression,
    /// Rows per row group.
    pub row_group_rows: usize,
    /// Rows per file before rolling.
    pub file_rows: usize,
    /// Bytes per file before rolling.
    pub file_bytes: usize,
    /// Commit cadence in time.
    #[serde(skip)]
    pub commit_interval: Duration,
    /// Commit cadence in pages.
    #[serde(skip)]
    pub commit_pages: usize,
    /// Hash/address encoding.
    pub hash_encoding: HashEncoding,
    /// Bytes of encoded-but-unflushed row groups the job may hold.
    #[serde(skip)]
    pub memory_budget: usize,
    /// S3 endpoint override.
    #[serde(skip)]
    pub endpoint: Option<String>,
    /// S3 region override.
    #[serde(skip)]
    pub region: Option<String>,
    /// Allow http S3 endpoints.
    #[serde(skip)]
    pub allow_http: Option<bool>,
}

/// What one export selects.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Selection {
    /// Blocks in a window.
    BlockWindow {
        /// The window as written.
        #[serde(skip)]
        window: Window,
        /// Blocks per unit (None: chosen from the window, see `plan`).
        chunk_blocks: Option<u64>,
        /// Seconds per unit (None: chosen from the window, see `plan`).
        chunk_secs: Option<i64>,
    },
    /// Explicit blocks (sorted, unique).
    BlockNumbers(Vec<u64>),
    /// Events in a window.
    Events {
        /// The window as written.
        #[serde(skip)]
        window: Window,
        /// Contract filter, lower-case.
        contract_address: Option<String>,
        /// topic0 hashes, lower-case 0x-hex.
        topics: Vec<String>,
        /// Blocks per unit (None: chosen from the window, see `plan`).
        chunk_blocks: Option<u64>,
        /// Seconds per unit (None: chosen from the window, see `plan`).
        chunk_secs: Option<i64>,
    },
    /// Wallet portfolios.
    Portfolio {
        /// Wallets, lower-case.
        wallets: Vec<String>,
        /// Token filter, lower-case.
        token_address: Option<String>,
        /// The window as written.
        #[serde(skip)]
        window: Window,
    },
    /// Token lookups.
    Tokens {
        /// Token addresses, lower-case.
        addresses: Vec<String>,
    },
}

/// An incremental export: each run continues from the committed high-water
/// mark up to the head less the chain's confirmations.
#[derive(Debug, Clone, Serialize)]
pub struct Incremental {
    /// First block (blocks, events) or unix second of the first day (portfolio).
    pub start: u64,
    /// Confirmations by chain, overriding [`Chain::default_confirmations`].
    #[serde(skip)]
    pub confirmations: std::collections::BTreeMap<Chain, u64>,
}

impl Incremental {
    /// Blocks of `chain` within this many of the head are not exported yet.
    pub fn confirmations(&self, chain: Chain) -> u64 {
        self.confirmations
            .get(&chain)
            .copied()
            .unwrap_or_else(|| chain.default_confirmations())
    }
}

/// One `[[export]]`, validated.
#[derive(Debug, Clone, Serialize)]
pub struct Export {
    /// Position in the spec (0-based).
    pub index: usize,
    /// Dataset.
    pub dataset: Dataset,
    /// Chains.
    pub chains: Vec<Chain>,
    /// What to fetch.
    pub selection: Selection,
    /// The window exactly as written, for display and state.
    pub window_text: Option<String>,
    /// Scheduled runs: the relative window snaps to whole UTC periods.
    pub align: Option<Align>,
    /// Incremental export settings.
    pub incremental: Option<Incremental>,
    /// Follow mode: time between polls of the head.
    #[serde(skip)]
    pub poll_interval: Duration,
    /// Follow mode: time between rolls (segments whose files then land).
    #[serde(skip)]
    pub roll_interval: Duration,
}

impl Export {
    /// Whether its range is decided per run (aligned or incremental)
    /// rather than frozen once for the job.
    pub fn per_run(&self) -> bool {
        self.align.is_some() || self.incremental.is_some()
    }
}

/// A validated spec.
#[derive(Debug, Clone)]
pub struct Spec {
    /// Path it was read from.
    pub file: String,
    /// Job name.
    pub name: String,
    /// Source settings.
    pub source: Source,
    /// Output settings.
    pub output: Output,
    /// Exports.
    pub exports: Vec<Export>,
}

impl Spec {
    /// Reads and validates a spec file.
    pub fn load(path: &str) -> Result<Spec, SpecErrors> {
        Spec::load_with(path, &[])
    }

    /// Reads a spec file, interpolates `${VAR}`s from the environment,
    /// applies `--set key.path=value` overrides, and validates the result.
    pub fn load_with(path: &str, sets: &[String]) -> Result<Spec, SpecErrors> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            SpecErrors(vec![SpecError {
                file: path.into(),
                line: 0,
                col: 0,
                key: String::new(),
                message: format!("cannot read the spec: {e}"),
            }])
        })?;
        let text = text::interpolate(path, &text, &|k| std::env::var(k).ok()).map_err(SpecErrors)?;
        let text = text::apply_overrides(path, &text, sets).map_err(SpecErrors)?;
        Spec::parse(path, &text)
    }

    /// Validates spec text; `file` names it in errors.
    pub fn parse(file: &str, text: &str) -> Result<Spec, SpecErrors> {
        let mut v = Validator {
            file,
            text,
            errors: Vec::new(),
        };
        let raw: RawSpec = match toml::from_str(text) {
            Ok(r) => r,
            Err(e) => {
                let span = e.span().unwrap_or(0..0);
                let (line, col) = line_col(text, span.start);
                let message = e.message().trim().to_string();
                return Err(SpecErrors(vec![SpecError {
                    file: file.into(),
                    line,
                    col,
                    key: String::new(),
                    message,
                }]));
            }
        };
        let spec = v.spec(raw);
        if v.errors.is_empty() {
            spec.ok_or_else(|| SpecErrors(Vec::new()))
        } else {
            v.errors.sort_by_key(|e| (e.line, e.col));
            Err(SpecErrors(v.errors))
        }
    }

    /// A hash of everything that decides which rows land where; resuming a
    /// job whose hash changed is refused.
    pub fn content_hash(&self) -> String {
        let value = serde_json::json!({
            "name": self.name,
            "output": self.output,
            "exports": self.exports,
        });
        let digest = crate::evm::keccak(value.to_string().as_bytes());
        hex::encode(&digest[..16])
    }
}

fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    (line, col)
}

struct Validator<'a> {
    file: &'a str,
    text: &'a str,
    errors: Vec<SpecError>,
}

impl Validator<'_> {
    fn err(&mut self, span: Range<usize>, key: impl Into<String>, message: impl Into<String>) {
        let (line, col) = line_col(self.text, span.start);
        self.errors.push(SpecError {
            file: self.file.into(),
            line,
            col,
            key: key.into(),
            message: message.into(),
        });
    }

    fn int_in(&mut self, v: &Option<Spanned<i64>>, key: &str, lo: i64, hi: i64, default: i64) -> i64 {
        match v {
            None => default,
            Some(s) if (lo..=hi).contains(s.get_ref()) => *s.get_ref(),
            Some(s) => {
                self.err(s.span(), key, format!("must be an integer from {lo} to {hi}, got {}", s.get_ref()));
                default
            }
        }
    }

    fn address(&mut self, v: &Spanned<String>, key: &str) -> String {
        if !is_address(v.get_ref()) {
            self.err(
                v.span(),
                key,
                format!("`{}` is not an address: expected 0x followed by 40 hex digits", v.get_ref()),
            );
        }
        v.get_ref().to_ascii_lowercase()
    }

    fn spec(&mut self, raw: RawSpec) -> Option<Spec> {
        let name = raw.name.get_ref().clone();
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)) || name.starts_with('.') {
            self.err(
                raw.name.span(),
                "name",
                format!("`{name}` is not a job name: use letters, digits, `-`, `_` and `.`"),
            );
        }
        let source = self.source(raw.source.get_ref());
        let output = self.output(raw.output.get_ref());
        if raw.export.is_empty() {
            self.err(0..0, "export", "the spec has no [[export]] table: add at least one");
        }
        let poll = self.duration(&raw.poll_interval, "poll_interval", 15);
        let roll = self.duration(&raw.roll_interval, "roll_interval", 300);
        let mut exports = Vec::new();
        for (i, e) in raw.export.iter().enumerate() {
            if let Some(x) = self.export(i, e.get_ref(), poll, roll) {
                exports.push(x);
            }
        }
        Some(Spec {
            file: self.file.into(),
            name,
            source,
            output,
            exports,
        })
    }

    fn source(&mut self, s: &RawSource) -> Source {
        let url = s.base_url.get_ref().trim().to_string();
        let base_url = if url == "sim" {
            BaseUrl::Sim(s.sim.as_ref().map(|x| x.get_ref().clone()).unwrap_or_default())
        } else {
            if !(url.starts_with("http://") || url.starts_with("https://")) || url.len() < 10 {
                self.err(
                    s.base_url.span(),
                    "source.base_url",
                    format!("`{url}` is not a service URL: expected http(s)://host or \"sim\""),
                );
            }
            if let Some(x) = &s.sim {
                self.err(x.span(), "source.sim", "applies only when base_url = \"sim\"");
            }
            BaseUrl::Http(url)
        };
        if let Some(env) = &s.api_key_env {
            let n = env.get_ref();
            if n.is_empty() || !n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                self.err(
                    env.span(),
                    "source.api_key_env",
                    format!("`{n}` is not an environment variable name (it names the variable, it is not the key)"),
                );
            }
        }
        let rps = match &s.requests_per_second {
            Some(r) if !(r.get_ref().is_finite() && *r.get_ref() > 0.0 && *r.get_ref() <= 100_000.0) => {
                self.err(
                    r.span(),
                    "source.requests_per_second",
                    format!("must be a number above 0 and at most 100000, got {}", r.get_ref()),
                );
                None
            }
            Some(r) => Some(*r.get_ref()),
            None => None,
        };
        Source {
            base_url,
            api_key_env: s.api_key_env.as_ref().map(|e| e.get_ref().clone()),
            max_concurrency: self.int_in(&s.max_concurrency, "source.max_concurrency", 1, 1024, 8) as usize,
            requests_per_second: rps,
            page_size: self.int_in(&s.page_size, "source.page_size", 1, 1000, 1000) as u32,
            timeout: Duration::from_secs(self.int_in(&s.timeout_secs, "source.timeout_secs", 1, 3600, 30) as u64),
            max_retries: self.int_in(&s.max_retries, "source.max_retries", 0, 100, 10) as usize,
            max_response_bytes: (self.int_in(&s.max_response_mb, "source.max_response_mb", 1, 4096, 64) as u64) << 20,
            max_retry_after: Duration::from_secs(self.int_in(&s.max_retry_after_secs, "source.max_retry_after_secs", 0, 3600, 60) as u64),
        }
    }

    fn output(&mut self, o: &RawOutput) -> Output {
        let uri = o.uri.get_ref().trim().to_string();
        if uri.is_empty() {
            self.err(
                o.uri.span(),
                "output.uri",
                "must not be empty: a local path, file:///abs/path or s3://bucket/prefix",
            );
        } else if uri.contains("://") && !(uri.starts_with("file:///") || uri.starts_with("s3://")) {
            self.err(
                o.uri.span(),
                "output.uri",
                format!("`{uri}`: expected a local path, file:///abs/path or s3://bucket/prefix"),
            );
        }
        if !uri.starts_with("s3://") {
            for (key, span) in [
                ("endpoint", o.endpoint.as_ref().map(|x| x.span())),
                ("region", o.region.as_ref().map(|x| x.span())),
                ("allow_http", o.allow_http.as_ref().map(|x| x.span())),
            ] {
                if let Some(span) = span {
                    self.err(span, format!("output.{key}"), "applies only to s3:// outputs");
                }
            }
        }
        let mut partition_by = vec!["chain".to_string(), "date".to_string()];
        if let Some(p) = &o.partition_by {
            partition_by.clear();
            for k in p.get_ref() {
                match k.get_ref().as_str() {
                    "chain" | "date" if !partition_by.contains(k.get_ref()) => partition_by.push(k.get_ref().clone()),
                    other => self.err(
                        k.span(),
                        "output.partition_by",
                        format!("`{other}`: expected distinct keys from `chain`, `date`"),
                    ),
                }
            }
            partition_by.sort();
        }
        let level = self.int_in(&o.compression_level, "output.compression_level", 1, 22, 1) as i32;
        let compression = match o.compression.as_ref().map(|c| c.get_ref().as_str()) {
            None | Some("zstd") => Compression::Zstd(level),
            Some("snappy") => Compression::Snappy,
            Some("lz4") => Compression::Lz4,
            Some("gzip") => Compression::Gzip,
            Some("none") | Some("uncompressed") => Compression::None,
            Some(other) => {
                if let Some(c) = &o.compression {
                    self.err(
                        c.span(),
                        "output.compression",
                        format!("`{other}`: expected zstd, snappy, lz4, gzip or none"),
                    );
                }
                Compression::Zstd(level)
            }
        };
        let hash_encoding = match o.hash_encoding.as_ref().map(|c| c.get_ref().as_str()) {
            None | Some("hex") => HashEncoding::Hex,
            Some("binary") => HashEncoding::Binary,
            Some(other) => {
                if let Some(c) = &o.hash_encoding {
                    self.err(c.span(), "output.hash_encoding", format!("`{other}`: expected hex or binary"));
                }
                HashEncoding::Hex
            }
        };
        Output {
            uri,
            partition_by,
            compression,
            row_group_rows: self.int_in(&o.row_group_rows, "output.row_group_rows", 1_000, 10_000_000, 131_072) as usize,
            file_rows: self.int_in(&o.file_rows, "output.file_rows", 1_000, 100_000_000, 1_000_000) as usize,
            file_bytes: self.int_in(&o.file_mb, "output.file_mb", 1, 1_048_576, 512) as usize * 1024 * 1024,
            commit_interval: Duration::from_secs(self.int_in(&o.commit_interval_secs, "output.commit_interval_secs", 1, 3600, 30) as u64),
            commit_pages: self.int_in(&o.commit_pages, "output.commit_pages", 1, 100_000, 25) as usize,
            hash_encoding,
            memory_budget: self.int_in(&o.memory_budget_mb, "output.memory_budget_mb", 16, 65_536, 64) as usize * 1024 * 1024,
            endpoint: o.endpoint.as_ref().map(|e| e.get_ref().clone()),
            region: o.region.as_ref().map(|e| e.get_ref().clone()),
            allow_http: o.allow_http.as_ref().map(|e| *e.get_ref()),
        }
    }

    fn list<T>(&mut self, v: &Option<Spanned<Vec<Spanned<T>>>>, key: &str, max: usize) -> Option<Vec<Spanned<T>>>
    where
        T: Clone,
    {
        let l = v.as_ref()?;
        if l.get_ref().is_empty() {
            self.err(l.span(), key, "must not be empty");
        } else if l.get_ref().len() > max {
            self.err(l.span(), key, format!("takes at most {max} items, got {}", l.get_ref().len()));
        }
        Some(l.get_ref().clone())
    }

    /// A duration given as `30s`/`5m`/`1h` or a number of seconds.
    fn duration(&mut self, v: &Option<Spanned<toml::Value>>, key: &str, default: i64) -> i64 {
        let Some(v) = v else {
            return default;
        };
        let r = match v.get_ref() {
            toml::Value::Integer(n) if (1..=10_000_000).contains(n) => Ok(*n),
            toml::Value::String(s) => parse_duration(s),
            other => Err(format!(
                "expected a duration such as \"30s\" or \"5m\", or a number of seconds, got {other}"
            )),
        };
        r.unwrap_or_else(|m| {
            self.err(v.span(), key, m);
            default
        })
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
            match crate::window::parse_instant(&text) {
                Ok(t) => return (t.div_euclid(86_400) * 86_400).max(0) as u64,
                Err(m) => self.err(v.span(), key, format!("{m}: portfolios start at a date such as 2025-01-01")),
            }
        } else {
            match text.parse::<u64>() {
                Ok(n) => return n,
                Err(_) => self.err(
                    v.span(),
                    key,
                    format!("`{text}` is not a block number: incremental {dataset} start at a block"),
                ),
            }
        }
        0
    }

    /// `confirmations`: one number for every chain, or a table by chain.
    fn confirmations(&mut self, v: &Spanned<toml::Value>, key: &str) -> std::collections::BTreeMap<Chain, u64> {
        let mut out = std::collections::BTreeMap::new();
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

    fn export(&mut self, i: usize, e: &RawExport, poll: i64, roll: i64) -> Option<Export> {
        let k = |name: &str| format!("export[{i}].{name}");
        let dataset = Dataset::parse(e.dataset.get_ref());
        if dataset.is_none() {
            self.err(
                e.dataset.span(),
                k("dataset"),
                format!(
                    "unknown dataset `{}`: expected blocks, events, portfolio or tokens",
                    e.dataset.get_ref()
                ),
            );
        }
        let mut chains = Vec::new();
        if e.chains.get_ref().is_empty() {
            self.err(
                e.chains.span(),
                k("chains"),
                format!("must name at least one chain ({})", Chain::names()),
            );
        }
        for c in e.chains.get_ref() {
            match c.get_ref().parse::<Chain>() {
                Ok(ch) if chains.contains(&ch) => self.err(c.span(), k("chains"), format!("`{ch}` is listed twice")),
                Ok(ch) => chains.push(ch),
                Err(msg) => self.err(c.span(), k("chains"), msg),
            }
        }
        let window = e.window.as_ref().and_then(|w| match Window::parse(w.get_ref()) {
            Ok(x) => Some(x),
            Err(msg) => {
                self.err(w.span(), k("window"), msg);
                None
            }
        });
        let dataset = dataset?;
        // Keys that belong to other datasets.
        let allowed: &[&str] = match dataset {
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
            ],
            Dataset::Events => &[
                "window",
                "contract_address",
                "signatures",
                "chunk_blocks",
                "chunk_duration",
                "align",
                "incremental",
                "start",
                "confirmations",
                "poll_interval",
                "roll_interval",
            ],
            Dataset::Portfolio => &["window", "wallets", "token_address", "align", "incremental", "start"],
            Dataset::Tokens => &["addresses"],
        };
        let present: [(&str, Option<Range<usize>>); 15] = [
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
        ];
        for (name, span) in present {
            if let Some(span) = span
                && !allowed.contains(&name)
            {
                self.err(
                    span,
                    k(name),
                    format!("does not apply to dataset `{dataset}` (it takes: {})", allowed.join(", ")),
                );
            }
        }
        let chunk_blocks = e
            .chunk_blocks
            .as_ref()
            .map(|_| self.int_in(&e.chunk_blocks, &k("chunk_blocks"), 1, 100_000_000, 10_000) as u64);
        let chunk_secs = match &e.chunk_duration {
            None => None,
            Some(d) => match Window::parse(d.get_ref()) {
                Ok(Window::Relative { secs }) => Some(secs),
                _ => {
                    self.err(
                        d.span(),
                        k("chunk_duration"),
                        format!("`{}`: expected a duration such as `1h` or `1d`", d.get_ref()),
                    );
                    None
                }
            },
        };
        let window_text = e.window.as_ref().map(|w| w.get_ref().trim().to_string());
        let incremental = e.incremental.as_ref().is_some_and(|x| *x.get_ref());
        let span_of = |x: &Option<Spanned<String>>| x.as_ref().map(|x| x.span()).unwrap_or(0..0);
        let align = match e.align.as_ref() {
            None => None,
            Some(a) => {
                let al = match a.get_ref().as_str() {
                    "day" => Some(Align::Day),
                    "hour" => Some(Align::Hour),
                    other => {
                        self.err(a.span(), k("align"), format!("`{other}`: expected \"day\" or \"hour\""));
                        None
                    }
                };
                match (window, al) {
                    (Some(Window::Relative { secs }), Some(al)) if secs % al.secs() != 0 => {
                        self.err(
                            span_of(&e.window),
                            k("window"),
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
                            k("align"),
                            "applies to a relative window (`1d`, `24h`): it snaps the window to whole UTC periods",
                        );
                        None
                    }
                }
            }
        };
        let mut incr = None;
        if incremental {
            if let Some(a) = &e.align {
                self.err(a.span(), k("align"), "an incremental export follows the chain; it takes no align");
            }
            if let Some(w) = &e.window {
                self.err(w.span(), k("window"), "an incremental export takes `start`, not a window");
            }
            if let Some(n) = &e.numbers {
                self.err(n.span(), k("numbers"), "an incremental export takes `start`, not block numbers");
            }
            match &e.start {
                Some(st) => {
                    let start = self.start(st, &k("start"), dataset);
                    let confirmations = match &e.confirmations {
                        Some(c) => self.confirmations(c, &k("confirmations")),
                        None => Default::default(),
                    };
                    incr = Some(Incremental { start, confirmations });
                }
                None => self.err(
                    e.incremental.as_ref().map(|x| x.span()).unwrap_or(0..0),
                    k("start"),
                    format!(
                        "an incremental export needs `start`: {}",
                        if dataset == Dataset::Portfolio {
                            "the first day, e.g. start = \"2025-01-01\""
                        } else {
                            "the first block, e.g. start = 18000000"
                        }
                    ),
                ),
            }
        } else {
            for (name, span) in [
                ("start", e.start.as_ref().map(|x| x.span())),
                ("confirmations", e.confirmations.as_ref().map(|x| x.span())),
            ] {
                if let Some(span) = span {
                    self.err(span, k(name), "applies only with incremental = true");
                }
            }
        }
        let poll_interval = Duration::from_secs(self.duration(&e.poll_interval, &k("poll_interval"), poll) as u64);
        let roll_interval = Duration::from_secs(self.duration(&e.roll_interval, &k("roll_interval"), roll) as u64);
        // Incremental exports have no window of their own: each run's range
        // comes from the mark; the placeholder keeps the selection's shape.
        let window = match &incr {
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
        let need_window = |v: &mut Self| {
            if e.window.is_none() && !incremental {
                v.err(
                    e.dataset.span(),
                    k("window"),
                    format!("dataset `{dataset}` needs a window (e.g. `7d`, `2024-01-01..2024-02-01` or `18000000..18100000`)"),
                );
            }
        };
        let selection = match dataset {
            Dataset::Blocks => match (&e.numbers, window) {
                (Some(nums), w) => {
                    if w.is_some() {
                        self.err(
                            e.window.as_ref().map(|x| x.span()).unwrap_or(0..0),
                            k("window"),
                            "give either `numbers` or `window`, not both",
                        );
                    }
                    let list = self.list(&Some(nums.clone()), &k("numbers"), 10_000_000).unwrap_or_default();
                    let mut out = Vec::with_capacity(list.len());
                    for n in list {
                        if *n.get_ref() < 0 {
                            self.err(n.span(), k("numbers"), format!("{} is not a block number", n.get_ref()));
                        } else {
                            out.push(*n.get_ref() as u64);
                        }
                    }
                    out.sort_unstable();
                    out.dedup();
                    Selection::BlockNumbers(out)
                }
                (None, Some(window)) => Selection::BlockWindow {
                    window,
                    chunk_blocks,
                    chunk_secs,
                },
                (None, None) => {
                    if e.window.is_none() && !incremental {
                        self.err(e.dataset.span(), k("window"), "dataset `blocks` needs a `window` or `numbers`");
                    }
                    return None;
                }
            },
            Dataset::Events => {
                need_window(self);
                let contract_address = e.contract_address.as_ref().map(|c| self.address(c, &k("contract_address")));
                let mut topics = Vec::new();
                for s in self.list(&e.signatures, &k("signatures"), 100).unwrap_or_default() {
                    let t = s.get_ref().trim();
                    if is_hash32(t) {
                        topics.push(t.to_ascii_lowercase());
                    } else if is_abi_signature(t) {
                        topics.push(signature_topic(t));
                    } else {
                        self.err(
                            s.span(),
                            k("signatures"),
                            format!("`{t}` is neither a 0x 32-byte topic hash nor an ABI signature like Transfer(address,address,uint256)"),
                        );
                    }
                }
                topics.dedup();
                Selection::Events {
                    window: window?,
                    contract_address,
                    topics,
                    chunk_blocks,
                    chunk_secs,
                }
            }
            Dataset::Portfolio => {
                let wallets: Vec<String> = match self.list(&e.wallets, &k("wallets"), 100_000) {
                    Some(l) => l.iter().map(|w| self.address(w, &k("wallets"))).collect(),
                    None => {
                        self.err(e.dataset.span(), k("wallets"), "dataset `portfolio` needs `wallets`");
                        Vec::new()
                    }
                };
                let token_address = e.token_address.as_ref().map(|c| self.address(c, &k("token_address")));
                let window = match window {
                    Some(Window::Blocks { .. }) => {
                        self.err(
                            e.window.as_ref().map(|x| x.span()).unwrap_or(0..0),
                            k("window"),
                            "portfolios take a relative window (`30d`) or a time interval, not a block range",
                        );
                        return None;
                    }
                    Some(w) => w,
                    None if e.window.is_some() || incremental => return None,
                    None => Window::Relative { secs: 30 * 86_400 },
                };
                Selection::Portfolio {
                    wallets: dedup(wallets),
                    token_address,
                    window,
                }
            }
            Dataset::Tokens => {
                let addresses: Vec<String> = match self.list(&e.addresses, &k("addresses"), 1_000_000) {
                    Some(l) => l.iter().map(|a| self.address(a, &k("addresses"))).collect(),
                    None => {
                        self.err(e.dataset.span(), k("addresses"), "dataset `tokens` needs `addresses`");
                        Vec::new()
                    }
                };
                Selection::Tokens {
                    addresses: dedup(addresses),
                }
            }
        };
        Some(Export {
            index: i,
            dataset,
            chains,
            selection,
            window_text,
            align,
            incremental: incr,
            poll_interval,
            roll_interval,
        })
    }
}

fn dedup(mut v: Vec<String>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    v.retain(|x| seen.insert(x.clone()));
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_every_error_with_its_line() {
        let text = r#"name = "t"
[source]
base_url = "sim"
max_concurrency = 0
[output]
uri = "out"
[[export]]
dataset = "events"
chains = ["ethereum", "solana"]
window = "7x"
contract_address = "0x123"
[[export]]
dataset = "blocks"
chains = ["base"]
"#;
        let errs = Spec::parse("t.toml", text).unwrap_err().0;
        let lines: Vec<usize> = errs.iter().map(|e| e.line).collect();
        assert_eq!(lines, vec![4, 9, 10, 11, 13], "{errs:?}");
        assert!(
            errs[0]
                .to_string()
                .starts_with("t.toml:4:19: source.max_concurrency: must be an integer from 1 to 1024")
        );
    }

    #[test]
    fn unknown_keys_are_errors() {
        let text = "name = \"t\"\n[source]\nbase_url = \"sim\"\nmax_concurency = 3\n[output]\nuri = \"o\"\n";
        let errs = Spec::parse("t.toml", text).unwrap_err().0;
        assert_eq!(errs[0].line, 4);
        assert!(errs[0].message.contains("unknown field `max_concurency`"), "{}", errs[0].message);
    }
}
