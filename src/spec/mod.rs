//! Pipeline specs: parse TOML into the raw model ([`raw`]), then validate
//! without I/O into a typed, ready-to-plan [`Spec`]. Validation collects
//! every error, each with `file:line:col`, the key path and what was
//! expected, so a user fixes a spec in one pass.
//!
//! The passes, each reporting everything it finds: TOML syntax (all
//! syntax errors, a duplicate key by name; nothing else is checked on a
//! text that is not TOML), then the shape ([`schema`]: unknown keys with a
//! "did you mean", types, missing keys; offending entries are dropped),
//! then the values of what is left (ranges, names, windows, signatures,
//! simulator settings, unit counts) and the exports against each other
//! (no two may select the same rows).
//!
//! Invariants of a [`Spec`]: every block number is at most
//! [`crate::vocab::window::MAX_BLOCK`], every export and chain plans at most
//! [`MAX_UNITS`] units, the job name fits in file names, and
//! no two exports overlap.

pub mod defaults;
mod identity;
mod raw;
mod schema;
mod sim_options;
mod text;
mod units;

pub use identity::{ExportIdentity, JobIdentity};
pub use sim_options::SimOptions;
pub(crate) use units::rows_per_block;
pub use units::{MAX_UNITS, NUMBERS_PER_REQUEST, PORTFOLIO_DAYS_PER_PAGE, TOKENS_PER_UNIT, unit_count};

pub use crate::vocab::Dataset;
use crate::vocab::chain::Chain;
use crate::vocab::evm::{EventSignature, is_address, is_hash32};
use crate::vocab::window::{Align, MAX_BLOCK, Resolved, Window, parse_duration};
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
        /// The ABI signatures among `signatures`, in canonical form, with
        /// their topic0 (for `plan`; the topics above are what selects).
        #[serde(skip)]
        signatures: Vec<EventSignature>,
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
        let (mut root, syntax) = toml::de::DeTable::parse_recoverable(text);
        if !syntax.is_empty() {
            // The recovered tree of a text that is not TOML would only add
            // confusing follow-on errors: report the syntax alone.
            let mut errors: Vec<SpecError> = syntax.iter().map(|e| syntax_error(file, text, e)).collect();
            errors.sort_by_key(|e| (e.line, e.col));
            errors.dedup();
            return Err(SpecErrors(errors));
        }
        for p in schema::check(&mut root) {
            v.err(p.span, p.key, p.message);
        }
        let raw = match <RawSpec as serde::Deserialize>::deserialize(toml::de::Deserializer::from(root)) {
            Ok(r) => r,
            Err(e) => {
                // Unreachable while `schema` matches the raw model (a unit
                // test checks it); reported with the rest all the same.
                let span = e.span().unwrap_or(0..0);
                v.err(span, "", e.message().trim().to_string());
                v.errors.sort_by_key(|e| (e.line, e.col));
                return Err(SpecErrors(v.errors));
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
        let digest = crate::vocab::evm::keccak(value.to_string().as_bytes());
        hex::encode(&digest[..16])
    }
}

/// A TOML syntax error as a spec error; a duplicate key is named.
fn syntax_error(file: &str, text: &str, e: &toml::de::Error) -> SpecError {
    let span = e.span().unwrap_or(0..0);
    let (line, col) = line_col(text, span.start);
    let mut message = e.message().trim().to_string();
    if message.starts_with("duplicate key")
        && let Some(k) = text.get(span.clone()).map(str::trim).filter(|k| !k.is_empty() && !k.contains('\n'))
    {
        message = format!("duplicate key `{k}`: each key may be set once per table");
    }
    SpecError {
        file: file.into(),
        line,
        col,
        key: String::new(),
        message,
    }
}

fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
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
        let name = raw.name.as_ref().map(|n| n.get_ref().clone()).unwrap_or_default();
        if let Some(n) = &raw.name {
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)) || name.starts_with('.') {
                let shown: String = name.chars().take(80).collect();
                self.err(
                    n.span(),
                    "name",
                    format!("`{shown}` is not a job name: use letters, digits, `-`, `_` and `.`, not starting with `.`"),
                );
            } else if name.len() > MAX_NAME_LEN {
                self.err(
                    n.span(),
                    "name",
                    format!(
                        "{} characters is too long: at most {MAX_NAME_LEN} (it starts every file name, and file names are limited to 255 bytes)",
                        name.len()
                    ),
                );
            }
        }
        let source = self.source(&raw.source.map(Spanned::into_inner).unwrap_or_default());
        let output = self.output(&raw.output.map(Spanned::into_inner).unwrap_or_default());
        if raw.export.is_empty() {
            self.err(0..0, "export", "the spec has no [[export]] table: add at least one");
        }
        let poll = self.duration(&raw.poll_interval, "poll_interval", defaults::POLL_INTERVAL_SECS as i64);
        let roll = self.duration(&raw.roll_interval, "roll_interval", defaults::ROLL_INTERVAL_SECS as i64);
        let mut exports = Vec::new();
        for (i, e) in raw.export.iter().enumerate() {
            if let Some(x) = self.export(i, e.get_ref(), poll, roll) {
                exports.push(x);
            }
        }
        self.overlaps(&raw.export, &exports);
        Some(Spec {
            file: self.file.into(),
            name,
            source,
            output,
            exports,
        })
    }

    fn source(&mut self, s: &RawSource) -> Source {
        let url = s.base_url.as_ref().map(|u| u.get_ref().trim().to_string()).unwrap_or_default();
        let base_url = if url == "sim" {
            BaseUrl::Sim(s.sim.as_ref().map(|x| self.sim(x.get_ref())).unwrap_or_default())
        } else {
            if let Some(b) = &s.base_url
                && (!(url.starts_with("http://") || url.starts_with("https://")) || url.len() < 10)
            {
                self.err(
                    b.span(),
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
            max_concurrency: self.int_in(
                &s.max_concurrency,
                "source.max_concurrency",
                1,
                1024,
                defaults::MAX_CONCURRENCY as i64,
            ) as usize,
            requests_per_second: rps,
            page_size: self.int_in(&s.page_size, "source.page_size", 1, 1000, i64::from(defaults::PAGE_SIZE)) as u32,
            timeout: Duration::from_secs(
                self.int_in(&s.timeout_secs, "source.timeout_secs", 1, 3600, defaults::TIMEOUT_SECS as i64) as u64,
            ),
            max_retries: self.int_in(&s.max_retries, "source.max_retries", 0, 100, defaults::MAX_RETRIES as i64) as usize,
            max_response_bytes: (self.int_in(
                &s.max_response_mb,
                "source.max_response_mb",
                1,
                4096,
                defaults::MAX_RESPONSE_MB as i64,
            ) as u64)
                << 20,
            max_retry_after: Duration::from_secs(self.int_in(
                &s.max_retry_after_secs,
                "source.max_retry_after_secs",
                0,
                3600,
                defaults::MAX_RETRY_AFTER_SECS as i64,
            ) as u64),
        }
    }

    /// `[source.sim]`: checked here, with the simulator's own bounds, so a
    /// bad setting fails `validate` (exit 2) rather than every `run` (exit 1).
    fn sim(&mut self, r: &RawSim) -> SimOptions {
        let mut o = SimOptions::default();
        let key = |k: &str| format!("source.sim.{k}");
        macro_rules! copy {
            ($($f:ident),*) => { $( if let Some(v) = &r.$f { o.$f = v.get_ref().clone(); } )* };
        }
        copy!(
            seed,
            events_per_block,
            latency_ms,
            freeze_head,
            inclusive_end,
            topics_as_numbers,
            scan_budget,
            reorg_depth
        );
        for (name, v, field) in [
            ("error_rate", &r.error_rate, &mut o.error_rate),
            ("reset_rate", &r.reset_rate, &mut o.reset_rate),
            ("truncate_rate", &r.truncate_rate, &mut o.truncate_rate),
        ] {
            if let Some(v) = v {
                let x = *v.get_ref();
                if (0.0..=1.0).contains(&x) {
                    *field = x;
                } else {
                    self.err(v.span(), key(name), format!("must be a share from 0 to 1, got {x}"));
                }
            }
        }
        if let Some(v) = &r.quota_rps {
            let x = *v.get_ref();
            if x.is_finite() && x >= 0.0 {
                o.quota_rps = x;
            } else {
                self.err(
                    v.span(),
                    key("quota_rps"),
                    format!("must be a number of requests a second, 0 (no quota) or more, got {x}"),
                );
            }
        }
        if let Some(v) = &r.frozen_at {
            match crate::vocab::window::parse_instant(v.get_ref()) {
                Ok(_) => o.frozen_at = Some(v.get_ref().clone()),
                Err(m) => self.err(v.span(), key("frozen_at"), m),
            }
        }
        if let Some(v) = &r.api_key {
            let k = v.get_ref();
            if k.is_empty() || k.chars().any(char::is_control) {
                // The value is a key: never echoed.
                self.err(v.span(), key("api_key"), "must be non-empty, without control characters");
            } else {
                o.api_key = Some(k.clone());
            }
        }
        o
    }

    fn output(&mut self, o: &RawOutput) -> Output {
        let uri = o.uri.as_ref().map(|u| u.get_ref().trim().to_string()).unwrap_or_default();
        let uri_span = o.uri.as_ref().map(|u| u.span());
        if uri_span.is_none() {
            // Missing: reported by the schema pass.
        } else if uri.is_empty() {
            self.err(
                uri_span.clone().unwrap_or(0..0),
                "output.uri",
                "must not be empty: a local path, file:///abs/path or s3://bucket/prefix",
            );
        } else if uri.contains("://") && !(uri.starts_with("file:///") || uri.starts_with("s3://")) {
            self.err(
                uri_span.clone().unwrap_or(0..0),
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
        let level = self.int_in(
            &o.compression_level,
            "output.compression_level",
            1,
            22,
            i64::from(defaults::COMPRESSION_LEVEL),
        ) as i32;
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
            row_group_rows: self.int_in(
                &o.row_group_rows,
                "output.row_group_rows",
                1_000,
                10_000_000,
                defaults::ROW_GROUP_ROWS as i64,
            ) as usize,
            file_rows: self.int_in(&o.file_rows, "output.file_rows", 1_000, 100_000_000, defaults::FILE_ROWS as i64) as usize,
            file_bytes: self.int_in(&o.file_mb, "output.file_mb", 1, 1_048_576, defaults::FILE_MB as i64) as usize * 1024 * 1024,
            commit_interval: Duration::from_secs(self.int_in(
                &o.commit_interval_secs,
                "output.commit_interval_secs",
                1,
                3600,
                defaults::COMMIT_INTERVAL_SECS as i64,
            ) as u64),
            commit_pages: self.int_in(&o.commit_pages, "output.commit_pages", 1, 100_000, defaults::COMMIT_PAGES as i64) as usize,
            hash_encoding,
            memory_budget: self.int_in(
                &o.memory_budget_mb,
                "output.memory_budget_mb",
                16,
                65_536,
                defaults::MEMORY_BUDGET_MB as i64,
            ) as usize
                * 1024
                * 1024,
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
            match crate::vocab::window::parse_instant(&text) {
                Ok(t) => return (t.div_euclid(86_400) * 86_400).max(0) as u64,
                Err(m) => self.err(v.span(), key, format!("{m}: portfolios start at a date such as 2025-01-01")),
            }
        } else {
            match text.parse::<u64>() {
                Ok(n) if n <= MAX_BLOCK => return n,
                Ok(_) => self.err(
                    v.span(),
                    key,
                    format!("`{text}` is beyond {MAX_BLOCK}, the highest block chainetl accepts"),
                ),
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
        // Missing `dataset` or `chains` are reported by the schema pass.
        let dataset_span = e.dataset.as_ref().map(|d| d.span()).unwrap_or(0..0);
        let dataset = e.dataset.as_ref().and_then(|d| {
            let parsed = Dataset::parse(d.get_ref());
            if parsed.is_none() {
                self.err(
                    d.span(),
                    k("dataset"),
                    format!("unknown dataset `{}`: expected blocks, events, portfolio or tokens", d.get_ref()),
                );
            }
            parsed
        });
        let mut chains = Vec::new();
        let no_chains = Vec::new();
        let chain_list = e.chains.as_ref().map_or(&no_chains, |c| c.get_ref());
        if let Some(c) = &e.chains
            && c.get_ref().is_empty()
        {
            self.err(c.span(), k("chains"), format!("must name at least one chain ({})", Chain::names()));
        }
        for c in chain_list {
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
        // Without chains (reported by the schema pass) there is nothing to check further.
        e.chains.as_ref()?;
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
            .map(|_| self.int_in(&e.chunk_blocks, &k("chunk_blocks"), 1, 100_000_000, defaults::CHUNK_BLOCKS as i64) as u64);
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
                    dataset_span.clone(),
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
                        match u64::try_from(*n.get_ref()) {
                            Ok(b) if b <= MAX_BLOCK => out.push(b),
                            _ => self.err(
                                n.span(),
                                k("numbers"),
                                format!("{} is not a block number from 0 to {MAX_BLOCK}", n.get_ref()),
                            ),
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
                        self.err(dataset_span.clone(), k("window"), "dataset `blocks` needs a `window` or `numbers`");
                    }
                    return None;
                }
            },
            Dataset::Events => {
                need_window(self);
                let contract_address = e.contract_address.as_ref().map(|c| self.address(c, &k("contract_address")));
                let mut topics = Vec::new();
                let mut signatures = Vec::new();
                for s in self.list(&e.signatures, &k("signatures"), 100).unwrap_or_default() {
                    let t = s.get_ref().trim();
                    if t.starts_with("0x") || t.starts_with("0X") {
                        if is_hash32(t) {
                            topics.push(t.to_ascii_lowercase());
                        } else {
                            self.err(
                                s.span(),
                                k("signatures"),
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
                            k("signatures"),
                            format!(
                                "`{}`: {why} (expected an event signature such as `Transfer(address indexed from, address indexed to, uint256 value)` or a 0x topic0 hash)",
                                short(t)
                            ),
                        ),
                    }
                }
                // Two spellings of one event select it once.
                let mut seen = std::collections::HashSet::new();
                topics.retain(|t| seen.insert(t.clone()));
                Selection::Events {
                    window: window?,
                    contract_address,
                    topics,
                    signatures,
                    chunk_blocks,
                    chunk_secs,
                }
            }
            Dataset::Portfolio => {
                let wallets: Vec<String> = match self.list(&e.wallets, &k("wallets"), 100_000) {
                    Some(l) => l.iter().map(|w| self.address(w, &k("wallets"))).collect(),
                    None => {
                        self.err(dataset_span.clone(), k("wallets"), "dataset `portfolio` needs `wallets`");
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
                    None => Window::Relative {
                        secs: defaults::PORTFOLIO_WINDOW_SECS,
                    },
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
                        self.err(dataset_span.clone(), k("addresses"), "dataset `tokens` needs `addresses`");
                        Vec::new()
                    }
                };
                Selection::Tokens {
                    addresses: dedup(addresses),
                }
            }
        };
        self.unit_bound(i, e, dataset_span, &chains, &selection, incr.is_some());
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
    /// Refuses an export and chain cut into more than [`MAX_UNITS`]
    /// units, counted without making them and at page size 1 (the most units
    /// any page size gives, so a resumed job with another page size is
    /// covered too). Incremental exports are cut per run, from the mark.
    fn unit_bound(
        &mut self,
        i: usize,
        e: &RawExport,
        dataset_span: Range<usize>,
        chains: &[Chain],
        selection: &Selection,
        incremental: bool,
    ) {
        let (window, chunk_blocks, chunk_secs) = match selection {
            Selection::BlockWindow {
                window,
                chunk_blocks,
                chunk_secs,
            }
            | Selection::Events {
                window,
                chunk_blocks,
                chunk_secs,
                ..
            } if !incremental => (window, chunk_blocks, chunk_secs),
            _ => return,
        };
        // A relative window's length is what decides its units.
        let resolved = window.resolve(0);
        for &chain in chains {
            let n = unit_count(selection, chain, resolved, 1);
            if n <= MAX_UNITS {
                continue;
            }
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
                span.unwrap_or(dataset_span.clone()),
                format!("export[{i}].{key}"),
                format!(
                    "cuts the window into {n} units on {chain}, more than the {MAX_UNITS} an export may have on a chain: set {fix}, or split the window over several jobs"
                ),
            );
            return;
        }
    }

    /// Refuses two exports that select the same rows (same dataset, a
    /// shared chain, filters whose rows can meet, windows that meet): each
    /// would write them, and readers would see every such row twice.
    fn overlaps(&mut self, raw: &[Spanned<RawExport>], exports: &[Export]) {
        for (j, b) in exports.iter().enumerate() {
            for a in &exports[..j] {
                if a.dataset != b.dataset {
                    continue;
                }
                let Some(chain) = a.chains.iter().find(|c| b.chains.contains(c)) else {
                    continue;
                };
                if !filters_meet(&a.selection, &b.selection) {
                    continue;
                }
                let Some(shared) = covers_meet(&cover(a), &cover(b)) else {
                    continue;
                };
                let rb = raw.get(b.index).map(|r| r.get_ref());
                let span = rb
                    .and_then(|r| r.window.as_ref().or(r.dataset.as_ref()).map(|x| x.span()))
                    .unwrap_or(0..0);
                self.err(
                    span,
                    format!("export[{}]", b.index),
                    format!(
                        "overlaps export[{}] on {chain}: both select {} rows {shared}, which would be written twice; make their windows or filters disjoint, or remove one",
                        a.index, a.dataset
                    ),
                );
            }
        }
    }
}

/// What part of its dataset's rows an export covers, as far as the spec
/// alone tells.
#[derive(Debug)]
enum Cover<'a> {
    /// Blocks `first..=last`.
    Blocks(u64, u64),
    /// These blocks (sorted).
    Numbers(&'a [u64]),
    /// Blocks from this one on (incremental).
    BlocksFrom(u64),
    /// Unix seconds `start..end`.
    Time(i64, i64),
    /// A relative window: it ends at "now" (or at the current period).
    Recent,
    /// Days from this unix second on (incremental portfolio).
    TimeFrom(i64),
    /// No window (tokens).
    All,
}

fn cover(e: &Export) -> Cover<'_> {
    if let Some(inc) = &e.incremental {
        return if e.dataset == Dataset::Portfolio {
            Cover::TimeFrom(i64::try_from(inc.start).unwrap_or(i64::MAX))
        } else {
            Cover::BlocksFrom(inc.start)
        };
    }
    let window = match &e.selection {
        Selection::BlockNumbers(n) => return Cover::Numbers(n),
        Selection::Tokens { .. } => return Cover::All,
        Selection::BlockWindow { window, .. } | Selection::Events { window, .. } | Selection::Portfolio { window, .. } => window,
    };
    match *window {
        Window::Blocks { first, last } => Cover::Blocks(first, last),
        Window::Interval { start, end } => Cover::Time(start, end),
        Window::Relative { .. } => Cover::Recent,
    }
}

/// The rows two covers share, described, or `None` when they cannot meet
/// (or the spec alone cannot tell: a block range against a time window,
/// a relative window against a fixed interval).
fn covers_meet(a: &Cover<'_>, b: &Cover<'_>) -> Option<String> {
    use Cover::*;
    let in_numbers = |n: &[u64], lo: u64, hi: u64| {
        let i = n.partition_point(|x| *x < lo);
        n.get(i).copied().filter(|x| *x <= hi)
    };
    match (a, b) {
        (Blocks(a0, a1), Blocks(b0, b1)) => {
            let (lo, hi) = ((*a0).max(*b0), (*a1).min(*b1));
            (lo <= hi).then(|| format!("in blocks {lo}..{hi}"))
        }
        (Blocks(lo, hi), Numbers(n)) | (Numbers(n), Blocks(lo, hi)) => in_numbers(n, *lo, *hi).map(|x| format!("of block {x}")),
        (Numbers(x), Numbers(y)) => x.iter().find(|n| y.binary_search(n).is_ok()).map(|n| format!("of block {n}")),
        (BlocksFrom(s), Blocks(_, hi)) | (Blocks(_, hi), BlocksFrom(s)) => (hi >= s).then(|| format!("in blocks from {s}")),
        (BlocksFrom(s), Numbers(n)) | (Numbers(n), BlocksFrom(s)) => in_numbers(n, *s, u64::MAX).map(|x| format!("of block {x}")),
        (BlocksFrom(x), BlocksFrom(y)) => Some(format!("in blocks from {}", x.max(y))),
        (Time(a0, a1), Time(b0, b1)) => {
            let (lo, hi) = ((*a0).max(*b0), (*a1).min(*b1));
            (lo < hi).then(|| format!("in {}", Resolved::Time { start: lo, end: hi }))
        }
        (Recent, Recent) => Some("in the most recent period (both windows are relative and end now)".into()),
        (TimeFrom(s), Time(_, end)) | (Time(_, end), TimeFrom(s)) => (end > s).then(|| format!("from {}", crate::vocab::window::iso(*s))),
        (TimeFrom(x), TimeFrom(y)) => Some(format!("from {}", crate::vocab::window::iso(*x.max(y)))),
        (TimeFrom(_), Recent) | (Recent, TimeFrom(_)) => Some("in the most recent days".into()),
        (All, All) => Some("of the same tokens".into()),
        _ => None,
    }
}

/// Whether rows selected by `a`'s filters can also be selected by `b`'s.
fn filters_meet(a: &Selection, b: &Selection) -> bool {
    fn either_none_or_equal(x: &Option<String>, y: &Option<String>) -> bool {
        x.is_none() || y.is_none() || x == y
    }
    fn share(x: &[String], y: &[String]) -> bool {
        let set: std::collections::HashSet<&String> = x.iter().collect();
        y.iter().any(|v| set.contains(v))
    }
    match (a, b) {
        (
            Selection::Events {
                contract_address: ca,
                topics: ta,
                ..
            },
            Selection::Events {
                contract_address: cb,
                topics: tb,
                ..
            },
        ) => either_none_or_equal(ca, cb) && (ta.is_empty() || tb.is_empty() || share(ta, tb)),
        (
            Selection::Portfolio {
                wallets: wa,
                token_address: ta,
                ..
            },
            Selection::Portfolio {
                wallets: wb,
                token_address: tb,
                ..
            },
        ) => share(wa, wb) && either_none_or_equal(ta, tb),
        (Selection::Tokens { addresses: x }, Selection::Tokens { addresses: y }) => share(x, y),
        _ => true,
    }
}

/// At most 100 characters of `s`, for messages about hostile input.
fn short(s: &str) -> String {
    match s.char_indices().nth(100) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// The longest job name: it starts every data file name
/// (`<name>-<unit id>-<seq>.parquet`, unit ids up to ~100 bytes for a
/// portfolio wallet unit) and names the state directory, and file names
/// are limited to 255 bytes.
pub const MAX_NAME_LEN: usize = 64;

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
        let e = errs.iter().find(|e| e.line == 4).unwrap_or_else(|| panic!("{errs:?}"));
        assert_eq!(e.key, "source.max_concurency");
        assert_eq!(e.message, "unknown key; did you mean `max_concurrency`?");
        // The missing [[export]] is reported alongside.
        assert!(errs.iter().any(|e| e.message.contains("no [[export]]")), "{errs:?}");
    }

    /// A spec text holding every key of `keys` with a value of its type.
    fn every_key(keys: &[schema::Key], table: &str, out: &mut String) {
        use schema::Kind;
        let mut tables = Vec::new();
        for k in keys {
            let v = match k.kind {
                Kind::Str => "\"x\"",
                Kind::Int | Kind::UInt(_) | Kind::Start | Kind::Confirmations => "1",
                Kind::Float => "0.5",
                Kind::Bool => "true",
                Kind::StrList => "[\"x\"]",
                Kind::IntList => "[1]",
                Kind::Duration => "\"5m\"",
                Kind::Table(_) | Kind::Tables(_) => {
                    tables.push(k);
                    continue;
                }
            };
            out.push_str(&format!("{} = {v}\n", k.name));
        }
        for k in tables {
            let name = if table.is_empty() {
                k.name.to_string()
            } else {
                format!("{table}.{}", k.name)
            };
            match k.kind {
                Kind::Table(inner) => {
                    out.push_str(&format!("[{name}]\n"));
                    every_key(inner, &name, out);
                }
                Kind::Tables(inner) => {
                    out.push_str(&format!("[[{name}]]\n"));
                    every_key(inner, &name, out);
                }
                _ => {}
            }
        }
    }

    #[test]
    fn the_schema_and_the_raw_model_name_the_same_keys() {
        // Every schema key deserializes into the raw model...
        let mut text = String::new();
        every_key(schema::SPEC, "", &mut text);
        let (mut root, syntax) = toml::de::DeTable::parse_recoverable(&text);
        assert!(syntax.is_empty(), "{text}");
        assert_eq!(schema::check(&mut root), vec![], "{text}");
        let raw = <RawSpec as serde::Deserialize>::deserialize(toml::de::Deserializer::from(root));
        assert!(raw.is_ok(), "{:?}\n{text}", raw.err());
        // ...and the raw model takes no key the schema does not list (serde
        // names what it expected when it meets an unknown one).
        let tables: [(&str, &[schema::Key]); 5] = [
            ("", schema::SPEC),
            ("[source]\n", schema::source()),
            ("[source.sim]\n", schema::sim()),
            ("[output]\n", schema::output()),
            ("[[export]]\n", schema::export()),
        ];
        for (header, keys) in tables {
            let text = format!("{header}zz_unknown = 1\n");
            let e = toml::from_str::<RawSpec>(&text).unwrap_err().message().to_string();
            let expected: Vec<&str> = e.split('`').skip(3).step_by(2).collect();
            let mut want: Vec<&str> = keys.iter().map(|k| k.name).collect();
            let mut got = expected.clone();
            want.sort();
            got.sort();
            assert_eq!(got, want, "{header}: {e}");
        }
    }

    fn valid() -> &'static str {
        "name = \"p\"\n[source]\nbase_url = \"sim\"\nmax_concurrency = 4\n[source.sim]\nfrozen_at = \"2025-06-01T00:00:00Z\"\n[output]\nuri = \"o\"\n[[export]]\ndataset = \"events\"\nchains = [\"base\", \"ethereum\"]\nwindow = \"100..199\"\nsignatures = [\"Transfer(address,address,uint)\"]\n[[export]]\ndataset = \"portfolio\"\nchains = [\"base\"]\nwallets = [\"0x00000000000000000000000000000000000000aa\"]\nwindow = \"2025-01-01..2025-02-01\"\n"
    }

    #[test]
    fn the_valid_spec_of_the_property_tests_is_valid() {
        let s = Spec::parse("p.toml", valid()).unwrap();
        match &s.exports[0].selection {
            Selection::Events { topics, signatures, .. } => {
                assert_eq!(
                    topics,
                    &vec![crate::vocab::evm::signature_topic("Transfer(address,address,uint256)")]
                );
                assert_eq!(signatures[0].canonical, "Transfer(address,address,uint256)");
            }
            other => panic!("{other:?}"),
        }
    }

    use proptest::prelude::*;

    /// Characters that matter to TOML and to the checks.
    const NOISE: &[char] = &[
        '"', '\'', '[', ']', '{', '}', '=', '.', ',', '#', '\n', ' ', '\\', '$', '0', '9', '-', ':', 'x', 'é', '\u{0}',
    ];

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        #[test]
        fn mutated_spec_text_never_panics(
            edits in prop::collection::vec((0usize..400, 0usize..NOISE.len(), 0u8..4), 1..6),
        ) {
            let mut text: Vec<char> = valid().chars().collect();
            for (at, c, op) in edits {
                let at = at % (text.len() + 1);
                match op {
                    0 => text.insert(at, NOISE[c]),
                    1 if at < text.len() => {
                        text.remove(at);
                    }
                    2 => {
                        // Duplicate a line: duplicate keys and tables.
                        let s: String = text.iter().collect();
                        let lines: Vec<&str> = s.lines().collect();
                        if lines.is_empty() {
                            continue;
                        }
                        let l = lines[at % lines.len()];
                        let mut v: Vec<&str> = lines.clone();
                        v.insert(at % lines.len(), l);
                        text = v.join("\n").chars().collect();
                    }
                    _ => text.truncate(at),
                }
            }
            let text: String = text.into_iter().collect();
            // Err or Ok, never a panic; every error says where.
            if let Err(e) = Spec::parse("m.toml", &text) {
                prop_assert!(!e.0.is_empty());
                prop_assert!(e.0.iter().all(|x| x.file == "m.toml" && !x.message.is_empty()));
            }
            let env = |k: &str| k.len().is_multiple_of(2).then(|| "v\\'\"".to_string());
            let _ = text::interpolate("m.toml", &text, &env);
            let _ = text::apply_overrides("m.toml", &text, &["export.0.window=1..2".into(), "source.x.y=3".into()]);
        }

        #[test]
        fn values_of_any_text_never_panic(s in "\\PC{0,60}") {
            let _ = Window::parse(&s);
            let _ = crate::vocab::window::parse_duration(&s);
            let _ = EventSignature::parse(&s);
            let value = s.replace('\\', "\\\\").replace('"', "\\\"");
            for key in ["window", "signatures", "chunk_duration", "start"] {
                let v = if key == "signatures" { format!("[\"{value}\"]") } else { format!("\"{value}\"") };
                let text = valid().replace("window = \"100..199\"", &format!("{key} = {v}\nwindow = \"1..2\""));
                let _ = Spec::parse("v.toml", &text);
            }
        }
    }
}
