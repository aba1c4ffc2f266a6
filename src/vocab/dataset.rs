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
