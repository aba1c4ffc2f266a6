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

/// One column's value at a row as 0x-hex or text, whatever the encoding.
enum TextCol<'a> {
    Str(&'a StringArray),
    Bin(&'a BinaryArray),
}

impl TextCol<'_> {
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

/// The logs of `batch`, rows of a raw `events` table (every column of its
/// schema), in order.
pub fn stored_logs(batch: &RecordBatch) -> Result<Vec<Log<'static>>, String> {
    let numbers = column::<Int64Array>(batch, "block_number")?;
    let times = column::<TimestampMicrosecondArray>(batch, "block_timestamp")?;
    let log_index = column::<Int64Array>(batch, "log_index")?;
    let tx_index = column::<Int64Array>(batch, "transaction_index")?;
    let topics = column::<ListArray>(batch, "topics")?;
    let items = TextCol::from_array(topics.values().as_ref())
        .ok_or_else(|| format!("column topics holds {}, not text or bytes", topics.values().data_type()))?;
    let contract = TextCol::of(batch, "contract_address")?;
    let data = TextCol::of(batch, "data")?;
    let tx_hash = TextCol::of(batch, "transaction_hash")?;
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
            transaction_index: int(tx_index, row),
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
