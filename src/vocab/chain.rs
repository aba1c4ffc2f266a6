//! The seven chains the service knows, shared by every stage.

use std::fmt;
use std::str::FromStr;

/// A chain served under `/v2/{chain_name}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Chain {
    /// Ethereum mainnet.
    Ethereum,
    /// ApeChain.
    Apechain,
    /// Arbitrum One.
    Arbitrum,
    /// Avalanche C-chain.
    Avalanche,
    /// Base.
    Base,
    /// BNB Smart Chain.
    Bsc,
    /// Polygon PoS.
    Polygon,
}

impl Chain {
    /// Every chain, in the order the service documents them.
    pub const ALL: [Chain; 7] = [
        Chain::Ethereum,
        Chain::Apechain,
        Chain::Arbitrum,
        Chain::Avalanche,
        Chain::Base,
        Chain::Bsc,
        Chain::Polygon,
    ];

    /// The path name of the chain, as the service spells it.
    pub fn name(self) -> &'static str {
        match self {
            Chain::Ethereum => "ethereum",
            Chain::Apechain => "apechain",
            Chain::Arbitrum => "arbitrum",
            Chain::Avalanche => "avalanche",
            Chain::Base => "base",
            Chain::Bsc => "bsc",
            Chain::Polygon => "polygon",
        }
    }

    /// A small stable index, used to derive per-chain data.
    pub fn index(self) -> u64 {
        Chain::ALL.iter().position(|c| *c == self).unwrap_or(0) as u64
    }

    /// Typical milliseconds between blocks, for estimates (and the simulator).
    pub fn block_ms(self) -> i64 {
        match self {
            Chain::Ethereum => 12_000,
            Chain::Bsc => 3_000,
            Chain::Arbitrum => 250,
            _ => 2_000,
        }
    }

    /// Blocks behind the head before a block counts as final, for incremental
    /// and follow exports: about two epochs on Ethereum, minutes of blocks
    /// on the L2s (whose batches settle later), and each sidechain's own
    /// finality depth.
    pub fn default_confirmations(self) -> u64 {
        match self {
            Chain::Ethereum => 64,
            Chain::Bsc => 50,
            Chain::Polygon => 256,
            Chain::Avalanche => 12,
            Chain::Base => 300,
            Chain::Apechain => 300,
            Chain::Arbitrum => 1_200,
        }
    }

    /// The list of chain names, for error messages.
    pub fn names() -> String {
        Chain::ALL.iter().map(|c| c.name()).collect::<Vec<_>>().join(", ")
    }
}

impl serde::Serialize for Chain {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for Chain {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

impl fmt::Display for Chain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Chain {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Chain::ALL
            .iter()
            .copied()
            .find(|c| c.name() == s)
            .ok_or_else(|| format!("unknown chain `{s}` (expected one of: {})", Chain::names()))
    }
}
