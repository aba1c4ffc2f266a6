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
mod hint;
mod stored;
#[cfg(test)]
mod tests;
mod types;

use super::{Ctx, DecodeError, Decoded, owns, parse_ts_micros};
use crate::api::types::Event as Log;
use crate::spec::{HashEncoding, U256Columns};
use alloy_dyn_abi::{DynSolEvent, DynSolType, Specifier};
use alloy_json_abi::Event;
use alloy_primitives::B256;
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use columns::TableBuilder;
use std::collections::HashMap;
use std::sync::Arc;
use types::{body_kind, fits, indexed_kind, table_schema};

/// The identity columns every decoded table starts with.
pub use crate::spec::decoding::IDENTITY;

/// A wide integer's columns computed from its stored decimal text.
pub(crate) use columns::{decimal38, wide_value, word_bytes};
/// What logs of a decoded event's topic0 carry, said when they fit none of its tables.
pub use hint::LogShape;
/// Logs read back from a stored raw `events` table.
pub use stored::stored_logs;

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
    pub fn new(table: &str, event: Event, enc: HashEncoding, wide: U256Columns) -> Result<EventTable, String> {
        if event.anonymous {
            return Err(format!(
                "event {} is anonymous: it has no topic0 to select or decode it by",
                event.name
            ));
        }
        let mut indexed_types = Vec::new();
        let mut body_types = Vec::new();
        let mut params = Vec::new();
        let names = crate::spec::decoding::parameter_columns(&event);
        for ((i, p), (column, _)) in event.inputs.iter().enumerate().zip(names) {
            let ty = p
                .resolve()
                .map_err(|e| format!("event {}: parameter {i} ({}): {e}", event.name, p.ty))?;
            let (kind, decode_as) = if p.indexed { indexed_kind(&ty) } else { body_kind(&ty) };
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

/// Counts of what decoding left out or changed, per page.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DecodeCounts {
    /// Logs that fit no decoded event.
    pub undecodable: u64,
    /// Of those, logs that carried a decoded event's topic0 but whose
    /// topics and data fit none of its tables (a signature without its
    /// `indexed` marks, most often).
    pub mismatched: u64,
    /// The first such log's shape, for [`LogDecoder::hint`].
    pub shape: Option<LogShape>,
    /// Wide integers too large for `_decimal38` (left null there).
    pub decimal38_nulls: u64,
    /// `string` values that were not UTF-8 (written as 0x-hex).
    pub invalid_utf8: u64,
}

impl std::ops::AddAssign for DecodeCounts {
    fn add_assign(&mut self, o: DecodeCounts) {
        self.undecodable += o.undecodable;
        self.mismatched += o.mismatched;
        self.shape = self.shape.or(o.shape);
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
    pub keys: arrow_array::RecordBatch,
    /// What was left out or changed.
    pub counts: DecodeCounts,
}

/// Decodes logs into the tables of an export.
#[derive(Debug, Clone)]
pub struct LogDecoder {
    tables: Vec<EventTable>,
    by_topic: HashMap<B256, Vec<usize>>,
    enc: HashEncoding,
    wide: U256Columns,
}

impl LogDecoder {
    /// A decoder into `tables`. Tables sharing a topic0 are tried in order;
    /// the first the log fits takes it.
    pub fn new(tables: Vec<EventTable>, enc: HashEncoding, wide: U256Columns) -> LogDecoder {
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

    /// How its hash and address columns are written.
    pub fn encoding(&self) -> HashEncoding {
        self.enc
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
        let mut builders: Vec<TableBuilder> = self
            .tables
            .iter()
            .map(|t| TableBuilder::new(t, self.enc, self.wide, share))
            .collect();
        let mut counts = DecodeCounts::default();
        let mut key_blocks = arrow_array::builder::Int64Builder::with_capacity(logs.len());
        let mut key_logs = arrow_array::builder::Int64Builder::with_capacity(logs.len());
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
            // A log of no decoded event is counted before its data is read.
            let known = match log.topics.iter().flatten().next() {
                Some(Some(t)) => Some(topic_word(&t.0).map_err(|m| ctx.err(row, "topics", m))?),
                Some(None) => return Err(ctx.err(row, "topics", "null topic")),
                None => None,
            };
            if !known.is_some_and(|t0| self.by_topic.contains_key(&t0)) {
                counts.undecodable += 1;
                continue;
            }
            topics.clear();
            for t in log.topics.iter().flatten() {
                let t = t.as_ref().ok_or_else(|| ctx.err(row, "topics", "null topic"))?;
                topics.push(topic_word(&t.0).map_err(|m| ctx.err(row, "topics", m))?);
            }
            let data = data_bytes(log.data.as_deref()).map_err(|m| ctx.err(row, "data", m))?;
            let candidates = topics.first().and_then(|t0| self.by_topic.get(t0));
            let fitted = candidates.and_then(|candidates| {
                candidates.iter().find_map(|&i| {
                    let t = &self.tables[i];
                    let d = t.decoder.decode_log_parts(topics.iter().copied(), &data).ok()?;
                    t.fits(&d).then_some((i, d))
                })
            });
            match fitted {
                Some((i, decoded)) => counts += builders[i].append(&id, &self.tables[i].params, &decoded),
                None => {
                    counts.undecodable += 1;
                    counts.mismatched += 1;
                    if counts.shape.is_none() {
                        counts.shape = candidates.and_then(|c| c.first()).map(|&table| LogShape {
                            table,
                            topics: topics.len(),
                            words: data.len().div_ceil(32),
                        });
                    }
                }
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
        let keys = arrow_array::RecordBatch::try_new(key_schema, vec![Arc::new(key_blocks.finish()), Arc::new(key_logs.finish())])
            .map_err(|e| ctx.err(0, "log_index", e.to_string()))?;
        Ok(DecodedLogs { tables, keys, counts })
    }
}

/// A log's `data` as bytes, read as the raw table reads it: `0x` or `0X`,
/// an odd number of digits padded with a leading zero.
fn data_bytes(text: Option<&str>) -> Result<Vec<u8>, String> {
    let t = text.unwrap_or("");
    let digits = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")).unwrap_or(t);
    let r = if digits.len() % 2 == 1 {
        hex::decode(format!("0{digits}"))
    } else {
        hex::decode(digits)
    };
    r.map_err(|e| format!("not 0x-hex: {e}"))
}

/// A topic (0x-hex or a decimal number, as the raw table reads it) as a word.
fn topic_word(text: &str) -> Result<B256, String> {
    super::topic_hex(text)?.parse::<B256>().map_err(|e| e.to_string())
}
