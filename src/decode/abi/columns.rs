//! Arrow builders of a decoded table, and how each decoded value is
//! written: exact text for wide integers, JSON for arrays and tuples.

use super::{DecodeCounts, EventTable, Kind, Param};
use crate::api::types::Event as Log;
use crate::decode::{Ctx, DecodeError, Decoded, HexCol, check_hex0x};
use crate::spec::HashEncoding;
use crate::spec::U256Columns;
use alloy_dyn_abi::{DecodedEvent, DynSolType, DynSolValue};
use arrow_array::ArrayRef;
use arrow_array::RecordBatch;
use arrow_array::builder::{
    BinaryBuilder, BooleanBuilder, Decimal128Builder, Float64Builder, Int64Builder, StringBuilder, TimestampMicrosecondBuilder,
};
use arrow_schema::ArrowError;
use arrow_schema::{DataType, SchemaRef};
use std::sync::Arc;

/// A log's identity fields, checked.
pub(super) struct Identity<'a> {
    chain: &'static str,
    number: i64,
    ts: i64,
    tx_hash: &'a str,
    tx_index: Option<i64>,
    log_index: i64,
    contract: &'a str,
}

impl<'a> Identity<'a> {
    pub(super) fn log_index(&self) -> i64 {
        self.log_index
    }

    pub(super) fn read(ctx: &Ctx<'_>, row: usize, log: &'a Log<'_>, number: i64, ts: i64) -> Result<Identity<'a>, DecodeError> {
        Ok(Identity {
            chain: ctx.unit.chain.name(),
            number,
            ts,
            tx_hash: ctx.required(row, "transaction_hash", &log.transaction_hash)?,
            tx_index: log.transaction_index.map(|v| v.0),
            log_index: ctx.required(row, "log_index", &log.log_index)?.0,
            contract: ctx.required(row, "contract_address", &log.contract_address)?,
        })
        .and_then(|id| {
            // Checked here so that appending later cannot fail half-way through a row.
            for (field, v) in [("transaction_hash", id.tx_hash), ("contract_address", id.contract)] {
                check_hex0x(v).map_err(|m| ctx.err(row, field, m))?;
            }
            Ok(id)
        })
    }
}

/// One column's builder.
enum Col {
    Text(StringBuilder),
    Hex(HexCol),
    Bool(BooleanBuilder),
    Int(Int64Builder),
    Float(Float64Builder),
    Decimal(Decimal128Builder),
    Bytes(BinaryBuilder),
    Time(TimestampMicrosecondBuilder),
}

impl Col {
    fn finish(&mut self) -> ArrayRef {
        match self {
            Col::Text(b) => Arc::new(b.finish()),
            Col::Hex(b) => b.finish(),
            Col::Bool(b) => Arc::new(b.finish()),
            Col::Int(b) => Arc::new(b.finish()),
            Col::Float(b) => Arc::new(b.finish()),
            Col::Decimal(b) => Arc::new(b.finish()),
            Col::Bytes(b) => Arc::new(b.finish()),
            Col::Time(b) => Arc::new(b.finish()),
        }
    }
}

/// The builders of one table, in schema order.
pub(super) struct TableBuilder {
    cols: Vec<Col>,
    days: Vec<i32>,
    wide: U256Columns,
}

impl TableBuilder {
    pub(super) fn new(table: &EventTable, enc: HashEncoding, wide: U256Columns, cap: usize) -> TableBuilder {
        let mut cols = vec![
            Col::Text(StringBuilder::with_capacity(cap, cap * 8)),
            Col::Int(Int64Builder::with_capacity(cap)),
            Col::Time(TimestampMicrosecondBuilder::with_capacity(cap).with_timezone("UTC")),
            Col::Hex(HexCol::new(enc, cap)),
            Col::Int(Int64Builder::with_capacity(cap)),
            Col::Int(Int64Builder::with_capacity(cap)),
            Col::Hex(HexCol::new(enc, cap)),
        ];
        for p in &table.params {
            match p.kind {
                Kind::Address => cols.push(Col::Hex(HexCol::new(enc, cap))),
                Kind::Bool => cols.push(Col::Bool(BooleanBuilder::with_capacity(cap))),
                Kind::Int64 => cols.push(Col::Int(Int64Builder::with_capacity(cap))),
                Kind::Hex | Kind::Text | Kind::Json(_) => cols.push(Col::Text(StringBuilder::with_capacity(cap, cap * 16))),
                Kind::Wide => {
                    cols.push(Col::Text(StringBuilder::with_capacity(cap, cap * 24)));
                    cols.push(Col::Float(Float64Builder::with_capacity(cap)));
                    if wide.decimal38 {
                        cols.push(Col::Decimal(
                            Decimal128Builder::with_capacity(cap).with_data_type(DataType::Decimal128(38, 0)),
                        ));
                    }
                    if wide.binary {
                        cols.push(Col::Bytes(BinaryBuilder::with_capacity(cap, cap * 32)));
                    }
                }
            }
        }
        TableBuilder {
            cols,
            days: Vec::with_capacity(cap),
            wide,
        }
    }

    /// Appends a decoded log; returns what it counted.
    pub(super) fn append(&mut self, id: &Identity<'_>, params: &[Param], decoded: &DecodedEvent) -> DecodeCounts {
        let mut counts = DecodeCounts::default();
        let mut cols = self.cols.iter_mut();
        let mut next = || cols.next();
        push_identity(&mut next, id);
        self.days.push(id.ts.div_euclid(86_400_000_000) as i32);
        for p in params {
            let list = if p.indexed { &decoded.indexed } else { &decoded.body };
            let Some(v) = list.get(p.pos) else {
                continue;
            };
            push_value(&mut next, &p.kind, v, self.wide, &mut counts);
        }
        counts
    }

    pub(super) fn finish(mut self, schema: SchemaRef) -> Result<Decoded, ArrowError> {
        let columns: Vec<ArrayRef> = self.cols.iter_mut().map(Col::finish).collect();
        let batch = RecordBatch::try_new(schema, columns)?;
        Ok(Decoded {
            batch,
            days: Some(self.days),
            dropped: 0,
        })
    }
}

fn push_identity<'c>(next: &mut impl FnMut() -> Option<&'c mut Col>, id: &Identity<'_>) {
    if let Some(Col::Text(b)) = next() {
        b.append_value(id.chain);
    }
    if let Some(Col::Int(b)) = next() {
        b.append_value(id.number);
    }
    if let Some(Col::Time(b)) = next() {
        b.append_value(id.ts);
    }
    if let Some(Col::Hex(b)) = next() {
        // Checked by `Identity::read`.
        let _ = b.append(Some(id.tx_hash));
    }
    if let Some(Col::Int(b)) = next() {
        b.append_option(id.tx_index);
    }
    if let Some(Col::Int(b)) = next() {
        b.append_value(id.log_index);
    }
    if let Some(Col::Hex(b)) = next() {
        let _ = b.append(Some(id.contract));
    }
}

fn push_value<'c>(
    next: &mut impl FnMut() -> Option<&'c mut Col>,
    kind: &Kind,
    v: &DynSolValue,
    wide: U256Columns,
    counts: &mut DecodeCounts,
) {
    match (kind, next()) {
        (Kind::Address, Some(Col::Hex(b))) => {
            let _ = b.append(Some(&hex0x(&address_bytes(v))));
        }
        (Kind::Bool, Some(Col::Bool(b))) => b.append_value(truth(v)),
        (Kind::Int64, Some(Col::Int(b))) => b.append_value(small_int(v)),
        (Kind::Hex, Some(Col::Text(b))) => b.append_value(hex0x(&word_bytes(v))),
        (Kind::Text, Some(Col::Text(b))) => b.append_value(text(v, counts)),
        (Kind::Json(ty), Some(Col::Text(b))) => {
            let mut s = String::new();
            json(v, ty, counts, &mut s);
            b.append_value(s);
        }
        (Kind::Wide, Some(Col::Text(b))) => {
            b.append_value(exact(v));
            push_wide_extras(next, v, wide, counts);
        }
        _ => {}
    }
}

/// `_f64`, and `_decimal38`/`_binary` where the table has them.
fn push_wide_extras<'c>(next: &mut impl FnMut() -> Option<&'c mut Col>, v: &DynSolValue, wide: U256Columns, counts: &mut DecodeCounts) {
    if let Some(Col::Float(b)) = next() {
        b.append_value(approx(v));
    }
    if wide.decimal38
        && let Some(Col::Decimal(b)) = next()
    {
        match decimal38(v) {
            Some(d) => b.append_value(d),
            None => {
                b.append_null();
                counts.decimal38_nulls += 1;
            }
        }
    }
    if wide.binary
        && let Some(Col::Bytes(b)) = next()
    {
        b.append_value(word_bytes(v));
    }
}

/// An integer value as the nearest Float64 (within a few units in the
/// last place: limbs are summed, not the decimal text parsed).
fn approx(v: &DynSolValue) -> f64 {
    let of = |limbs: &[u64; 4]| {
        limbs
            .iter()
            .rev()
            .fold(0.0f64, |acc, &l| acc * 18_446_744_073_709_551_616.0 + l as f64)
    };
    match v {
        DynSolValue::Uint(u, _) => of(u.as_limbs()),
        DynSolValue::Int(i, _) if i.is_negative() => -of(i.unsigned_abs().as_limbs()),
        DynSolValue::Int(i, _) => of(i.into_raw().as_limbs()),
        _ => f64::NAN,
    }
}

/// A `bool` read as a whole word (checked to be 0 or 1).
fn truth(v: &DynSolValue) -> bool {
    match v {
        DynSolValue::Uint(u, _) => !u.is_zero(),
        DynSolValue::Bool(b) => *b,
        _ => false,
    }
}

/// An `address` read as a whole word (checked to fit 20 bytes): its bytes.
fn address_bytes(v: &DynSolValue) -> Vec<u8> {
    let w = word_bytes(v);
    if w.len() == 32 { w[12..].to_vec() } else { w }
}

/// An integer value as exact decimal text (most values fit 64 bits: those
/// skip the 256-bit division).
fn exact(v: &DynSolValue) -> String {
    match v {
        DynSolValue::Uint(u, _) => match u64::try_from(*u) {
            Ok(x) => itoa::Buffer::new().format(x).to_string(),
            Err(_) => u.to_string(),
        },
        DynSolValue::Int(i, _) => match i64::try_from(*i) {
            Ok(x) => itoa::Buffer::new().format(x).to_string(),
            Err(_) => i.to_string(),
        },
        _ => String::new(),
    }
}

/// An integer that fits Int64 (the kind says it does).
fn small_int(v: &DynSolValue) -> i64 {
    match v {
        DynSolValue::Uint(u, _) => u64::try_from(*u).ok().and_then(|x| i64::try_from(x).ok()).unwrap_or(i64::MAX),
        DynSolValue::Int(i, _) => i64::try_from(*i).unwrap_or(i64::MIN),
        _ => 0,
    }
}

/// A wide integer's exact decimal text (as [`exact`] writes it) as its
/// value: signed where it is negative (a non-negative `intN` has the
/// columns of the same `uintN` value).
pub(crate) fn wide_value(text: &str) -> Option<DynSolValue> {
    if text.starts_with('-') {
        let i = alloy_primitives::I256::from_dec_str(text).ok()?;
        Some(DynSolValue::Int(i, 256))
    } else {
        let u = alloy_primitives::U256::from_str_radix(text, 10).ok()?;
        Some(DynSolValue::Uint(u, 256))
    }
}

/// The value as Decimal128(38,0), if it fits.
pub(crate) fn decimal38(v: &DynSolValue) -> Option<i128> {
    let limit = 10i128.pow(38);
    let x = match v {
        DynSolValue::Uint(u, _) => i128::try_from(*u).ok()?,
        DynSolValue::Int(i, _) => i128::try_from(*i).ok()?,
        _ => return None,
    };
    (x.unsigned_abs() < limit as u128).then_some(x)
}

/// The 32-byte word or bytes of a value: addresses 20 bytes, integers 32
/// bytes big-endian two's complement, fixed bytes their N bytes.
pub(crate) fn word_bytes(v: &DynSolValue) -> Vec<u8> {
    match v {
        DynSolValue::Address(a) => a.as_slice().to_vec(),
        DynSolValue::Uint(u, _) => u.to_be_bytes::<32>().to_vec(),
        DynSolValue::Int(i, _) => i.to_be_bytes::<32>().to_vec(),
        DynSolValue::FixedBytes(w, n) => w[..(*n).min(32)].to_vec(),
        DynSolValue::Bytes(b) => b.clone(),
        DynSolValue::Function(f) => f.as_slice().to_vec(),
        DynSolValue::Bool(b) => vec![u8::from(*b)],
        _ => Vec::new(),
    }
}

fn hex0x(b: &[u8]) -> String {
    let mut s = String::with_capacity(2 + b.len() * 2);
    s.push_str("0x");
    s.push_str(&hex::encode(b));
    s
}

/// A `string` (decoded as bytes): the text, or 0x-hex when not UTF-8.
fn text(v: &DynSolValue, counts: &mut DecodeCounts) -> String {
    let bytes = word_bytes(v);
    match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => {
            counts.invalid_utf8 += 1;
            hex0x(e.as_bytes())
        }
    }
}

/// An array or tuple as JSON text: integers as exact JSON numbers, bytes
/// and addresses 0x-hex, strings as text (0x-hex when not UTF-8, counted).
fn json(v: &DynSolValue, ty: &DynSolType, counts: &mut DecodeCounts, out: &mut String) {
    let list = |items: &[DynSolValue], types: &mut dyn Iterator<Item = &DynSolType>, counts: &mut DecodeCounts, out: &mut String| {
        out.push('[');
        for (k, item) in items.iter().enumerate() {
            if k > 0 {
                out.push(',');
            }
            match types.next() {
                Some(t) => json(item, t, counts, out),
                None => out.push_str("null"),
            }
        }
        out.push(']');
    };
    match (v, ty) {
        (DynSolValue::Array(items) | DynSolValue::FixedArray(items), DynSolType::Array(t) | DynSolType::FixedArray(t, _)) => {
            list(items, &mut std::iter::repeat(&**t), counts, out)
        }
        (DynSolValue::Tuple(items), DynSolType::Tuple(ts)) => list(items, &mut ts.iter(), counts, out),
        (DynSolValue::Bytes(_), DynSolType::String) => out.push_str(&serde_json::Value::String(text(v, counts)).to_string()),
        (_, DynSolType::Bool) => out.push_str(if truth(v) { "true" } else { "false" }),
        (_, DynSolType::Address) => {
            out.push('"');
            out.push_str(&hex0x(&address_bytes(v)));
            out.push('"');
        }
        (DynSolValue::Uint(..) | DynSolValue::Int(..), _) => out.push_str(&exact(v)),
        _ => {
            out.push('"');
            out.push_str(&hex0x(&word_bytes(v)));
            out.push('"');
        }
    }
}
