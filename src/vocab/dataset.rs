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
