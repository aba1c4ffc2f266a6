//! The four datasets the service serves, named as in specs, paths and the CLI.

use serde::Serialize;
use std::fmt;

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

    /// Columns people look its rows up by. The one declaration of them:
    /// they get Parquet bloom filters unless `output.bloom_filters` names
    /// others (the spec's default is every dataset's), and the dataset's
    /// column declaration lists them (`decode::Declaration::lookups`).
    pub const fn lookup_columns(self) -> &'static [&'static str] {
        match self {
            Dataset::Blocks | Dataset::Tokens => &[],
            Dataset::Events => &["transaction_hash", "contract_address", "topic0"],
            Dataset::Portfolio => &["wallet_address"],
        }
    }

    /// Its columns, in file order: what `columns` and `exclude_columns`
    /// may name. The names of `crate::decode`'s declaration of the
    /// dataset, which a test holds to this list (the spec is checked
    /// before anything is decoded, and knows no more than this module).
    pub const fn columns(self) -> &'static [&'static str] {
        match self {
            Dataset::Blocks => &[
                "chain",
                "base_fee_per_gas",
                "difficulty",
                "extra_data",
                "gas_limit",
                "gas_used",
                "hash",
                "logs_bloom",
                "miner",
                "nonce",
                "number",
                "parent_hash",
                "receipt_root",
                "sha3_uncles",
                "size",
                "state_root",
                "timestamp",
                "total_difficulty",
                "transaction_count",
                "transactions_root",
                "withdrawals_root",
            ],
            Dataset::Events => &[
                "chain",
                "block_number",
                "block_timestamp",
                "contract_address",
                "data",
                "log_index",
                "topics",
                "topic0",
                "topic1",
                "topic2",
                "topic3",
                "transaction_hash",
                "transaction_index",
            ],
            Dataset::Portfolio => &[
                "chain",
                "wallet_address",
                "date",
                "balance",
                "balance_raw",
                "token_address",
                "token_decimals",
                "token_name",
                "token_standard",
                "token_symbol",
            ],
            Dataset::Tokens => &["chain", "address", "decimals", "name", "standard", "symbol"],
        }
    }

    /// The columns every selection of its columns keeps: its natural key
    /// (what its files are sorted by and no two rows share), its partition
    /// keys, and the column its `date` partition is computed from. Held to
    /// `crate::decode`'s declaration by a test.
    pub const fn kept_columns(self) -> &'static [&'static str] {
        match self {
            Dataset::Blocks => &["chain", "number", "timestamp"],
            Dataset::Events => &["chain", "block_number", "block_timestamp", "log_index"],
            Dataset::Portfolio => &["chain", "wallet_address", "date", "token_address"],
            Dataset::Tokens => &["chain", "address"],
        }
    }

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
