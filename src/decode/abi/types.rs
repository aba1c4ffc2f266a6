//! How an event's parameters become columns: each type's kind and the
//! type it is decoded as, the range checks alloy leaves out, column names,
//! and the table's Arrow schema.

use super::{Kind, Param};
use crate::spec::decoding::wide_integer;
use crate::spec::{HashEncoding, U256Columns};
use alloy_dyn_abi::{DynSolType, DynSolValue};
use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};
use std::sync::Arc;

/// An indexed parameter: its kind and how its topic decodes. A dynamic
/// value is in the log only as its hash.
pub(super) fn indexed_kind(ty: &DynSolType) -> (Kind, DynSolType) {
    match ty {
        DynSolType::String | DynSolType::Bytes | DynSolType::Array(_) | DynSolType::FixedArray(..) | DynSolType::Tuple(_) => {
            (Kind::Hex, ty.clone())
        }
        _ => body_kind(ty),
    }
}

/// A data parameter: its kind and the type it is decoded as (see
/// [`decode_type`]).
pub(super) fn body_kind(ty: &DynSolType) -> (Kind, DynSolType) {
    let kind = match ty {
        DynSolType::Address => Kind::Address,
        DynSolType::Bool => Kind::Bool,
        DynSolType::Uint(_) | DynSolType::Int(_) if wide_integer(ty) => Kind::Wide,
        DynSolType::Uint(_) | DynSolType::Int(_) => Kind::Int64,
        DynSolType::String => Kind::Text,
        DynSolType::Array(_) | DynSolType::FixedArray(..) | DynSolType::Tuple(_) => Kind::Json(ty.clone()),
        _ => Kind::Hex,
    };
    (kind, decode_type(ty))
}

/// The type `ty` is decoded as: the same encoding, read so that nothing is
/// lost before it is checked — `string` as `bytes` (alloy would replace
/// bytes that are not UTF-8), `bool` and `address` as the whole word (alloy
/// would take any non-zero word as true, and the low 20 bytes of any word).
fn decode_type(ty: &DynSolType) -> DynSolType {
    match ty {
        DynSolType::String => DynSolType::Bytes,
        DynSolType::Bool | DynSolType::Address => DynSolType::Uint(256),
        DynSolType::Array(t) => DynSolType::Array(Box::new(decode_type(t))),
        DynSolType::FixedArray(t, n) => DynSolType::FixedArray(Box::new(decode_type(t)), *n),
        DynSolType::Tuple(ts) => DynSolType::Tuple(ts.iter().map(decode_type).collect()),
        other => other.clone(),
    }
}

/// Whether a decoded value is one of `ty`'s: alloy reads each integer,
/// bool, address and bytesN as a whole word without checking its range.
pub(crate) fn fits(v: &DynSolValue, ty: &DynSolType) -> bool {
    match (v, ty) {
        (DynSolValue::Uint(u, _), DynSolType::Uint(n)) => u.bit_len() <= *n,
        (DynSolValue::Uint(u, _), DynSolType::Bool) => *u <= alloy_primitives::U256::from(1u8),
        (DynSolValue::Uint(u, _), DynSolType::Address) => u.bit_len() <= 160,
        (DynSolValue::Int(i, _), DynSolType::Int(n)) => {
            let magnitude = if i.is_negative() { !*i } else { *i };
            magnitude.into_raw().bit_len() < *n
        }
        (DynSolValue::FixedBytes(w, _), DynSolType::FixedBytes(n)) => w[(*n).min(32)..].iter().all(|b| *b == 0),
        (DynSolValue::Array(items) | DynSolValue::FixedArray(items), DynSolType::Array(t) | DynSolType::FixedArray(t, _)) => {
            items.iter().all(|i| fits(i, t))
        }
        (DynSolValue::Tuple(items), DynSolType::Tuple(ts)) => items.len() == ts.len() && items.iter().zip(ts).all(|(i, t)| fits(i, t)),
        _ => true,
    }
}

/// The Arrow schema of a table of `params`.
pub(super) fn table_schema(params: &[Param], enc: HashEncoding, wide: U256Columns) -> SchemaRef {
    let hex = || {
        if enc == HashEncoding::Binary {
            DataType::Binary
        } else {
            DataType::Utf8
        }
    };
    let mut fields = vec![
        Field::new("chain", DataType::Utf8, false),
        Field::new("block_number", DataType::Int64, false),
        Field::new(
            "block_timestamp",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            false,
        ),
        Field::new("transaction_hash", hex(), false),
        Field::new("transaction_index", DataType::Int64, true),
        Field::new("log_index", DataType::Int64, false),
        Field::new("contract_address", hex(), false),
    ];
    for p in params {
        let f = |suffix: &str, t: DataType, nullable: bool| Field::new(format!("{}{suffix}", p.column), t, nullable);
        match p.kind {
            Kind::Address => fields.push(f("", hex(), false)),
            Kind::Bool => fields.push(f("", DataType::Boolean, false)),
            Kind::Int64 => fields.push(f("", DataType::Int64, false)),
            Kind::Hex | Kind::Text | Kind::Json(_) => fields.push(f("", DataType::Utf8, false)),
            Kind::Wide => {
                fields.push(f("", DataType::Utf8, false));
                fields.push(f("_f64", DataType::Float64, false));
                if wide.decimal38 {
                    fields.push(f("_decimal38", DataType::Decimal128(38, 0), true));
                }
                if wide.binary {
                    fields.push(f("_binary", DataType::Binary, false));
                }
            }
        }
    }
    Arc::new(Schema::new(fields))
}
