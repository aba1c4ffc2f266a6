//! Decoded events: a log's topics and data as typed columns, one table per
//! event signature (or per event of a JSON ABI).
//!
//! Signatures and ABIs are parsed by `alloy-json-abi` and logs decoded by
//! `alloy-dyn-abi`. Each decoded table has the log's identity columns
//! ([`IDENTITY`]) and then a column per event parameter, in declaration
//! order, named from the signature (unnamed ones `arg0`, `arg1`, …; a name
//! that repeats an earlier column gets `_<position>`). Types:
//! - `address` → the output's hash encoding (0x-hex text or 20 bytes);
//! - `bool` → Boolean; `uintN` (N ≤ 56) and `intN` (N ≤ 64) → Int64;
//! - wider integers → `<name>`, the exact decimal text, and `<name>_f64`,
//!   a Float64 for sums and charts; with `u256 = ["decimal38"]` also
//!   `<name>_decimal38` (Decimal128(38,0), null where the value does not
//!   fit, counted), with `"binary"` also `<name>_binary` (32 bytes,
//!   big-endian two's complement);
//! - `bytesN`, `bytes`, `function`, and indexed dynamic values (which a
//!   log holds only as their keccak hash) → 0x-hex text;
//! - `string` → UTF-8 text (bytes that are not UTF-8 → 0x-hex, counted);
//! - arrays and tuples → JSON text, integers as exact JSON numbers.
//!
//! A log that does not fit its signature — another topic count (ERC-721's
//! `Transfer` against ERC-20's: same topic0, one more indexed parameter),
//! data too short or malformed, or a topic0 of no decoded event — is not an
//! error: it is left out of every decoded table and counted as
//! undecodable. A log's identity fields are still required, as for the raw
//! `events` table.

mod columns;
#[cfg(test)]
mod tests;

use super::{Ctx, DecodeError, Decoded, owns, parse_ts_micros};
use crate::api::types::Event as Log;
use crate::spec::HashEncoding;
use alloy_dyn_abi::{DynSolEvent, DynSolType, Specifier};
use alloy_json_abi::{Event, EventParam};
use alloy_primitives::B256;
use arrow::datatypes::{DataType, Field, Schema, SchemaRef, TimeUnit};
use columns::TableBuilder;
use std::collections::HashMap;
use std::sync::Arc;

/// The identity columns every decoded table starts with.
pub const IDENTITY: [&str; 7] = [
    "chain",
    "block_number",
    "block_timestamp",
    "transaction_hash",
    "transaction_index",
    "log_index",
    "contract_address",
];

/// Extra columns of integers wider than 64 bits (`u256 = [...]`).
pub use crate::spec::U256Columns as WideColumns;
pub use crate::spec::decoding::snake_case;

/// How a parameter becomes columns.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Kind {
    Address,
    Bool,
    Int64,
    /// An integer wider than Int64 (signed or not).
    Wide,
    Hex,
    Text,
    /// An array or tuple, as JSON; the type guides rendering (strings
    /// were decoded as bytes, to find the ones that are not UTF-8).
    Json(DynSolType),
}

/// One parameter's place in a log and its column.
#[derive(Debug, Clone)]
pub(crate) struct Param {
    pub(crate) column: String,
    pub(crate) kind: Kind,
    pub(crate) indexed: bool,
    /// Position among the indexed parameters or in the data.
    pub(crate) pos: usize,
}

/// A decoded table: an event and the columns it decodes to.
#[derive(Debug, Clone)]
pub struct EventTable {
    /// The table's name (its directory under the output).
    pub table: String,
    /// The event, as parsed.
    pub event: Event,
    decoder: DynSolEvent,
    params: Vec<Param>,
    schema: SchemaRef,
}

impl EventTable {
    /// The table `table` of `event`. Refuses anonymous events (they have no
    /// topic0 to select on) and types alloy cannot resolve.
    pub fn new(table: &str, event: Event, enc: HashEncoding, wide: WideColumns) -> Result<EventTable, String> {
        if event.anonymous {
            return Err(format!(
                "event {} is anonymous: it has no topic0 to select or decode it by",
                event.name
            ));
        }
        let mut indexed_types = Vec::new();
        let mut body_types = Vec::new();
        let mut params = Vec::new();
        let mut taken: Vec<String> = IDENTITY.iter().map(|c| c.to_string()).collect();
        for (i, p) in event.inputs.iter().enumerate() {
            let ty = p
                .resolve()
                .map_err(|e| format!("event {}: parameter {i} ({}): {e}", event.name, p.ty))?;
            let column = column_name(p, i, &taken);
            taken.push(column.clone());
            let (kind, decode_as) = if p.indexed { indexed_kind(&ty) } else { body_kind(&ty) };
            let list = if p.indexed { &mut indexed_types } else { &mut body_types };
            params.push(Param {
                column,
                kind,
                indexed: p.indexed,
                pos: list.len(),
            });
            list.push(decode_as);
        }
        let decoder = DynSolEvent::new(Some(event.selector()), indexed_types, DynSolType::Tuple(body_types))
            .ok_or_else(|| format!("event {} has more than 3 indexed parameters", event.name))?;
        let schema = table_schema(&params, enc, wide);
        Ok(EventTable {
            table: table.to_string(),
            event,
            decoder,
            params,
            schema,
        })
    }

    /// The table's Arrow schema.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// The event's topic0.
    pub fn topic0(&self) -> B256 {
        self.event.selector()
    }
}

/// The column of parameter `i`: its name, `arg<i>` when unnamed, with
/// `_<i>` when that repeats an earlier column.
fn column_name(p: &EventParam, i: usize, taken: &[String]) -> String {
    let base = if p.name.is_empty() { format!("arg{i}") } else { p.name.clone() };
    if taken.contains(&base) { format!("{base}_{i}") } else { base }
}

/// An indexed parameter: its kind and how its topic decodes. A dynamic
/// value is in the log only as its hash.
fn indexed_kind(ty: &DynSolType) -> (Kind, DynSolType) {
    match ty {
        DynSolType::String | DynSolType::Bytes | DynSolType::Array(_) | DynSolType::FixedArray(..) | DynSolType::Tuple(_) => {
            (Kind::Hex, ty.clone())
        }
        _ => body_kind(ty),
    }
}

/// A data parameter: its kind and the type it is decoded as (strings as
/// bytes, everywhere in it).
fn body_kind(ty: &DynSolType) -> (Kind, DynSolType) {
    let kind = match ty {
        DynSolType::Address => Kind::Address,
        DynSolType::Bool => Kind::Bool,
        DynSolType::Uint(n) if *n <= 56 => Kind::Int64,
        DynSolType::Int(n) if *n <= 64 => Kind::Int64,
        DynSolType::Uint(_) | DynSolType::Int(_) => Kind::Wide,
        DynSolType::String => Kind::Text,
        DynSolType::Array(_) | DynSolType::FixedArray(..) | DynSolType::Tuple(_) => Kind::Json(ty.clone()),
        _ => Kind::Hex,
    };
    (kind, strings_as_bytes(ty))
}

/// `ty` with every `string` read as `bytes` (the same encoding): alloy
/// would replace bytes that are not UTF-8.
fn strings_as_bytes(ty: &DynSolType) -> DynSolType {
    match ty {
        DynSolType::String => DynSolType::Bytes,
        DynSolType::Array(t) => DynSolType::Array(Box::new(strings_as_bytes(t))),
        DynSolType::FixedArray(t, n) => DynSolType::FixedArray(Box::new(strings_as_bytes(t)), *n),
        DynSolType::Tuple(ts) => DynSolType::Tuple(ts.iter().map(strings_as_bytes).collect()),
        other => other.clone(),
    }
}

/// The Arrow schema of a table of `params`.
fn table_schema(params: &[Param], enc: HashEncoding, wide: WideColumns) -> SchemaRef {
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

/// Counts of what decoding left out or changed, per page.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DecodeCounts {
    /// Logs that fit no decoded event.
    pub undecodable: u64,
    /// Wide integers too large for `_decimal38` (left null there).
    pub decimal38_nulls: u64,
    /// `string` values that were not UTF-8 (written as 0x-hex).
    pub invalid_utf8: u64,
}

impl std::ops::AddAssign for DecodeCounts {
    fn add_assign(&mut self, o: DecodeCounts) {
        self.undecodable += o.undecodable;
        self.decimal38_nulls += o.decimal38_nulls;
        self.invalid_utf8 += o.invalid_utf8;
    }
}

/// A page of logs decoded into every table.
#[derive(Debug)]
pub struct DecodedLogs {
    /// One per table, in the decoder's order (possibly with no rows).
    pub tables: Vec<Decoded>,
    /// `block_number` and `log_index` of every log of the unit on the
    /// page, decodable or not: what the paging guard checks.
    pub keys: arrow::record_batch::RecordBatch,
    /// What was left out or changed.
    pub counts: DecodeCounts,
}

/// Decodes logs into the tables of an export.
#[derive(Debug, Clone)]
pub struct LogDecoder {
    tables: Vec<EventTable>,
    by_topic: HashMap<B256, Vec<usize>>,
    enc: HashEncoding,
    wide: WideColumns,
}

impl LogDecoder {
    /// A decoder into `tables`. Tables sharing a topic0 are tried in order;
    /// the first the log fits takes it.
    pub fn new(tables: Vec<EventTable>, enc: HashEncoding, wide: WideColumns) -> LogDecoder {
        let mut by_topic: HashMap<B256, Vec<usize>> = HashMap::new();
        for (i, t) in tables.iter().enumerate() {
            by_topic.entry(t.topic0()).or_default().push(i);
        }
        LogDecoder {
            tables,
            by_topic,
            enc,
            wide,
        }
    }

    /// The decoder of an export's [`crate::spec::Decoding`].
    pub fn of(d: &crate::spec::Decoding, enc: HashEncoding) -> Result<LogDecoder, String> {
        let tables = d
            .tables
            .iter()
            .map(|t| EventTable::new(&t.table, t.event.clone(), enc, d.u256))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(LogDecoder::new(tables, enc, d.u256))
    }

    /// The tables, in order.
    pub fn tables(&self) -> &[EventTable] {
        &self.tables
    }

    /// Decodes a page of logs. Identity fields that are missing or
    /// malformed are an error (as for raw events); a log that does not fit
    /// its event is counted, not an error.
    pub fn decode(&self, ctx: Ctx<'_>, logs: &[Log<'_>]) -> Result<DecodedLogs, DecodeError> {
        let mut builders: Vec<TableBuilder> = self
            .tables
            .iter()
            .map(|t| TableBuilder::new(t, self.enc, self.wide, logs.len()))
            .collect();
        let mut counts = DecodeCounts::default();
        let mut key_blocks = arrow::array::Int64Builder::with_capacity(logs.len());
        let mut key_logs = arrow::array::Int64Builder::with_capacity(logs.len());
        let mut topics: Vec<B256> = Vec::with_capacity(4);
        for (row, log) in logs.iter().enumerate() {
            let num = ctx.required(row, "block_number", &log.block_number)?.0;
            let ts = parse_ts_micros(ctx.required(row, "block_timestamp", &log.block_timestamp)?)
                .map_err(|m| ctx.err(row, "block_timestamp", m))?;
            if !owns(&ctx.unit.range, num, ts) {
                continue;
            }
            let id = columns::Identity::read(&ctx, row, log, num, ts)?;
            key_blocks.append_value(num);
            key_logs.append_value(id.log_index());
            topics.clear();
            for t in log.topics.iter().flatten() {
                let t = t.as_ref().ok_or_else(|| ctx.err(row, "topics", "null topic"))?;
                let hex = super::topic_hex(&t.0).map_err(|m| ctx.err(row, "topics", m))?;
                topics.push(hex.parse().map_err(|e| ctx.err(row, "topics", format!("{e}")))?);
            }
            let data = match log.data.as_deref() {
                None | Some("0x") | Some("") => Vec::new(),
                Some(d) => match hex::decode(d.strip_prefix("0x").unwrap_or(d)) {
                    Ok(b) => b,
                    Err(e) => return Err(ctx.err(row, "data", format!("not 0x-hex: {e}"))),
                },
            };
            let fitted = topics.first().and_then(|t0| self.by_topic.get(t0)).and_then(|candidates| {
                candidates.iter().find_map(|&i| {
                    let t = &self.tables[i];
                    t.decoder.decode_log_parts(topics.iter().copied(), &data).ok().map(|d| (i, d))
                })
            });
            match fitted {
                Some((i, decoded)) => counts += builders[i].append(&id, &self.tables[i].params, &decoded),
                None => counts.undecodable += 1,
            }
        }
        let tables = builders
            .into_iter()
            .zip(&self.tables)
            .map(|(b, t)| b.finish(t.schema()).map_err(|e| ctx.err(0, "topics", e.to_string())))
            .collect::<Result<_, _>>()?;
        let key_schema = Arc::new(Schema::new(vec![
            Field::new("block_number", DataType::Int64, false),
            Field::new("log_index", DataType::Int64, false),
        ]));
        let keys = arrow::record_batch::RecordBatch::try_new(key_schema, vec![Arc::new(key_blocks.finish()), Arc::new(key_logs.finish())])
            .map_err(|e| ctx.err(0, "log_index", e.to_string()))?;
        Ok(DecodedLogs { tables, keys, counts })
    }
}
