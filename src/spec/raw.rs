//! The TOML model as written: serde structs with `deny_unknown_fields`.
//! Field doc comments are the reference of each key (see docs/spec.md).
//!
//! The tree is checked against [`super::schema`] first, which reports and
//! removes unknown keys, values of the wrong type and missing required
//! keys; so required keys are `Option`s here (their absence is already
//! reported) and deserializing never stops the other checks.

use serde::Deserialize;
use toml::Spanned;

/// A whole pipeline spec.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSpec {
    /// Job name; state lives under `<output>/_chainetl/<name>/`.
    pub(crate) name: Option<Spanned<String>>,
    /// Where data comes from.
    pub(crate) source: Option<Spanned<RawSource>>,
    /// Where Parquet goes.
    pub(crate) output: Option<Spanned<RawOutput>>,
    /// Follow mode: how often to poll the head (default for every export; else [`super::defaults::POLL_INTERVAL_SECS`]).
    pub(crate) poll_interval: Option<Spanned<toml::Value>>,
    /// Follow mode: how often newly confirmed blocks become files (default for every export; else
    /// [`super::defaults::ROLL_INTERVAL_SECS`]).
    pub(crate) roll_interval: Option<Spanned<toml::Value>>,
    /// One or more exports.
    #[serde(default)]
    pub(crate) export: Vec<Spanned<RawExport>>,
}

/// `[source]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSource {
    /// `https://host` or `"sim"` for the built-in simulator.
    pub(crate) base_url: Option<Spanned<String>>,
    /// Name of the environment variable holding the API key.
    pub(crate) api_key_env: Option<Spanned<String>>,
    /// Requests in flight, whole job (default [`super::defaults::MAX_CONCURRENCY`]).
    pub(crate) max_concurrency: Option<Spanned<i64>>,
    /// Request-rate bound (default: none).
    pub(crate) requests_per_second: Option<Spanned<f64>>,
    /// `limit` per request, capped per endpoint (default [`super::defaults::PAGE_SIZE`]; portfolio
    /// [`crate::vocab::cuts::PORTFOLIO_DAYS_PER_PAGE`]).
    pub(crate) page_size: Option<Spanned<i64>>,
    /// Per-request timeout in seconds (default [`super::defaults::TIMEOUT_SECS`]).
    pub(crate) timeout_secs: Option<Spanned<i64>>,
    /// Retries per request (default [`super::defaults::MAX_RETRIES`]).
    pub(crate) max_retries: Option<Spanned<i64>>,
    /// Largest response body in MiB (default [`super::defaults::MAX_RESPONSE_MB`]).
    pub(crate) max_response_mb: Option<Spanned<i64>>,
    /// Longest `Retry-After` honoured, in seconds (default [`super::defaults::MAX_RETRY_AFTER_SECS`]).
    pub(crate) max_retry_after_secs: Option<Spanned<i64>>,
    /// Settings of the built-in simulator when `base_url = "sim"`.
    pub(crate) sim: Option<Spanned<RawSim>>,
}

/// `[source.sim]`: the simulator's settings, named as [`super::SimOptions`]
/// (and the `chainetl sim` flags); checked and converted by the validator.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSim {
    /// Seed of all generated data.
    pub(crate) seed: Option<Spanned<u64>>,
    /// Mean number of events per block.
    pub(crate) events_per_block: Option<Spanned<u32>>,
    /// Requests per second before answering 429 (0: no quota).
    pub(crate) quota_rps: Option<Spanned<f64>>,
    /// Share of requests answered with a 5xx.
    pub(crate) error_rate: Option<Spanned<f64>>,
    /// Share of connections reset mid-body.
    pub(crate) reset_rate: Option<Spanned<f64>>,
    /// Share of JSON bodies cut short.
    pub(crate) truncate_rate: Option<Spanned<f64>>,
    /// Milliseconds added to every response.
    pub(crate) latency_ms: Option<Spanned<u64>>,
    /// Freeze the head when the simulator starts.
    pub(crate) freeze_head: Option<Spanned<bool>>,
    /// Freeze the clock at this ISO instant.
    pub(crate) frozen_at: Option<Spanned<String>>,
    /// Requests with another bearer key get 401.
    pub(crate) api_key: Option<Spanned<String>>,
    /// Resources answered with 403, `CHAIN/ENDPOINT`.
    pub(crate) forbid: Option<Spanned<Vec<Spanned<String>>>>,
    /// Interval ends inclusive.
    pub(crate) inclusive_end: Option<Spanned<bool>>,
    /// Topics as JSON numbers.
    pub(crate) topics_as_numbers: Option<Spanned<bool>>,
    /// Events examined per request when filters are selective.
    pub(crate) scan_budget: Option<Spanned<u64>>,
    /// Reorg depth injected at start.
    pub(crate) reorg_depth: Option<Spanned<u64>>,
}

/// `[output]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawOutput {
    /// Local path, `file:///abs/path` or `s3://bucket/prefix`.
    pub(crate) uri: Option<Spanned<String>>,
    /// Hive partition keys, from `chain` and `date` (default both).
    pub(crate) partition_by: Option<Spanned<Vec<Spanned<String>>>>,
    /// `zstd` (default), `snappy`, `lz4`, `gzip` or `none`.
    pub(crate) compression: Option<Spanned<String>>,
    /// zstd level 1..=22 (default [`super::defaults::COMPRESSION_LEVEL`]).
    pub(crate) compression_level: Option<Spanned<i64>>,
    /// Rows per row group (default [`super::defaults::ROW_GROUP_ROWS`]).
    pub(crate) row_group_rows: Option<Spanned<i64>>,
    /// Roll to a new file after this many rows (default [`super::defaults::FILE_ROWS`]).
    pub(crate) file_rows: Option<Spanned<i64>>,
    /// Roll to a new file after about this many MiB (default [`super::defaults::FILE_MB`]).
    pub(crate) file_mb: Option<Spanned<i64>>,
    /// Commit (close files, checkpoint) at least every this many seconds (default
    /// [`super::defaults::COMMIT_INTERVAL_SECS`]).
    pub(crate) commit_interval_secs: Option<Spanned<i64>>,
    /// Commit at least every this many pages (default [`super::defaults::COMMIT_PAGES`]).
    pub(crate) commit_pages: Option<Spanned<i64>>,
    /// `hex` (default) or `binary` for hashes and addresses.
    pub(crate) hash_encoding: Option<Spanned<String>>,
    /// Memory for rows buffered in open files, whole job, in MiB (default [`super::defaults::MEMORY_BUDGET_MB`]).
    pub(crate) memory_budget_mb: Option<Spanned<i64>>,
    /// Merge each finished partition's files into files of about
    /// `target_file_mb` (default true).
    pub(crate) compact: Option<Spanned<bool>>,
    /// Size of a compacted file in MiB (default [`super::defaults::TARGET_FILE_MB`]).
    pub(crate) target_file_mb: Option<Spanned<i64>>,
    /// Columns that get a Parquet bloom filter, where a table has them
    /// (default [`super::defaults::bloom_filter_columns`]).
    pub(crate) bloom_filters: Option<Spanned<Vec<Spanned<String>>>>,
    /// S3: endpoint URL of an S3-compatible store (default: `AWS_ENDPOINT_URL` or AWS).
    pub(crate) endpoint: Option<Spanned<String>>,
    /// S3: region (default: `AWS_REGION`, else us-east-1).
    pub(crate) region: Option<Spanned<String>>,
    /// S3: allow plain-http endpoints (default: `AWS_ALLOW_HTTP`).
    pub(crate) allow_http: Option<Spanned<bool>>,
    /// `parquet` (default) or `delta`.
    pub(crate) format: Option<Spanned<String>>,
    /// Delta: how long removed files stay (default [`super::defaults::DELTA_RETENTION_SECS`]).
    pub(crate) delta_retention: Option<Spanned<toml::Value>>,
    /// Iceberg: the REST catalog commits go through.
    pub(crate) catalog: Option<Spanned<RawCatalog>>,
    /// Iceberg: properties written into each table's.
    pub(crate) table_properties: Option<Spanned<std::collections::BTreeMap<String, Spanned<String>>>>,
}

/// `[output.catalog]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawCatalog {
    /// `rest`, the only type this build knows.
    #[serde(rename = "type")]
    pub(crate) kind: Option<Spanned<String>>,
    /// The catalog's base URI.
    pub(crate) uri: Option<Spanned<String>>,
    /// The tables' namespace.
    pub(crate) namespace: Option<Spanned<String>>,
    /// The warehouse asked for.
    pub(crate) warehouse: Option<Spanned<String>>,
    /// The variable holding `client_id:client_secret`.
    pub(crate) credential_env: Option<Spanned<String>>,
    /// The variable holding a bearer token.
    pub(crate) token_env: Option<Spanned<String>>,
    /// The OAuth2 token endpoint.
    pub(crate) oauth2_server_uri: Option<Spanned<String>>,
    /// The OAuth2 scope (default `catalog`).
    pub(crate) scope: Option<Spanned<String>>,
}

/// One `[[export]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawExport {
    /// `blocks`, `events`, `portfolio` or `tokens`.
    pub(crate) dataset: Option<Spanned<String>>,
    /// Chains to export.
    pub(crate) chains: Option<Spanned<Vec<Spanned<String>>>>,
    /// Block range, ISO interval or relative duration (portfolio default:
    /// [`super::defaults::PORTFOLIO_WINDOW_SECS`]).
    pub(crate) window: Option<Spanned<String>>,
    /// blocks: explicit block numbers.
    pub(crate) numbers: Option<Spanned<Vec<Spanned<i64>>>>,
    /// events: contract filter.
    pub(crate) contract_address: Option<Spanned<String>>,
    /// events: topic0 hashes or ABI signatures.
    pub(crate) signatures: Option<Spanned<Vec<Spanned<String>>>>,
    /// portfolio: wallets.
    pub(crate) wallets: Option<Spanned<Vec<Spanned<String>>>>,
    /// portfolio: token filter.
    pub(crate) token_address: Option<Spanned<String>>,
    /// tokens: token contract addresses.
    pub(crate) addresses: Option<Spanned<Vec<Spanned<String>>>>,
    /// blocks/events: blocks per work unit for block ranges (default: sized from the
    /// window and the page, see [`crate::vocab::cuts`]).
    pub(crate) chunk_blocks: Option<Spanned<i64>>,
    /// blocks/events: duration per work unit for time windows (default: sized from the
    /// window and the page, see [`crate::vocab::cuts`]).
    pub(crate) chunk_duration: Option<Spanned<String>>,
    /// Snap a relative window to whole UTC `day`s or `hour`s (scheduled runs).
    pub(crate) align: Option<Spanned<String>>,
    /// Export from the committed high-water mark up to the confirmed head.
    pub(crate) incremental: Option<Spanned<bool>>,
    /// Incremental: first block (blocks/events) or first day (portfolio).
    pub(crate) start: Option<Spanned<toml::Value>>,
    /// Incremental: blocks behind the head not exported yet; a number or a table by chain.
    pub(crate) confirmations: Option<Spanned<toml::Value>>,
    /// Follow mode: how often to poll the head.
    pub(crate) poll_interval: Option<Spanned<toml::Value>>,
    /// Follow mode: how often newly confirmed blocks become files.
    pub(crate) roll_interval: Option<Spanned<toml::Value>>,
    /// events: decode `signatures` into a table per event.
    pub(crate) decode: Option<Spanned<bool>>,
    /// events: a JSON ABI file whose events are decoded (and selected).
    pub(crate) abi: Option<Spanned<String>>,
    /// Decoded: the table of an export decoding one event.
    pub(crate) table: Option<Spanned<String>>,
    /// Decoded: extra columns of wide integers (`decimal38`, `binary`).
    pub(crate) u256: Option<Spanned<Vec<Spanned<String>>>>,
    /// Decoded: also write the raw `events` table.
    pub(crate) also_raw: Option<Spanned<bool>>,
    /// The columns written, exactly (key, sort and partition columns are
    /// always written, listed or not).
    pub(crate) columns: Option<Spanned<Vec<Spanned<String>>>>,
    /// The columns not written: every other is.
    pub(crate) exclude_columns: Option<Spanned<Vec<Spanned<String>>>>,
}
