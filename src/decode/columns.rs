//! The Arrow schema of each dataset (the contract of the Parquet files and
//! of `schemas/<dataset>.json`), and engine-neutral type names.

use crate::spec::HashEncoding;
use crate::vocab::Dataset;
use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};
use std::sync::Arc;

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
        DataType::Boolean => "bool".into(),
        DataType::Int64 => "int64".into(),
        DataType::Float64 => "float64".into(),
        DataType::Date32 => "date32".into(),
        DataType::Decimal128(p, s) => format!("decimal128({p},{s})"),
        DataType::Timestamp(TimeUnit::Microsecond, Some(tz)) => format!("timestamp[us, tz={tz}]"),
        DataType::List(f) => format!("list<{}>", type_name(f.data_type())),
        other => format!("{other}"),
    }
}
