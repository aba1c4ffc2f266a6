//! Segments: the slices of aligned and incremental exports, each fixed by
//! one run and recorded before its units start.

use super::unit::{Unit, UnitRange};
use crate::vocab::chain::Chain;
use crate::vocab::window::Resolved;
use serde::{Deserialize, Serialize};

/// A slice of an aligned or incremental export fixed by one run (a UTC
/// period, or the blocks from the high-water mark to the confirmed head),
/// recorded before any of its units start so that a resumed run plans
/// exactly the same units.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Segment {
    /// Index of its export.
    pub export: usize,
    /// Incremental segments belong to one chain; aligned periods to all the export's chains.
    pub chain: Option<Chain>,
    /// The range.
    pub window: Resolved,
}

impl Segment {
    /// Deterministic id, safe in object names.
    pub fn id(&self) -> String {
        let w = match self.window {
            Resolved::Blocks { first, last } => format!("b{first}-{last}"),
            Resolved::Time { start, end } => format!("t{start}-{end}"),
        };
        match self.chain {
            Some(c) => format!("e{}-{c}-{w}", self.export),
            None => format!("e{}-{w}", self.export),
        }
    }

    /// Whether `unit` is one of this segment's units.
    pub fn owns(&self, unit: &Unit) -> bool {
        unit.export == self.export
            && self.chain.is_none_or(|c| c == unit.chain)
            && match (&unit.range, self.window) {
                (UnitRange::Blocks { start, end }, Resolved::Blocks { first, last }) => *start >= first && *end <= last + 1,
                (UnitRange::Time { start, end }, Resolved::Time { start: s, end: e }) => *start >= s && *end <= e,
                (UnitRange::Wallet { start, end, .. }, Resolved::Time { start: s, end: e }) => *start == s && *end == e,
                _ => false,
            }
    }
}
