//! Logs read back from a stored raw `events` table, to decode them with no
//! request (a job's derived tables: `crate::job`'s relayout).
//!
//! Each row becomes the log as the service sent it, in the form the raw
//! table keeps it: hashes, addresses, topics and data as 0x-hex (the bytes
//! of a binary-encoded table written as hex again), the block time as
//! RFC 3339 text with its microseconds. [`super::LogDecoder::decode`] then
//! reads them exactly as it reads a page, so a decoded table made from
//! stored logs holds what a decoding export of those logs writes.

use crate::api::types::{Event as Log, ExactRef, Int, Text};
use arrow_array::{Array, BinaryArray, Int64Array, ListArray, RecordBatch, StringArray, TimestampMicrosecondArray};
use std::borrow::Cow;

/// Stand-ins for identity values a raw table left out (see [`stored_logs`]).
const ZERO_HASH: &str = "0x0000000000000000000000000000000000000000000000000000000000000000";
const ZERO_ADDRESS: &str = "0x0000000000000000000000000000000000000000";

/// One column's value at a row as 0x-hex or text, whatever the encoding.
enum TextCol<'a> {
    Str(&'a StringArray),
    Bin(&'a BinaryArray),
    /// A column the table does not hold: one value every row.
    Absent(&'static str),
}

impl TextCol<'_> {
    /// Column `name`, or `stand_in` at every row where the table has none.
    fn or_stand_in<'a>(batch: &'a RecordBatch, name: &str, stand_in: &'static str) -> Result<TextCol<'a>, String> {
        match batch.column_by_name(name) {
            Some(_) => TextCol::of(batch, name),
            None => Ok(TextCol::Absent(stand_in)),
        }
    }

    fn of<'a>(batch: &'a RecordBatch, name: &str) -> Result<TextCol<'a>, String> {
        let col = batch
            .column_by_name(name)
            .ok_or_else(|| format!("the raw table has no column {name}"))?;
        TextCol::from_array(col.as_ref()).ok_or_else(|| format!("column {name} is {}, not text or bytes", col.data_type()))
    }

    fn from_array(col: &dyn Array) -> Option<TextCol<'_>> {
        if let Some(s) = col.as_any().downcast_ref::<StringArray>() {
            return Some(TextCol::Str(s));
        }
        col.as_any().downcast_ref::<BinaryArray>().map(TextCol::Bin)
    }

    fn get(&self, row: usize) -> Option<String> {
        match self {
            TextCol::Str(s) => s.is_valid(row).then(|| s.value(row).to_string()),
            TextCol::Bin(b) => b.is_valid(row).then(|| format!("0x{}", hex::encode(b.value(row)))),
            TextCol::Absent(v) => Some(v.to_string()),
        }
    }
}

fn column<'a, T: 'static>(batch: &'a RecordBatch, name: &str) -> Result<&'a T, String> {
    let col = batch
        .column_by_name(name)
        .ok_or_else(|| format!("the raw table has no column {name}"))?;
    col.as_any()
        .downcast_ref::<T>()
        .ok_or_else(|| format!("column {name} is {}, not the raw table's type", col.data_type()))
}

/// The block time as the service writes it (`2024-01-02T03:04:05Z`, with
/// `.ffffff` where it has microseconds).
fn timestamp_text(micros: i64) -> String {
    let secs = micros.div_euclid(1_000_000);
    let sub = micros.rem_euclid(1_000_000);
    let t = chrono::DateTime::from_timestamp(secs, (sub * 1000) as u32).unwrap_or_default();
    if sub == 0 {
        t.format("%Y-%m-%dT%H:%M:%SZ").to_string()
    } else {
        t.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
    }
}

/// The logs of `batch`, rows of a raw `events` table, in order. Decoding
/// needs `block_number`, `block_timestamp`, `log_index`, `topics` and
/// `data`; the identity's other columns, where the table left them out
/// (`exclude_columns`), get stand-ins that the decoded tables, leaving out
/// the same columns, never write.
pub fn stored_logs(batch: &RecordBatch) -> Result<Vec<Log<'static>>, String> {
    let numbers = column::<Int64Array>(batch, "block_number")?;
    let times = column::<TimestampMicrosecondArray>(batch, "block_timestamp")?;
    let log_index = column::<Int64Array>(batch, "log_index")?;
    // A column the raw table left out is left out of the decoded tables
    // too (one selection an export): its log gets a stand-in no file holds.
    let tx_index = match batch.column_by_name("transaction_index") {
        Some(_) => Some(column::<Int64Array>(batch, "transaction_index")?),
        None => None,
    };
    let topics = column::<ListArray>(batch, "topics")?;
    let items = TextCol::from_array(topics.values().as_ref())
        .ok_or_else(|| format!("column topics holds {}, not text or bytes", topics.values().data_type()))?;
    let contract = TextCol::or_stand_in(batch, "contract_address", ZERO_ADDRESS)?;
    let data = TextCol::of(batch, "data")?;
    let tx_hash = TextCol::or_stand_in(batch, "transaction_hash", ZERO_HASH)?;
    let text = |v: Option<String>| v.map(|s| Text(Cow::Owned(s)));
    let int = |a: &Int64Array, row: usize| a.is_valid(row).then(|| Int(a.value(row)));
    let offsets = topics.value_offsets();
    let mut out = Vec::with_capacity(batch.num_rows());
    for row in 0..batch.num_rows() {
        let list = topics.is_valid(row).then(|| {
            (offsets[row] as usize..offsets[row + 1] as usize)
                .map(|i| items.get(i).map(|t| ExactRef(Cow::Owned(t))))
                .collect()
        });
        out.push(Log {
            block_number: int(numbers, row),
            block_timestamp: times.is_valid(row).then(|| Text(Cow::Owned(timestamp_text(times.value(row))))),
            contract_address: text(contract.get(row)),
            data: text(data.get(row)),
            log_index: int(log_index, row),
            topics: list,
            transaction_hash: text(tx_hash.get(row)),
            transaction_index: tx_index.and_then(|a| int(a, row)),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_time_reads_back_as_the_service_writes_it() {
        assert_eq!(timestamp_text(1_704_164_645_000_000), "2024-01-02T03:04:05Z");
        assert_eq!(timestamp_text(1_704_164_645_000_123), "2024-01-02T03:04:05.000123Z");
        for micros in [0, 1_704_164_645_000_000, 1_704_164_645_999_999] {
            assert_eq!(crate::decode::parse_ts_micros(&timestamp_text(micros)), Ok(micros));
        }
    }
}
