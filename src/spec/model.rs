//! The validated model of a spec: what `plan` and the rest of the job
//! read. Built only by validation, so every value here is in range (see
//! the invariants in the module doc of `spec`).

use super::Dataset;
use super::sim_options::SimOptions;
use crate::vocab::chain::Chain;
use crate::vocab::cuts::{CutRule, Cuts, NUMBERS_PER_REQUEST, TOKENS_PER_UNIT};
use crate::vocab::evm::EventSignature;
use crate::vocab::window::{Align, Resolved, Window};
use serde::{Deserialize, Serialize};
use std::time::Duration;
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
    /// Where `api_key_env` is set (`file:line:col`), for messages.
    pub api_key_env_at: String,
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

impl Source {
    /// When `api_key_env` names a variable the environment does not set:
    /// the message `run` and `plan` refuse with (exit 2) and `validate`
    /// warns with, saying where and how to fix it. A name that looks like
    /// a key pasted in its place is not repeated.
    pub fn unset_key_message(&self) -> Option<String> {
        let var = self.api_key_env.as_deref()?;
        if std::env::var_os(var).is_some() {
            return None;
        }
        let at = &self.api_key_env_at;
        Some(if looks_like_a_key(var) {
            format!(
                "{at}: source.api_key_env names no variable that is set, and its value looks like a key itself \
                 (not repeated here): api_key_env takes the name of the variable that holds the key: \
                 export CHAINETL_API_KEY=<the key> and write api_key_env = \"CHAINETL_API_KEY\""
            )
        } else {
            format!(
                "{at}: source.api_key_env names ${var}, which is not set: export {var}=<the service's API key>, \
                 or remove api_key_env if the service needs no key"
            )
        })
    }
}

/// Whether an `api_key_env` value may be a key rather than a variable's
/// name, so that it is never repeated: names are words in upper case
/// joined by `_` with few digits (`CHAINETL_API_KEY`, `BDS_KEY_2`); keys
/// mix lower case and digits (`sk_live_9f8e…`), carry many digits
/// (`I2MBIPC3CU5D7WM882…`), or run long without a `_`.
pub fn looks_like_a_key(name: &str) -> bool {
    let lower = name.chars().any(|c| c.is_ascii_lowercase());
    let digits = name.chars().filter(char::is_ascii_digit).count();
    let word = name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    !word || name.len() > 40 || digits > 3 || (lower && digits > 0) || (name.len() > 24 && !name.contains('_'))
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

/// How the output's files become visible to readers (`output.format`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OutputFormat {
    /// A hive-partitioned folder of Parquet files.
    #[default]
    Parquet,
    /// A Delta Lake table per dataset and decoded table (`sink::format::delta::table`).
    Delta,
    /// An Apache Iceberg table per dataset and decoded table
    /// (`sink::format::iceberg::table`).
    Iceberg,
}

impl OutputFormat {
    /// Every format this build writes.
    pub const ALL: [OutputFormat; 3] = [OutputFormat::Parquet, OutputFormat::Delta, OutputFormat::Iceberg];

    /// The name a spec uses.
    pub fn name(self) -> &'static str {
        match self {
            OutputFormat::Parquet => "parquet",
            OutputFormat::Delta => "delta",
            OutputFormat::Iceberg => "iceberg",
        }
    }

    /// The format a spec names `name`, if this build knows it.
    pub fn named(name: &str) -> Option<OutputFormat> {
        OutputFormat::ALL.into_iter().find(|f| f.name() == name)
    }
}

impl std::fmt::Display for OutputFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
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
    /// Compact each finished partition (`output.compact`).
    #[serde(skip)]
    pub compact: bool,
    /// Bytes of a compacted file (`output.target_file_mb`).
    #[serde(skip)]
    pub target_file_bytes: usize,
    /// Columns with bloom filters, where a table has them (`output.bloom_filters`).
    #[serde(skip)]
    pub bloom_filters: Vec<String>,
    /// S3 endpoint override.
    #[serde(skip)]
    pub endpoint: Option<String>,
    /// S3 region override.
    #[serde(skip)]
    pub region: Option<String>,
    /// Allow http S3 endpoints.
    #[serde(skip)]
    pub allow_http: Option<bool>,
    /// `parquet` (default) or `delta` (`output.format`).
    pub format: OutputFormat,
    /// How long files removed from a Delta table stay on storage, so that
    /// versions within it stay readable (`output.delta_retention`).
    #[serde(skip)]
    pub delta_retention: Duration,
    /// The Iceberg REST catalog every commit goes through
    /// (`[output.catalog]`); `None`: the file-system layout alone.
    #[serde(skip)]
    pub catalog: Option<Catalog>,
    /// Properties written into each Iceberg table's
    /// (`[output.table_properties]`), Iceberg's maintenance properties
    /// among them.
    #[serde(skip)]
    pub table_properties: std::collections::BTreeMap<String, String>,
}

/// `[output.catalog]`: an Iceberg REST catalog (validated; secrets are
/// named by their variables, never held here).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Catalog {
    /// The catalog's base URI (`/v1/...` below it).
    pub uri: String,
    /// The namespace of the job's tables (`<namespace>.<table>`).
    pub namespace: String,
    /// The warehouse the catalog is asked for in `GET /v1/config`.
    pub warehouse: Option<String>,
    /// How requests authenticate.
    pub auth: CatalogAuth,
    /// The OAuth2 token endpoint (default `<uri>/v1/oauth/tokens`).
    pub oauth2_server_uri: Option<String>,
    /// The OAuth2 scope asked for (default `catalog`).
    pub scope: String,
}

impl Catalog {
    /// The catalog's name of the table at directory `rel` of the output
    /// (`/` read as `_`).
    pub fn table_name(rel: &str) -> String {
        rel.trim_matches('/').replace('/', "_")
    }

    /// The catalog's identifier of the table at `rel`: `<namespace>.<name>`.
    pub fn identifier(&self, rel: &str) -> String {
        format!("{}.{}", self.namespace, Catalog::table_name(rel))
    }
}

/// How requests to a catalog authenticate.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum CatalogAuth {
    /// No credential (a catalog open to this host).
    None,
    /// OAuth2 client credentials from the variable named, holding
    /// `client_id:client_secret` (`credential_env`).
    Credential(String),
    /// A bearer token from the variable named (`token_env`).
    Token(String),
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

impl Selection {
    /// How many units an export selecting this makes on `chain` for
    /// the window `w` at page size `page` under `rule`, counted without making
    /// them; page size 1 and [`CutRule::Hourly`] give the most units any page
    /// size and rule can (automatic units only grow with the page and the cap).
    pub fn unit_count(&self, chain: Chain, w: Resolved, page: u64, rule: CutRule) -> u64 {
        let page = page.max(1);
        match self {
            Selection::BlockWindow {
                chunk_blocks, chunk_secs, ..
            }
            | Selection::Events {
                chunk_blocks, chunk_secs, ..
            } => Cuts::of_window(w, *chunk_blocks, *chunk_secs, self.rows_per_block(), chain, page, rule).count(),
            Selection::BlockNumbers(n) => n.len().div_ceil(NUMBERS_PER_REQUEST) as u64,
            Selection::Portfolio { wallets, .. } => wallets.len() as u64,
            Selection::Tokens { addresses } => addresses.len().div_ceil(TOKENS_PER_UNIT) as u64,
        }
    }

    /// Estimated rows a block: a filter keeps a fraction of the events.
    pub(crate) fn rows_per_block(&self) -> u64 {
        match self {
            Selection::Events {
                contract_address, topics, ..
            } if contract_address.is_some() || !topics.is_empty() => 4,
            Selection::Events { .. } => 40,
            _ => 1,
        }
    }

    /// A windowed selection cut into units by blocks or time (blocks by
    /// window, events): its window and unit sizes (blocks, seconds).
    pub fn chunked_window(&self) -> Option<(&crate::vocab::window::Window, Option<u64>, Option<i64>)> {
        match self {
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
            } => Some((window, *chunk_blocks, *chunk_secs)),
            _ => None,
        }
    }
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
    /// Decoded events: the tables this export writes (None: raw events only).
    #[serde(skip)]
    pub decoding: Option<crate::spec::Decoding>,
    /// The columns this export does not write (`columns`,
    /// `exclude_columns`), in the order of its tables' columns; empty:
    /// every column. A name leaves the column out of each of its tables
    /// that has one (a decoding export's decoded tables, and `events` with
    /// `also_raw`). Never one of [`Dataset::kept_columns`], which are its
    /// decoded tables' key, sort and date columns too.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub dropped_columns: Vec<String>,
}

impl Export {
    /// The tables this export writes: directories under the output. A raw
    /// export writes its dataset's; a decoding one a table per event (and
    /// `events` too with `also_raw`).
    pub fn tables(&self) -> Vec<String> {
        match &self.decoding {
            None => vec![self.dataset.name().to_string()],
            Some(d) => {
                let mut t: Vec<String> = d.tables.iter().map(|t| t.table.clone()).collect();
                if d.also_raw {
                    t.push(self.dataset.name().to_string());
                }
                t
            }
        }
    }

    /// Whether its tables hold column `name` (when they have it at all).
    pub fn writes_column(&self, name: &str) -> bool {
        !self.dropped_columns.iter().any(|c| c == name)
    }

    /// Every column of its table `table` when none is left out, in file
    /// order: a decoded table's, else its dataset's.
    pub fn all_columns(&self, table: &str) -> Vec<String> {
        let (decoded, u256) = self
            .decoding
            .as_ref()
            .map_or((&[][..], Default::default()), |d| (&d.tables[..], d.u256));
        // The dataset's own table comes last: the answer for any other.
        let mut tables = super::decoding::table_columns(self.dataset, decoded, u256, true);
        let i = tables.iter().position(|(t, _)| t == table).unwrap_or(tables.len() - 1);
        tables.swap_remove(i).1
    }

    /// The columns it leaves out of its table `table`, in file order.
    pub fn dropped_from(&self, table: &str) -> Vec<String> {
        self.all_columns(table).into_iter().filter(|c| !self.writes_column(c)).collect()
    }

    /// Whether its range is decided per run (aligned or incremental)
    /// rather than frozen once for the job.
    pub fn per_run(&self) -> bool {
        self.align.is_some() || self.incremental.is_some()
    }
}

impl Spec {
    /// Every table the job writes: directories under the output.
    pub fn tables(&self) -> std::collections::BTreeSet<String> {
        self.exports.iter().flat_map(Export::tables).collect()
    }

    /// Each table's identifier in the job's REST catalog, by table; empty
    /// without `[output.catalog]`.
    pub fn catalog_tables(&self) -> std::collections::BTreeMap<String, String> {
        let Some(c) = &self.output.catalog else {
            return Default::default();
        };
        self.tables()
            .into_iter()
            .map(|t| {
                let id = c.identifier(&t);
                (t, id)
            })
            .collect()
    }

    /// The columns each table holds whose exports leave some out
    /// (`columns`, `exclude_columns`), in file order; tables that hold
    /// every column of their dataset are not listed.
    pub fn selected_columns(&self) -> std::collections::BTreeMap<String, Vec<String>> {
        let mut out = std::collections::BTreeMap::new();
        for e in self.exports.iter().filter(|e| !e.dropped_columns.is_empty()) {
            for t in e.tables() {
                let all = e.all_columns(&t);
                if all.iter().any(|c| !e.writes_column(c)) {
                    out.insert(t, all.into_iter().filter(|c| e.writes_column(c)).collect());
                }
            }
        }
        out
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

/// The longest job name: it starts every data file name
/// (`<name>-<unit id>-<seq>.parquet`, unit ids up to ~100 bytes for a
/// portfolio wallet unit) and names the state directory, and file names
/// are limited to 255 bytes.
pub const MAX_NAME_LEN: usize = 64;
