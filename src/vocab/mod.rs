//! Shared vocabulary: the nouns every stage speaks — chains, datasets,
//! windows and how they are cut into units, EVM values (addresses,
//! hashes, event signatures, uint256).
//! Pure types and parsing; this module imports no other part of the crate,
//! so any stage may use it without creating a cycle.

pub mod chain;
pub mod cuts;
pub mod dataset;
pub mod evm;
pub mod forms;
pub mod window;

pub use chain::Chain;
pub use dataset::Dataset;
