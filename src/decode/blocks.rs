//! `blocks`: one row per block.

use super::columns::{Declaration, Kind, optional, required};
use super::{Ctx, DecodeError, Decoded, HexCol, owns, parse_i64, parse_i128, parse_ts_micros};
use crate::api::types::{Block, Exact};
use crate::spec::HashEncoding;
use crate::vocab::Dataset;
use arrow_array::ArrayRef;
use arrow_array::builder::{Decimal128Builder, Int64Builder, StringBuilder, TimestampMicrosecondBuilder};
use arrow_schema::DataType;
use std::sync::Arc;

/// The `blocks` dataset.
pub const DECLARATION: Declaration = Declaration {
    dataset: Dataset::Blocks,
    columns: &[
        required("chain", Kind::Text),
        optional("base_fee_per_gas", Kind::Int64),
        optional("difficulty", Kind::Decimal),
        optional("extra_data", Kind::Hex),
        optional("gas_limit", Kind::Int64),
        optional("gas_used", Kind::Int64),
        required("hash", Kind::Hex),
        optional("logs_bloom", Kind::Hex),
        optional("miner", Kind::Hex),
        optional("nonce", Kind::Hex),
        required("number", Kind::Int64),
        optional("parent_hash", Kind::Hex),
        optional("receipt_root", Kind::Hex),
        optional("sha3_uncles", Kind::Hex),
        optional("size", Kind::Int64),
        optional("state_root", Kind::Hex),
        required("timestamp", Kind::Timestamp),
        optional("total_difficulty", Kind::Decimal),
        optional("transaction_count", Kind::Int64),
        optional("transactions_root", Kind::Hex),
        optional("withdrawals_root", Kind::Hex),
    ],
    key: &["number"],
    partition_by: &["chain", "date"],
    lookups: Dataset::Blocks.lookup_columns(),
    day: Some("timestamp"),
    dictionary: &["chain", "miner"],
};

/// The hash and hex columns, in the order [`Columns::append`] fills them.
const HEX_NAMES: [&str; 11] = [
    "extra_data",
    "hash",
    "logs_bloom",
    "miner",
    "nonce",
    "parent_hash",
    "receipt_root",
    "sha3_uncles",
    "state_root",
    "transactions_root",
    "withdrawals_root",
];

/// Decodes a page of blocks.
pub fn decode(ctx: Ctx<'_>, blocks: &[Block]) -> Result<Decoded, DecodeError> {
    let mut cols = Columns::new(blocks.len(), ctx.enc);
    let mut days = Vec::with_capacity(blocks.len());
    let mut dropped = 0;
    for (row, b) in blocks.iter().enumerate() {
        let num = ctx.required(row, "number", &b.number)?.0;
        let ts = parse_ts_micros(ctx.required(row, "timestamp", &b.timestamp)?).map_err(|m| ctx.err(row, "timestamp", m))?;
        if !owns(&ctx.unit.range, num, ts) {
            dropped += 1;
            continue;
        }
        ctx.required(row, "hash", &b.hash)?;
        cols.append(&ctx, row, b, num, ts)?;
        days.push(ts.div_euclid(86_400_000_000) as i32);
    }
    let batch = DECLARATION.batch(ctx.enc, cols.finish()).map_err(|e| ctx.err(0, "number", e))?;
    Ok(Decoded {
        batch,
        days: Some(days),
        dropped,
    })
}

/// The builders of a page's columns.
struct Columns {
    chain: StringBuilder,
    base_fee: Int64Builder,
    difficulty: Decimal128Builder,
    total_difficulty: Decimal128Builder,
    gas_limit: Int64Builder,
    gas_used: Int64Builder,
    number: Int64Builder,
    size: Int64Builder,
    tx_count: Int64Builder,
    timestamp: TimestampMicrosecondBuilder,
    /// In [`HEX_NAMES`] order.
    hexes: [HexCol; 11],
}

impl Columns {
    fn new(n: usize, enc: HashEncoding) -> Columns {
        let decimal = || Decimal128Builder::with_capacity(n).with_data_type(DataType::Decimal128(38, 0));
        Columns {
            chain: StringBuilder::with_capacity(n, n * 8),
            base_fee: Int64Builder::with_capacity(n),
            difficulty: decimal(),
            total_difficulty: decimal(),
            gas_limit: Int64Builder::with_capacity(n),
            gas_used: Int64Builder::with_capacity(n),
            number: Int64Builder::with_capacity(n),
            size: Int64Builder::with_capacity(n),
            tx_count: Int64Builder::with_capacity(n),
            timestamp: TimestampMicrosecondBuilder::with_capacity(n).with_timezone("UTC"),
            hexes: std::array::from_fn(|_| HexCol::new(enc, n)),
        }
    }

    /// Appends block `b` (row `row` of the page), whose number and time are parsed.
    fn append(&mut self, ctx: &Ctx<'_>, row: usize, b: &Block, num: i64, ts: i64) -> Result<(), DecodeError> {
        self.chain.append_value(ctx.unit.chain.name());
        self.number.append_value(num);
        self.timestamp.append_value(ts);
        let int = |field: &'static str, v: &Option<Exact>, out: &mut Int64Builder| -> Result<(), DecodeError> {
            match v {
                None => out.append_null(),
                Some(x) => out.append_value(parse_i64(&x.0).map_err(|m| ctx.err(row, field, m))?),
            }
            Ok(())
        };
        let dec = |field: &'static str, v: &Option<Exact>, out: &mut Decimal128Builder| -> Result<(), DecodeError> {
            match v {
                None => out.append_null(),
                Some(x) => out.append_value(parse_i128(&x.0).map_err(|m| ctx.err(row, field, m))?),
            }
            Ok(())
        };
        int("base_fee_per_gas", &b.base_fee_per_gas, &mut self.base_fee)?;
        int("gas_limit", &b.gas_limit, &mut self.gas_limit)?;
        int("gas_used", &b.gas_used, &mut self.gas_used)?;
        dec("difficulty", &b.difficulty, &mut self.difficulty)?;
        dec("total_difficulty", &b.total_difficulty, &mut self.total_difficulty)?;
        self.size.append_option(b.size.map(|v| v.0));
        self.tx_count.append_option(b.transaction_count.map(|v| v.0));
        let values = [
            &b.extra_data,
            &b.hash,
            &b.logs_bloom,
            &b.miner,
            &b.nonce,
            &b.parent_hash,
            &b.receipt_root,
            &b.sha3_uncles,
            &b.state_root,
            &b.transactions_root,
            &b.withdrawals_root,
        ];
        for ((col, v), name) in self.hexes.iter_mut().zip(values).zip(HEX_NAMES) {
            col.append(v.as_deref()).map_err(|m| ctx.err(row, name, m))?;
        }
        Ok(())
    }

    /// The columns, by name.
    fn finish(mut self) -> Vec<(&'static str, ArrayRef)> {
        let mut columns: Vec<(&'static str, ArrayRef)> = vec![
            ("chain", Arc::new(self.chain.finish())),
            ("base_fee_per_gas", Arc::new(self.base_fee.finish())),
            ("difficulty", Arc::new(self.difficulty.finish())),
            ("gas_limit", Arc::new(self.gas_limit.finish())),
            ("gas_used", Arc::new(self.gas_used.finish())),
            ("number", Arc::new(self.number.finish())),
            ("size", Arc::new(self.size.finish())),
            ("timestamp", Arc::new(self.timestamp.finish())),
            ("total_difficulty", Arc::new(self.total_difficulty.finish())),
            ("transaction_count", Arc::new(self.tx_count.finish())),
        ];
        columns.extend(HEX_NAMES.into_iter().zip(self.hexes.iter_mut().map(|c| c.finish())));
        columns
    }
}
