//! `blocks`: one row per block.

use super::{Ctx, DecodeError, Decoded, HexCol, owns, parse_i64, parse_i128, parse_ts_micros, schema};
use crate::api::types::{Block, Exact};
use crate::spec::Dataset;
use arrow::array::{ArrayRef, Decimal128Builder, Int64Builder, StringBuilder, TimestampMicrosecondBuilder};
use arrow::datatypes::DataType;
use arrow::record_batch::RecordBatch;
use std::sync::Arc;

/// Decodes a page of blocks.
pub fn decode(ctx: Ctx<'_>, blocks: &[Block]) -> Result<Decoded, DecodeError> {
    let n = blocks.len();
    let enc = ctx.enc;
    let mut chain = StringBuilder::with_capacity(n, n * 8);
    let mut base_fee = Int64Builder::with_capacity(n);
    let mut difficulty = Decimal128Builder::with_capacity(n).with_data_type(DataType::Decimal128(38, 0));
    let mut total_difficulty = Decimal128Builder::with_capacity(n).with_data_type(DataType::Decimal128(38, 0));
    let mut gas_limit = Int64Builder::with_capacity(n);
    let mut gas_used = Int64Builder::with_capacity(n);
    let mut number = Int64Builder::with_capacity(n);
    let mut size = Int64Builder::with_capacity(n);
    let mut tx_count = Int64Builder::with_capacity(n);
    let mut timestamp = TimestampMicrosecondBuilder::with_capacity(n).with_timezone("UTC");
    let names = [
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
    let mut hexes: Vec<HexCol> = names.iter().map(|_| HexCol::new(enc, n)).collect();
    let mut days = Vec::with_capacity(n);
    let mut dropped = 0;
    for (row, b) in blocks.iter().enumerate() {
        let num = ctx.required(row, "number", &b.number)?.0;
        let ts = parse_ts_micros(ctx.required(row, "timestamp", &b.timestamp)?).map_err(|m| ctx.err(row, "timestamp", m))?;
        if !owns(&ctx.unit.range, num, ts) {
            dropped += 1;
            continue;
        }
        ctx.required(row, "hash", &b.hash)?;
        chain.append_value(ctx.unit.chain.name());
        number.append_value(num);
        timestamp.append_value(ts);
        days.push(ts.div_euclid(86_400_000_000) as i32);
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
        int("base_fee_per_gas", &b.base_fee_per_gas, &mut base_fee)?;
        int("gas_limit", &b.gas_limit, &mut gas_limit)?;
        int("gas_used", &b.gas_used, &mut gas_used)?;
        dec("difficulty", &b.difficulty, &mut difficulty)?;
        dec("total_difficulty", &b.total_difficulty, &mut total_difficulty)?;
        size.append_option(b.size.map(|v| v.0));
        tx_count.append_option(b.transaction_count.map(|v| v.0));
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
        for ((col, v), name) in hexes.iter_mut().zip(values).zip(names) {
            col.append(v.as_deref()).map_err(|m| ctx.err(row, name, m))?;
        }
    }
    let decimal = |b: &mut Decimal128Builder| -> ArrayRef { Arc::new(b.finish()) };
    let mut h = hexes.iter_mut().map(|c| c.finish());
    let mut next = || h.next().unwrap_or_else(|| Arc::new(StringBuilder::new().finish()));
    let (extra, hash, bloom, miner, nonce, parent, receipt, uncles, state, txroot, wroot) = (
        next(),
        next(),
        next(),
        next(),
        next(),
        next(),
        next(),
        next(),
        next(),
        next(),
        next(),
    );
    let columns: Vec<ArrayRef> = vec![
        Arc::new(chain.finish()),
        Arc::new(base_fee.finish()),
        decimal(&mut difficulty),
        extra,
        Arc::new(gas_limit.finish()),
        Arc::new(gas_used.finish()),
        hash,
        bloom,
        miner,
        nonce,
        Arc::new(number.finish()),
        parent,
        receipt,
        uncles,
        Arc::new(size.finish()),
        state,
        Arc::new(timestamp.finish()),
        decimal(&mut total_difficulty),
        Arc::new(tx_count.finish()),
        txroot,
        wroot,
    ];
    let batch = RecordBatch::try_new(schema(Dataset::Blocks, enc), columns).map_err(|e| ctx.err(0, "number", e.to_string()))?;
    Ok(Decoded {
        batch,
        days: Some(days),
        dropped,
    })
}
