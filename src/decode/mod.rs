//! JSON pages → Arrow `RecordBatch`es with each dataset's schema, one file
//! per dataset. Rows outside the unit's range are dropped here (the service
//! does not say whether interval ends are inclusive, so ownership cannot
//! depend on it). Big integers stay exact; a missing required field or a
//! malformed value is an error naming chain, unit, page, row and field —
//! never a silent null.

pub mod abi;
pub mod blocks;
pub mod columns;
pub mod declared;
pub mod events;
mod hex;
pub mod portfolio;
pub mod tokens;
mod values;

pub use columns::{Column, Declaration, Kind, type_name};
pub use declared::{DECLARATIONS, day_column, declaration, natural_key, partition_keys, schema, schema_json};
pub use hex::topic_hex;
pub(crate) use hex::{HexCol, HexListCol, check_hex0x};
pub(crate) use values::{parse_i64, parse_i128, parse_ts_micros};

use crate::fetch::Records;
use crate::plan::{Unit, UnitRange};
use crate::spec::HashEncoding;
use crate::vocab::Dataset;
use crate::vocab::chain::Chain;
use arrow_array::RecordBatch;

/// A decoded page: rows and, for date-partitioned datasets, each row's day
/// (days since 1970-01-01, UTC).
#[derive(Debug)]
pub struct Decoded {
    /// The rows.
    pub batch: RecordBatch,
    /// Day of each row, for the `date` partition.
    pub days: Option<Vec<i32>>,
    /// Rows the page held that belong to another unit.
    pub dropped: usize,
}

/// A bad value in a response.
#[derive(Debug, thiserror::Error)]
#[error("{chain} {dataset} unit {unit}, page {page}, row {row}: field `{field}`: {message}")]
pub struct DecodeError {
    /// Chain.
    pub chain: Chain,
    /// Dataset.
    pub dataset: Dataset,
    /// Unit id.
    pub unit: String,
    /// Page number within the unit (1-based, this run).
    pub page: u64,
    /// Row within the page (0-based).
    pub row: usize,
    /// Field name.
    pub field: &'static str,
    /// What is wrong.
    pub message: String,
}

/// Where a page comes from, for errors and ownership.
#[derive(Debug, Clone, Copy)]
pub struct Ctx<'a> {
    /// The unit being fetched.
    pub unit: &'a Unit,
    /// Page number within the unit.
    pub page: u64,
    /// Hash/address encoding.
    pub enc: HashEncoding,
}

impl Ctx<'_> {
    fn err(&self, row: usize, field: &'static str, message: impl Into<String>) -> DecodeError {
        DecodeError {
            chain: self.unit.chain,
            dataset: self.unit.dataset,
            unit: self.unit.id.clone(),
            page: self.page,
            row,
            field,
            message: message.into(),
        }
    }

    fn required<'v, T>(&self, row: usize, field: &'static str, v: &'v Option<T>) -> Result<&'v T, DecodeError> {
        v.as_ref().ok_or_else(|| self.err(row, field, "missing (required)"))
    }
}

/// Decodes one page of any dataset: the one place where records become rows.
pub fn page(ctx: Ctx<'_>, records: Records<'_>) -> Result<Decoded, DecodeError> {
    match records {
        Records::Blocks(b) => blocks::decode(ctx, b),
        Records::Events(e) => events::decode(ctx, e),
        Records::Portfolio(p) => portfolio::decode(ctx, p),
        Records::Tokens(t) => tokens::decode(ctx, t),
    }
}

/// Whether a unit owns a block (by number or by its time).
pub(crate) fn owns(range: &UnitRange, number: i64, ts_micros: i64) -> bool {
    let secs = ts_micros.div_euclid(1_000_000);
    match range {
        UnitRange::Blocks { start, end } => number >= 0 && (*start..*end).contains(&(number as u64)),
        UnitRange::Time { start, end } => (*start..*end).contains(&secs),
        UnitRange::Numbers { numbers } => number >= 0 && numbers.binary_search(&(number as u64)).is_ok(),
        UnitRange::Wallet { .. } | UnitRange::Tokens { .. } => false,
    }
}
