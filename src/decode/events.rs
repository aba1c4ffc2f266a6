//! `events`: one row per log, with `topics` and flattened `topic0..topic3`.

use super::columns::{Declaration, Kind, optional, required};
use super::{Ctx, DecodeError, Decoded, HexCol, HexListCol, owns, parse_ts_micros, topic_hex};
use crate::api::types::Event;
use crate::vocab::Dataset;
use arrow_array::ArrayRef;
use arrow_array::builder::{Int64Builder, StringBuilder, TimestampMicrosecondBuilder};
use std::borrow::Cow;
use std::sync::Arc;

/// The `events` dataset. Decoded event tables share its key and lookups.
pub const DECLARATION: Declaration = Declaration {
    dataset: Dataset::Events,
    columns: &[
        required("chain", Kind::Text),
        required("block_number", Kind::Int64),
        required("block_timestamp", Kind::Timestamp),
        required("contract_address", Kind::Hex),
        optional("data", Kind::Hex),
        required("log_index", Kind::Int64),
        required("topics", Kind::HexList),
        optional("topic0", Kind::Hex),
        optional("topic1", Kind::Hex),
        optional("topic2", Kind::Hex),
        optional("topic3", Kind::Hex),
        required("transaction_hash", Kind::Hex),
        optional("transaction_index", Kind::Int64),
    ],
    key: &["block_number", "log_index"],
    partition_by: &["chain", "date"],
    lookups: Dataset::Events.lookup_columns(),
    day: Some("block_timestamp"),
    dictionary: &["chain", "contract_address", "topic0"],
};

/// The flattened topic columns, in order.
const TOPIC_NAMES: [&str; 4] = ["topic0", "topic1", "topic2", "topic3"];

/// Decodes a page of events.
pub fn decode(ctx: Ctx<'_>, events: &[Event<'_>]) -> Result<Decoded, DecodeError> {
    let n = events.len();
    let enc = ctx.enc;
    let mut chain = StringBuilder::with_capacity(n, n * 8);
    let mut block_number = Int64Builder::with_capacity(n);
    let mut block_ts = TimestampMicrosecondBuilder::with_capacity(n).with_timezone("UTC");
    let mut contract = HexCol::new(enc, n);
    let data_bytes = events.iter().map(|e| e.data.as_ref().map_or(0, |d| d.len())).sum();
    let topic_count = events.iter().map(|e| e.topics.as_ref().map_or(0, Vec::len)).sum();
    let mut data = HexCol::with_text_bytes(enc, n, data_bytes);
    let mut log_index = Int64Builder::with_capacity(n);
    let mut topics = HexListCol::with_capacity(enc, n, topic_count);
    let mut flat: Vec<HexCol> = (0..4).map(|_| HexCol::new(enc, n)).collect();
    let mut tx_hash = HexCol::new(enc, n);
    let mut tx_index = Int64Builder::with_capacity(n);
    let mut days = Vec::with_capacity(n);
    let mut dropped = 0;
    let mut list: Vec<Cow<'_, str>> = Vec::with_capacity(4);
    for (row, e) in events.iter().enumerate() {
        let num = ctx.required(row, "block_number", &e.block_number)?.0;
        let ts =
            parse_ts_micros(ctx.required(row, "block_timestamp", &e.block_timestamp)?).map_err(|m| ctx.err(row, "block_timestamp", m))?;
        if !owns(&ctx.unit.range, num, ts) {
            dropped += 1;
            continue;
        }
        chain.append_value(ctx.unit.chain.name());
        block_number.append_value(num);
        block_ts.append_value(ts);
        days.push(ts.div_euclid(86_400_000_000) as i32);
        contract
            .append(Some(ctx.required(row, "contract_address", &e.contract_address)?))
            .map_err(|m| ctx.err(row, "contract_address", m))?;
        data.append(e.data.as_deref()).map_err(|m| ctx.err(row, "data", m))?;
        log_index.append_value(ctx.required(row, "log_index", &e.log_index)?.0);
        list.clear();
        for t in e.topics.iter().flatten() {
            let t = t.as_ref().ok_or_else(|| ctx.err(row, "topics", "null topic"))?;
            list.push(topic_hex(&t.0).map_err(|m| ctx.err(row, "topics", m))?);
        }
        topics.append(&list).map_err(|m| ctx.err(row, "topics", m))?;
        for (k, col) in flat.iter_mut().enumerate() {
            col.append_topic(list.get(k).map(|t| &**t)).map_err(|m| ctx.err(row, "topics", m))?;
        }
        tx_hash
            .append(Some(ctx.required(row, "transaction_hash", &e.transaction_hash)?))
            .map_err(|m| ctx.err(row, "transaction_hash", m))?;
        tx_index.append_option(e.transaction_index.map(|v| v.0));
    }
    let mut columns: Vec<(&'static str, ArrayRef)> = vec![
        ("chain", Arc::new(chain.finish())),
        ("block_number", Arc::new(block_number.finish())),
        ("block_timestamp", Arc::new(block_ts.finish())),
        ("contract_address", contract.finish()),
        ("data", data.finish()),
        ("log_index", Arc::new(log_index.finish())),
        ("topics", topics.finish()),
        ("transaction_hash", tx_hash.finish()),
        ("transaction_index", Arc::new(tx_index.finish())),
    ];
    columns.extend(TOPIC_NAMES.into_iter().zip(flat.iter_mut().map(|c| c.finish())));
    let batch = DECLARATION.batch(enc, columns).map_err(|e| ctx.err(0, "topics", e))?;
    Ok(Decoded {
        batch,
        days: Some(days),
        dropped,
    })
}
