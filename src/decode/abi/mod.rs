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
use alloy_dyn_abi::{DynSolEvent, DynSolType, DynSolValue, Specifier};
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
    /// Its type as declared (values are checked against it: alloy reads
    /// every integer as a whole word).
    pub(crate) ty: DynSolType,
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
        // Lower-case: DuckDB and Spark match column names regardless of case.
        let mut taken: Vec<String> = IDENTITY.iter().chain(PARTITION_KEYS.iter()).map(|c| c.to_string()).collect();
        for (i, p) in event.inputs.iter().enumerate() {
            let ty = p
                .resolve()
                .map_err(|e| format!("event {}: parameter {i} ({}): {e}", event.name, p.ty))?;
            let (kind, decode_as) = if p.indexed { indexed_kind(&ty) } else { body_kind(&ty) };
            let column = column_name(p, i, &kind, &mut taken);
            let list = if p.indexed { &mut indexed_types } else { &mut body_types };
            params.push(Param {
                column,
                kind,
                ty,
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

    /// Whether every parameter's value is one of its type's (an indexed
    /// dynamic value is a hash: any word).
    fn fits(&self, d: &alloy_dyn_abi::DecodedEvent) -> bool {
        self.params.iter().all(|p| {
            let list = if p.indexed { &d.indexed } else { &d.body };
            match list.get(p.pos) {
                Some(v) => p.kind == Kind::Hex && p.indexed || fits(v, &p.ty),
                None => false,
            }
        })
    }
}

/// Hive partition keys: a column of that name would be hidden by the
/// directory's value in engines that read partitions.
const PARTITION_KEYS: [&str; 2] = ["chain", "date"];

/// The column of parameter `i`: its name (`arg<i>` when unnamed), with
/// `_<i>` (then `_<i>_<k>`) when it or a column it adds (`_f64`, …) would
/// repeat an earlier column's name in any case. Records what it takes.
fn column_name(p: &EventParam, i: usize, kind: &Kind, taken: &mut Vec<String>) -> String {
    let base = if p.name.is_empty() { format!("arg{i}") } else { p.name.clone() };
    let suffixes: &[&str] = if *kind == Kind::Wide { &["", "_f64", "_decimal38", "_binary"] } else { &[""] };
    let names = |c: &str| suffixes.iter().map(|s| format!("{c}{s}").to_ascii_lowercase()).collect::<Vec<_>>();
    let free = |c: &str, taken: &Vec<String>| names(c).iter().all(|n| !taken.contains(n));
    let column = std::iter::once(base.clone())
        .chain((0..).map(|k| if k == 0 { format!("{base}_{i}") } else { format!("{base}_{i}_{k}") }))
        .find(|c| free(c, taken))
        .unwrap_or(base);
    taken.extend(names(&column));
    column
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

/// A data parameter: its kind and the type it is decoded as (see
/// [`decode_type`]).
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
        // Builders grow as rows come; sized for an even share of the page.
        let share = logs.len() / self.tables.len().max(1) + 16;
        let mut builders: Vec<TableBuilder> = self.tables.iter().map(|t| TableBuilder::new(t, self.enc, self.wide, share)).collect();
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
            let data = data_bytes(log.data.as_deref()).map_err(|m| ctx.err(row, "data", m))?;
            let fitted = topics.first().and_then(|t0| self.by_topic.get(t0)).and_then(|candidates| {
                candidates.iter().find_map(|&i| {
                    let t = &self.tables[i];
                    let d = t.decoder.decode_log_parts(topics.iter().copied(), &data).ok()?;
                    t.fits(&d).then_some((i, d))
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

/// A log's `data` as bytes, read as the raw table reads it: `0x` or `0X`,
/// an odd number of digits padded with a leading zero.
fn data_bytes(text: Option<&str>) -> Result<Vec<u8>, String> {
    let t = text.unwrap_or("");
    let digits = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")).unwrap_or(t);
    let r = if digits.len() % 2 == 1 { hex::decode(format!("0{digits}")) } else { hex::decode(digits) };
    r.map_err(|e| format!("not 0x-hex: {e}"))
}
