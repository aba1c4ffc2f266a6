//! Schemas for the terminal: a table's schema as JSON, Arrow, DuckDB DDL
//! or Spark DDL, names that are SQL words quoted.

use crate::decode::{schema, type_name};
use crate::spec::HashEncoding;
use crate::vocab::Dataset;
use arrow_schema::{DataType, Schema, TimeUnit};

/// The schema of `dataset` as JSON, Arrow, DuckDB DDL or Spark DDL.
pub fn schema_text(dataset: Dataset, format: &str) -> Result<String, String> {
    if format == "json" {
        return Ok(crate::decode::schema_json(dataset));
    }
    table_schema_text(dataset.name(), &schema(dataset, HashEncoding::Hex), format)
}

/// The schema of table `name` as JSON, Arrow, DuckDB DDL or Spark DDL.
pub fn table_schema_text(name: &str, s: &Schema, format: &str) -> Result<String, String> {
    match format {
        "json" => {
            let cols: Vec<serde_json::Value> = s
                .fields()
                .iter()
                .map(|f| serde_json::json!({"name": f.name(), "type": type_name(f.data_type()), "nullable": f.is_nullable()}))
                .collect();
            let doc = serde_json::json!({"table": name, "columns": cols});
            serde_json::to_string_pretty(&doc).map(|t| t + "\n").map_err(|e| e.to_string())
        }
        "arrow" => Ok(s
            .fields()
            .iter()
            .map(|f| {
                format!(
                    "{}: {}{}\n",
                    f.name(),
                    type_name(f.data_type()),
                    if f.is_nullable() { "" } else { " not null" }
                )
            })
            .collect()),
        "duckdb" => Ok(format!(
            "CREATE TABLE {} (\n{}\n);\n",
            ident(name, '"'),
            ddl_columns(s, duck, "  ").join(",\n")
        )),
        "spark" => Ok(ddl_columns(s, spark, "").join(", ") + "\n"),
        other => Err(format!("unknown schema format `{other}`: expected json, arrow, duckdb or spark")),
    }
}

/// Names DuckDB or Spark read as SQL words (DuckDB's reserved keywords,
/// and the joins and predicates Spark reserves): quoted in DDL, as decoded
/// event parameters and table names are often named so.
const SQL_WORDS: &[&str] = &[
    "all",
    "analyse",
    "analyze",
    "and",
    "any",
    "anti",
    "array",
    "as",
    "asc",
    "asymmetric",
    "between",
    "both",
    "by",
    "case",
    "cast",
    "check",
    "collate",
    "column",
    "constraint",
    "create",
    "cross",
    "current_date",
    "current_time",
    "current_timestamp",
    "current_user",
    "default",
    "deferrable",
    "desc",
    "describe",
    "distinct",
    "do",
    "else",
    "end",
    "escape",
    "except",
    "exists",
    "false",
    "fetch",
    "filter",
    "for",
    "foreign",
    "from",
    "full",
    "grant",
    "group",
    "having",
    "ilike",
    "in",
    "index",
    "initially",
    "inner",
    "intersect",
    "interval",
    "into",
    "is",
    "join",
    "key",
    "lateral",
    "leading",
    "left",
    "like",
    "limit",
    "minus",
    "natural",
    "not",
    "null",
    "offset",
    "on",
    "only",
    "or",
    "order",
    "outer",
    "over",
    "partition",
    "pivot",
    "placing",
    "primary",
    "qualify",
    "range",
    "references",
    "returning",
    "right",
    "rows",
    "select",
    "semi",
    "session_user",
    "show",
    "some",
    "summarize",
    "symmetric",
    "table",
    "tablesample",
    "then",
    "to",
    "trailing",
    "true",
    "union",
    "unique",
    "unpivot",
    "user",
    "using",
    "values",
    "variadic",
    "when",
    "where",
    "window",
    "with",
];

/// A column name as DDL writes it: quoted (`q` is the engine's quote) when
/// it is an SQL word or not a plain lower-case identifier.
fn ident(name: &str, q: char) -> String {
    let plain = name.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if plain && !SQL_WORDS.contains(&name) {
        name.to_string()
    } else {
        format!("{q}{name}{q}")
    }
}

/// `name TYPE [NOT NULL]` per column, with an engine's type names.
fn ddl_columns(s: &Schema, type_of: fn(&DataType) -> String, indent: &str) -> Vec<String> {
    let q = if indent.is_empty() { '`' } else { '"' };
    s.fields()
        .iter()
        .map(|f| {
            format!(
                "{indent}{} {}{}",
                ident(f.name(), q),
                type_of(f.data_type()),
                if f.is_nullable() { "" } else { " NOT NULL" }
            )
        })
        .collect()
}

fn duck(t: &DataType) -> String {
    match t {
        DataType::Utf8 => "VARCHAR".into(),
        DataType::Binary => "BLOB".into(),
        DataType::Boolean => "BOOLEAN".into(),
        DataType::Int64 => "BIGINT".into(),
        DataType::Float64 => "DOUBLE".into(),
        DataType::Date32 => "DATE".into(),
        DataType::Decimal128(p, s) => format!("DECIMAL({p},{s})"),
        DataType::Timestamp(TimeUnit::Microsecond, Some(_)) => "TIMESTAMPTZ".into(),
        DataType::List(f) => format!("{}[]", duck(f.data_type())),
        other => format!("{other}"),
    }
}

fn spark(t: &DataType) -> String {
    match t {
        DataType::Utf8 => "STRING".into(),
        DataType::Binary => "BINARY".into(),
        DataType::Boolean => "BOOLEAN".into(),
        DataType::Int64 => "BIGINT".into(),
        DataType::Float64 => "DOUBLE".into(),
        DataType::Date32 => "DATE".into(),
        DataType::Decimal128(p, s) => format!("DECIMAL({p},{s})"),
        DataType::Timestamp(..) => "TIMESTAMP".into(),
        DataType::List(f) => format!("ARRAY<{}>", spark(f.data_type())),
        other => format!("{other}"),
    }
}
