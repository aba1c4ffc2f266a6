//! Every dataset's declaration ([`super::blocks::DECLARATION`],
//! [`super::events::DECLARATION`], [`super::portfolio::DECLARATION`],
//! [`super::tokens::DECLARATION`], each in its own file, in the words of
//! [`super::columns`]), and what is read from all of them: a dataset's
//! schema, how a table is known by its columns (its key, partition keys
//! and day column), and `schemas/<dataset>.json`.

use super::columns::{Declaration, type_name};
use crate::spec::HashEncoding;
use crate::vocab::Dataset;
use arrow_schema::SchemaRef;

/// Every dataset's declaration, in [`Dataset::ALL`] order.
pub const DECLARATIONS: [&Declaration; 4] = [
    &super::blocks::DECLARATION,
    &super::events::DECLARATION,
    &super::portfolio::DECLARATION,
    &super::tokens::DECLARATION,
];

/// The declaration of `dataset`.
pub fn declaration(dataset: Dataset) -> &'static Declaration {
    match dataset {
        Dataset::Blocks => &super::blocks::DECLARATION,
        Dataset::Events => &super::events::DECLARATION,
        Dataset::Portfolio => &super::portfolio::DECLARATION,
        Dataset::Tokens => &super::tokens::DECLARATION,
    }
}

/// The Arrow schema of `dataset`.
pub fn schema(dataset: Dataset, enc: HashEncoding) -> SchemaRef {
    declaration(dataset).schema(enc)
}

/// The natural key of a table's rows, in sort order: what its files are
/// sorted by. A table is known by the first column of a declared key it
/// holds (decoded event tables share the raw events' key); key columns a
/// file does not hold (partition keys) are left out.
pub fn natural_key(columns: &[&str]) -> Vec<&'static str> {
    DECLARATIONS
        .iter()
        .map(|d| d.key)
        .find(|key| columns.contains(&key[0]))
        .map(|key| key.iter().copied().filter(|k| columns.contains(k)).collect())
        .unwrap_or_default()
}

/// The partition keys the rows of a table with `columns` have (see
/// [`natural_key`] for how the table is known): decoded event tables have
/// the raw events'.
pub fn partition_keys(columns: &[&str]) -> &'static [&'static str] {
    DECLARATIONS
        .iter()
        .find(|d| columns.contains(&d.key[0]))
        .map(|d| d.partition_by)
        .unwrap_or(&["chain"])
}

/// The column whose UTC day is the `date` partition of a table with
/// `columns` (see [`natural_key`] for how the table is known): a
/// timestamp, or a `date`; None where its rows have no day.
pub fn day_column(columns: &[&str]) -> Option<&'static str> {
    DECLARATIONS.iter().find(|d| columns.contains(&d.key[0])).and_then(|d| d.day)
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

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{ArrayRef, Int64Array, StringArray};
    use std::sync::Arc;

    #[test]
    fn every_declared_name_is_a_column_of_its_dataset() {
        for d in DECLARATIONS {
            let names: Vec<&str> = d.columns.iter().map(|c| c.name).collect();
            let mut distinct = names.clone();
            distinct.sort();
            distinct.dedup();
            assert_eq!(distinct.len(), names.len(), "{:?}: a column declared twice", d.dataset);
            for n in d.key.iter().chain(d.lookups).chain(d.dictionary) {
                assert!(names.contains(n), "{:?}: `{n}` is not one of its columns", d.dataset);
            }
            assert!(d.partition_by.contains(&"chain"));
            assert!(d.partition_by.iter().all(|k| ["chain", "date"].contains(k)));
        }
        for (d, dataset) in DECLARATIONS.iter().zip(Dataset::ALL) {
            assert_eq!(d.dataset, dataset);
        }
    }

    #[test]
    fn the_vocabulary_names_each_datasets_columns_and_those_always_kept() {
        for d in DECLARATIONS {
            let names: Vec<&str> = d.columns.iter().map(|c| c.name).collect();
            assert_eq!(d.dataset.columns(), names.as_slice(), "{:?}", d.dataset);
            // `date` is a partition key of rows without a `date` column too.
            let mut kept: Vec<&str> = d
                .key
                .iter()
                .chain(d.partition_by)
                .chain(&d.day)
                .copied()
                .filter(|c| names.contains(c))
                .collect();
            kept.sort_unstable();
            kept.dedup();
            let mut said = d.dataset.kept_columns().to_vec();
            said.sort_unstable();
            assert_eq!(said, kept, "{:?}", d.dataset);
        }
    }

    #[test]
    fn a_batch_is_filled_by_name_whatever_the_order() {
        let d = &super::super::tokens::DECLARATION;
        let text = |v: &str| Arc::new(StringArray::from(vec![v])) as ArrayRef;
        let mut named = vec![
            ("symbol", text("SYM")),
            ("chain", text("base")),
            ("address", text("0xab")),
            ("decimals", Arc::new(Int64Array::from(vec![6])) as ArrayRef),
            ("standard", text("erc20")),
            ("name", text("Name")),
        ];
        let b = d.batch(HashEncoding::Hex, named.clone()).unwrap();
        let col = |n: &str| {
            b.column_by_name(n)
                .unwrap()
                .as_any()
                .downcast_ref::<StringArray>()
                .map(|a| a.value(0).to_string())
        };
        assert_eq!((col("name"), col("symbol")), (Some("Name".into()), Some("SYM".into())));
        named.push(("name", text("again")));
        assert!(d.batch(HashEncoding::Hex, named.clone()).unwrap_err().contains("twice"));
        named.truncate(5);
        assert!(d.batch(HashEncoding::Hex, named.clone()).unwrap_err().contains("`name` not filled"));
        named.push(("nome", text("x")));
        assert!(d.batch(HashEncoding::Hex, named).unwrap_err().contains("not declared"));
    }
}
