//! The default of every setting a spec, or `chainetl sim`, may leave out,
//! in one place: the validator, the client's own defaults and the
//! simulator's options all read them from here, so a default changes in
//! one line. The bounds each setting is checked against stay with its
//! check.

use crate::vocab::Dataset;

// `[source]`

/// Requests in flight, whole job (`source.max_concurrency`).
pub const MAX_CONCURRENCY: usize = 8;
/// `limit` sent per request before per-endpoint caps (`source.page_size`):
/// the service's largest page, so a job makes the fewest requests.
pub const PAGE_SIZE: u32 = 1000;
/// Per-request timeout in seconds (`source.timeout_secs`).
pub const TIMEOUT_SECS: u64 = 30;
/// Retries per request after the first attempt (`source.max_retries`).
pub const MAX_RETRIES: usize = 10;
/// Largest response body accepted, in MiB (`source.max_response_mb`).
pub const MAX_RESPONSE_MB: u64 = 64;
/// Longest `Retry-After` honoured, in seconds (`source.max_retry_after_secs`).
pub const MAX_RETRY_AFTER_SECS: u64 = 60;

// `[output]`

/// zstd level (`output.compression_level`).
pub const COMPRESSION_LEVEL: i32 = 1;
/// Rows per row group (`output.row_group_rows`).
pub const ROW_GROUP_ROWS: usize = 131_072;
/// Rows per file before rolling to the next (`output.file_rows`).
pub const FILE_ROWS: usize = 1_000_000;
/// MiB per file before rolling to the next (`output.file_mb`).
pub const FILE_MB: usize = 512;
/// Seconds between commits at most (`output.commit_interval_secs`).
pub const COMMIT_INTERVAL_SECS: u64 = 30;
/// Pages between commits at most (`output.commit_pages`).
pub const COMMIT_PAGES: usize = 25;
/// MiB of encoded-but-unflushed row groups the whole job may hold
/// (`output.memory_budget_mb`).
pub const MEMORY_BUDGET_MB: usize = 64;
/// Seconds a file removed from a Delta table stays on storage before
/// `vacuum` deletes it (`output.delta_retention`): 7 days, Delta's own
/// default, so readers and time travel within a week keep working.
pub const DELTA_RETENTION_SECS: i64 = 7 * 24 * 3600;
/// Commits between Delta log checkpoints (`delta.checkpointInterval`):
/// the protocol's default.
pub const DELTA_CHECKPOINT_INTERVAL: u64 = 100;
/// MiB of a compacted file (`output.target_file_mb`): large enough that
/// engines pay little per file, small enough that a scan splits across
/// cores and a failed upload costs little to redo.
pub const TARGET_FILE_MB: usize = 256;
/// Columns that get bloom filters (`output.bloom_filters`): every
/// dataset's lookup columns ([`Dataset::lookup_columns`]), once each.
pub fn bloom_filter_columns() -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in Dataset::ALL.iter().flat_map(|d| d.lookup_columns()) {
        if !out.iter().any(|o| o == c) {
            out.push(c.to_string());
        }
    }
    out
}

// Exports

/// Follow mode: seconds between polls of the head (`poll_interval`).
pub const POLL_INTERVAL_SECS: u64 = 15;
/// Follow mode: seconds between rolls, when newly confirmed blocks become
/// files (`roll_interval`).
pub const ROLL_INTERVAL_SECS: u64 = 300;
/// Blocks per unit of a `chunk_blocks` that is out of range (reported;
/// validation goes on with this).
pub const CHUNK_BLOCKS: u64 = 10_000;
/// The window of a portfolio export that names none: the last 30 days.
pub const PORTFOLIO_WINDOW_SECS: i64 = 30 * 86_400;

// `[source.sim]` and `chainetl sim`

/// Seed of all generated data.
pub const SIM_SEED: u64 = 42;
/// Mean number of events per block.
pub const SIM_EVENTS_PER_BLOCK: u32 = 40;
/// Requests per second before answering 429 (0: no quota).
pub const SIM_QUOTA_RPS: f64 = 0.0;
/// Share of requests answered with a 5xx, reset mid-body or cut short.
pub const SIM_FAULT_RATE: f64 = 0.0;
/// Milliseconds added to every response.
pub const SIM_LATENCY_MS: u64 = 0;
/// Events examined per request when filters are selective.
pub const SIM_SCAN_BUDGET: u64 = 200_000;
/// Blocks reorganised at start (0: none).
pub const SIM_REORG_DEPTH: u64 = 0;

/// The Iceberg table property holding the name mapping (chainetl's to
/// write: readers of files without field ids resolve columns by it).
pub const ICEBERG_NAME_MAPPING: &str = "schema.name-mapping.default";

/// Iceberg's maintenance properties chainetl writes into a table it
/// makes, and honours as it commits (inside a running `--follow`), where
/// `[output.table_properties]` does not set them: a week-long follow at
/// the default poll keeps its current metadata to the last hour's
/// snapshots (about 240, at least 10) and `metadata/` to the last 100
/// metadata files.
pub const ICEBERG_MAINTENANCE: [(&str, &str); 4] = [
    ("history.expire.max-snapshot-age-ms", "3600000"),
    ("history.expire.min-snapshots-to-keep", "10"),
    ("write.metadata.delete-after-commit.enabled", "true"),
    ("write.metadata.previous-versions-max", "100"),
];

/// Whether `value` is one Iceberg property `key` takes, where chainetl
/// reads the key (the others are written as given).
pub fn check_iceberg_property(key: &str, value: &str) -> Result<(), String> {
    match key {
        "history.expire.max-snapshot-age-ms" | "history.expire.min-snapshots-to-keep" | "write.metadata.previous-versions-max" => {
            match value.trim().parse::<u64>() {
                Ok(n) if n >= 1 => Ok(()),
                _ => Err(format!(
                    "`{}`: expected a whole number of at least 1",
                    value.chars().take(40).collect::<String>()
                )),
            }
        }
        "write.metadata.delete-after-commit.enabled" => match value.trim() {
            "true" | "false" => Ok(()),
            _ => Err("expected \"true\" or \"false\"".into()),
        },
        _ => Ok(()),
    }
}
