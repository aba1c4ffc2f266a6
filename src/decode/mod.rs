//! JSON pages → Arrow `RecordBatch`es with each dataset's schema, one file
//! per dataset. Rows outside the unit's range are dropped here (the service
//! does not say whether interval ends are inclusive, so ownership cannot
//! depend on it). Big integers stay exact; a missing required field or a
//! malformed value is an error naming chain, unit, page, row and field —
//! never a silent null.

pub mod blocks;
pub mod events;
pub mod portfolio;
pub mod tokens;

use crate::fetch::Records;
use crate::plan::{Unit, UnitRange};
use crate::spec::{Dataset, HashEncoding};
use crate::vocab::chain::Chain;
use crate::vocab::evm::U256;
use arrow::array::{ArrayRef, BinaryBuilder, ListBuilder, StringBuilder};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef, TimeUnit};
use arrow::record_batch::RecordBatch;
use std::borrow::Cow;
use std::sync::Arc;

/// A decoded page: rows and, for date-partitioned datasets, each row's day
/// (days since 1970-01-01, UTC).
#[derive(Debug)]
pub struct Decoded {
    /// The rows.
    pub batch: RecordBatch,
    /// Day of each row, for the `date` partition.
    pub days: Option<Vec<i32>>,
    /// Rows the page held that belong to another unit.
    pub dropped: usize,
}

/// A bad value in a response.
#[derive(Debug, thiserror::Error)]
#[error("{chain} {dataset} unit {unit}, page {page}, row {row}: field `{field}`: {message}")]
pub struct DecodeError {
    /// Chain.
    pub chain: Chain,
    /// Dataset.
    pub dataset: Dataset,
    /// Unit id.
    pub unit: String,
    /// Page number within the unit (1-based, this run).
    pub page: u64,
    /// Row within the page (0-based).
    pub row: usize,
    /// Field name.
    pub field: &'static str,
    /// What is wrong.
    pub message: String,
}

/// Where a page comes from, for errors and ownership.
#[derive(Debug, Clone, Copy)]
pub struct Ctx<'a> {
    /// The unit being fetched.
    pub unit: &'a Unit,
    /// Page number within the unit.
    pub page: u64,
    /// Hash/address encoding.
    pub enc: HashEncoding,
}

impl Ctx<'_> {
    fn err(&self, row: usize, field: &'static str, message: impl Into<String>) -> DecodeError {
        DecodeError {
            chain: self.unit.chain,
            dataset: self.unit.dataset,
            unit: self.unit.id.clone(),
            page: self.page,
            row,
            field,
            message: message.into(),
        }
    }

    fn required<'v, T>(&self, row: usize, field: &'static str, v: &'v Option<T>) -> Result<&'v T, DecodeError> {
        v.as_ref().ok_or_else(|| self.err(row, field, "missing (required)"))
    }
}

/// Decodes one page of any dataset: the one place where records become rows.
pub fn page(ctx: Ctx<'_>, records: Records<'_>) -> Result<Decoded, DecodeError> {
    match records {
        Records::Blocks(b) => blocks::decode(ctx, b),
        Records::Events(e) => events::decode(ctx, e),
        Records::Portfolio(p) => portfolio::decode(ctx, p),
        Records::Tokens(t) => tokens::decode(ctx, t),
    }
}

/// Whether a unit owns a block (by number or by its time).
pub(crate) fn owns(range: &UnitRange, number: i64, ts_micros: i64) -> bool {
    let secs = ts_micros.div_euclid(1_000_000);
    match range {
        UnitRange::Blocks { start, end } => number >= 0 && (*start..*end).contains(&(number as u64)),
        UnitRange::Time { start, end } => (*start..*end).contains(&secs),
        UnitRange::Numbers { numbers } => number >= 0 && numbers.binary_search(&(number as u64)).is_ok(),
        UnitRange::Wallet { .. } | UnitRange::Tokens { .. } => false,
    }
}

/// The Arrow schema of `dataset`.
pub fn schema(dataset: Dataset, enc: HashEncoding) -> SchemaRef {
    let hex = || {
        if enc == HashEncoding::Binary {
            DataType::Binary
        } else {
            DataType::Utf8
        }
    };
    let ts = || DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()));
    let dec = || DataType::Decimal128(38, 0);
    let f = |name: &str, t: DataType, nullable: bool| Field::new(name, t, nullable);
    let fields = match dataset {
        Dataset::Blocks => vec![
            f("chain", DataType::Utf8, false),
            f("base_fee_per_gas", DataType::Int64, true),
            f("difficulty", dec(), true),
            f("extra_data", hex(), true),
            f("gas_limit", DataType::Int64, true),
            f("gas_used", DataType::Int64, true),
            f("hash", hex(), false),
            f("logs_bloom", hex(), true),
            f("miner", hex(), true),
            f("nonce", hex(), true),
            f("number", DataType::Int64, false),
            f("parent_hash", hex(), true),
            f("receipt_root", hex(), true),
            f("sha3_uncles", hex(), true),
            f("size", DataType::Int64, true),
            f("state_root", hex(), true),
            f("timestamp", ts(), false),
            f("total_difficulty", dec(), true),
            f("transaction_count", DataType::Int64, true),
            f("transactions_root", hex(), true),
            f("withdrawals_root", hex(), true),
        ],
        Dataset::Events => vec![
            f("chain", DataType::Utf8, false),
            f("block_number", DataType::Int64, false),
            f("block_timestamp", ts(), false),
            f("contract_address", hex(), false),
            f("data", hex(), true),
            f("log_index", DataType::Int64, false),
            f("topics", DataType::List(Arc::new(Field::new("item", hex(), true))), false),
            f("topic0", hex(), true),
            f("topic1", hex(), true),
            f("topic2", hex(), true),
            f("topic3", hex(), true),
            f("transaction_hash", hex(), false),
            f("transaction_index", DataType::Int64, true),
        ],
        Dataset::Portfolio => vec![
            f("chain", DataType::Utf8, false),
            f("wallet_address", hex(), false),
            f("date", DataType::Date32, false),
            f("balance", DataType::Float64, true),
            f("balance_raw", DataType::Utf8, true),
            f("token_address", hex(), false),
            f("token_decimals", DataType::Int64, true),
            f("token_name", DataType::Utf8, true),
            f("token_standard", DataType::Utf8, true),
            f("token_symbol", DataType::Utf8, true),
        ],
        Dataset::Tokens => vec![
            f("chain", DataType::Utf8, false),
            f("address", hex(), false),
            f("decimals", DataType::Int64, true),
            f("name", DataType::Utf8, true),
            f("standard", DataType::Utf8, true),
            f("symbol", DataType::Utf8, true),
        ],
    };
    Arc::new(Schema::new(fields))
}

/// The schema as the JSON document kept in `schemas/<dataset>.json`.
pub fn schema_json(dataset: Dataset) -> String {
    let s = schema(dataset, HashEncoding::Hex);
    let cols: Vec<serde_json::Value> = s
        .fields()
        .iter()
        .map(|f| serde_json::json!({"name": f.name(), "type": type_name(f.data_type()), "nullable": f.is_nullable()}))
        .collect();
    let doc = serde_json::json!({"dataset": dataset.name(), "columns": cols});
    serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n"
}

/// A stable, engine-neutral name of an Arrow type.
pub fn type_name(t: &DataType) -> String {
    match t {
        DataType::Utf8 => "string".into(),
        DataType::Binary => "binary".into(),
        DataType::Int64 => "int64".into(),
        DataType::Float64 => "float64".into(),
        DataType::Date32 => "date32".into(),
        DataType::Decimal128(p, s) => format!("decimal128({p},{s})"),
        DataType::Timestamp(TimeUnit::Microsecond, Some(tz)) => format!("timestamp[us, tz={tz}]"),
        DataType::List(f) => format!("list<{}>", type_name(f.data_type())),
        other => format!("{other}"),
    }
}

/// A column of hashes/addresses: 0x-hex text or raw bytes.
pub(crate) enum HexCol {
    Str(StringBuilder),
    Bin(BinaryBuilder),
}

impl HexCol {
    pub(crate) fn new(enc: HashEncoding, cap: usize) -> HexCol {
        HexCol::with_text_bytes(enc, cap, cap * 66)
    }

    /// Sized for `cap` values of `text_bytes` 0x-hex characters in all, so
    /// that the buffers never grow (growing reallocates, and churns memory).
    pub(crate) fn with_text_bytes(enc: HashEncoding, cap: usize, text_bytes: usize) -> HexCol {
        match enc {
            HashEncoding::Hex => HexCol::Str(StringBuilder::with_capacity(cap, text_bytes)),
            HashEncoding::Binary => HexCol::Bin(BinaryBuilder::with_capacity(cap, text_bytes / 2 + cap)),
        }
    }

    /// Appends a 0x-hex value (checked, lower-cased) or null.
    pub(crate) fn append(&mut self, v: Option<&str>) -> Result<(), String> {
        let Some(v) = v else {
            match self {
                HexCol::Str(b) => b.append_null(),
                HexCol::Bin(b) => b.append_null(),
            }
            return Ok(());
        };
        let digits = v
            .strip_prefix("0x")
            .or_else(|| v.strip_prefix("0X"))
            .ok_or_else(|| format!("`{}` is not 0x-prefixed hex", clip(v)))?;
        let (valid, upper) = scan_hex(digits.as_bytes());
        if !valid {
            return Err(format!("`{}` is not hex", clip(v)));
        }
        match self {
            HexCol::Str(b) => {
                if upper {
                    b.append_value(format!("0x{}", digits.to_ascii_lowercase()));
                } else {
                    b.append_value(v);
                }
            }
            HexCol::Bin(b) => {
                let padded;
                let even = if digits.len() % 2 == 1 {
                    padded = format!("0{digits}");
                    padded.as_str()
                } else {
                    digits
                };
                b.append_value(hex::decode(even).map_err(|e| e.to_string())?);
            }
        }
        Ok(())
    }

    /// Appends a value `topic_hex` has already checked and normalised,
    /// without scanning it again.
    pub(crate) fn append_topic(&mut self, v: Option<&str>) -> Result<(), String> {
        match (self, v) {
            (HexCol::Str(b), Some(v)) => b.append_value(v),
            (HexCol::Bin(b), Some(v)) => {
                b.append_value(hex::decode(v.get(2..).unwrap_or_default()).map_err(|e| format!("`{}`: {e}", clip(v)))?)
            }
            (HexCol::Str(b), None) => b.append_null(),
            (HexCol::Bin(b), None) => b.append_null(),
        }
        Ok(())
    }

    pub(crate) fn finish(&mut self) -> ArrayRef {
        match self {
            HexCol::Str(b) => Arc::new(b.finish()),
            HexCol::Bin(b) => Arc::new(b.finish()),
        }
    }
}

/// Whether `digits` are all hex digits, and whether any is upper-case, in
/// one branch-free pass the compiler vectorises (hashes and `data` are most
/// of a page's bytes).
fn scan_hex(digits: &[u8]) -> (bool, bool) {
    let (mut bad, mut upper) = (0u8, 0u8);
    for &c in digits {
        let digit = c.wrapping_sub(b'0') < 10;
        let lower = c.wrapping_sub(b'a') < 6;
        let up = c.wrapping_sub(b'A') < 6;
        bad |= u8::from(!(digit | lower | up));
        upper |= u8::from(up);
    }
    (bad == 0, upper != 0)
}

/// A list-of-hex column (event topics).
pub(crate) enum HexListCol {
    Str(ListBuilder<StringBuilder>),
    Bin(ListBuilder<BinaryBuilder>),
}

impl HexListCol {
    /// Sized for `lists` lists of `items` 32-byte items in all.
    pub(crate) fn with_capacity(enc: HashEncoding, lists: usize, items: usize) -> HexListCol {
        match enc {
            HashEncoding::Hex => HexListCol::Str(ListBuilder::with_capacity(StringBuilder::with_capacity(items, items * 66), lists)),
            HashEncoding::Binary => HexListCol::Bin(ListBuilder::with_capacity(BinaryBuilder::with_capacity(items, items * 32), lists)),
        }
    }

    pub(crate) fn append(&mut self, items: &[Cow<'_, str>]) -> Result<(), String> {
        match self {
            HexListCol::Str(b) => {
                for i in items {
                    b.values().append_value(i);
                }
                b.append(true);
            }
            HexListCol::Bin(b) => {
                // Decode every item before appending any, so that an error
                // leaves no half-written list behind.
                let bytes = items
                    .iter()
                    .map(|i| hex::decode(i.get(2..).unwrap_or_default()).map_err(|e| format!("`{}`: {e}", clip(i))))
                    .collect::<Result<Vec<_>, _>>()?;
                for v in bytes {
                    b.values().append_value(v);
                }
                b.append(true);
            }
        }
        Ok(())
    }

    pub(crate) fn finish(&mut self) -> ArrayRef {
        match self {
            HexListCol::Str(b) => Arc::new(b.finish()),
            HexListCol::Bin(b) => Arc::new(b.finish()),
        }
    }
}

fn clip(v: &str) -> String {
    if v.len() > 80 {
        format!("{}…", &v[..v.char_indices().nth(77).map_or(v.len(), |(i, _)| i)])
    } else {
        v.to_string()
    }
}

/// A 32-byte topic as lower-case 0x-hex, from 0x-hex text or a decimal
/// number of any size, exactly.
pub fn topic_hex(text: &str) -> Result<Cow<'_, str>, String> {
    if text.len() == 66 && text.starts_with("0x") && scan_hex(&text.as_bytes()[2..]) == (true, false) {
        return Ok(Cow::Borrowed(text));
    }
    let v = if text.starts_with("0x") || text.starts_with("0X") {
        U256::from_hex0x(text)
    } else {
        U256::from_dec(text)
    };
    v.map(|v| Cow::Owned(v.to_hex32()))
        .ok_or_else(|| format!("`{}` is not a 32-byte topic (0x-hex or an integer below 2^256)", clip(text)))
}

/// Exact decimal (or 0x-hex) text → i128 for Decimal128(38,0).
pub(crate) fn parse_i128(text: &str) -> Result<i128, String> {
    let t = text.trim();
    let parsed = if let Some(h) = t.strip_prefix("0x") {
        i128::from_str_radix(h, 16).ok()
    } else {
        t.parse::<i128>().ok()
    };
    match parsed {
        Some(v) if v.unsigned_abs() < 10u128.pow(38) => Ok(v),
        _ => Err(format!("`{}` is not an integer of at most 38 digits", clip(t))),
    }
}

/// Exact decimal (or 0x-hex) text → i64.
pub(crate) fn parse_i64(text: &str) -> Result<i64, String> {
    let t = text.trim();
    let parsed = if let Some(h) = t.strip_prefix("0x") {
        i64::from_str_radix(h, 16).ok()
    } else {
        t.parse::<i64>().ok()
    };
    parsed.ok_or_else(|| format!("`{}` is not an integer that fits in int64", clip(t)))
}

/// ISO 8601 UTC → microseconds since the epoch. Fast path for the
/// service's `YYYY-MM-DDThh:mm:ssZ`; anything RFC 3339 is accepted.
pub(crate) fn parse_ts_micros(s: &str) -> Result<i64, String> {
    let b = s.as_bytes();
    if b.len() == 20 && b[4] == b'-' && b[7] == b'-' && b[10] == b'T' && b[13] == b':' && b[16] == b':' && b[19] == b'Z' {
        let num = |r: std::ops::Range<usize>| -> Option<i64> {
            let mut v = 0i64;
            for &c in &b[r] {
                if !c.is_ascii_digit() {
                    return None;
                }
                v = v * 10 + (c - b'0') as i64;
            }
            Some(v)
        };
        if let (Some(y), Some(mo), Some(d), Some(h), Some(mi), Some(se)) =
            (num(0..4), num(5..7), num(8..10), num(11..13), num(14..16), num(17..19))
            && (1..=12).contains(&mo)
            && (1..=31).contains(&d)
            && h < 24
            && mi < 60
            && se < 61
        {
            let days = days_from_civil(y, mo, d);
            return Ok((days * 86_400 + h * 3600 + mi * 60 + se) * 1_000_000);
        }
    }
    chrono::DateTime::parse_from_rfc3339(s)
        .map(|dt| dt.timestamp_micros())
        .map_err(|_| format!("`{}` is not an ISO 8601 UTC date-time", clip(s)))
}

/// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_parse_exactly() {
        assert_eq!(parse_ts_micros("2023-11-07T05:31:56Z").unwrap(), 1_699_335_116_000_000);
        assert_eq!(parse_ts_micros("2023-11-07T05:31:56.5+00:00").unwrap(), 1_699_335_116_500_000);
        assert!(parse_ts_micros("yesterday").is_err());
    }

    #[test]
    fn hex_scan_finds_bad_and_upper_case_digits() {
        assert_eq!(scan_hex(b"0123456789abcdef"), (true, false));
        assert_eq!(scan_hex(b"ABCDEF"), (true, true));
        assert_eq!(scan_hex(b""), (true, false));
        for bad in [&b"g"[..], b"0x", b"/", b":", b"@", b"G", b"`", b" ", b"\xff"] {
            assert!(!scan_hex(bad).0, "{bad:?}");
        }
    }

    #[test]
    fn topics_from_numbers_and_hex_agree() {
        let hex = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";
        let dec = crate::vocab::evm::U256::from_hex0x(hex).unwrap().to_dec();
        assert_eq!(topic_hex(&dec).unwrap(), hex);
        assert_eq!(
            topic_hex("0xDDF252AD1BE2C89B69C2B068FC378DAA952BA7F163C4A11628F55A4DF523B3EF").unwrap(),
            hex
        );
        assert_eq!(topic_hex("1").unwrap(), format!("0x{}1", "0".repeat(63)));
        assert!(topic_hex("1.5e76").is_err());
    }
}
