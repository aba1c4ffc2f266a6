//! `columns` and `exclude_columns` of an export: which of its dataset's
//! columns its table holds. `columns` names the columns written (the
//! dataset's [`Dataset::kept_columns`] are written too, listed or not);
//! `exclude_columns` names those left out, never a kept one. The result is
//! one canonical form, the columns not written in the dataset's order, so
//! two spellings of one selection are one job. Every export writing one
//! table must leave out the same columns: a table folder holds files of
//! one set of columns.

use super::Validator;
use super::export::At;
use crate::spec::raw::RawExport;
use crate::spec::{Decoding, Export};
use crate::vocab::Dataset;
use std::ops::Range;
use toml::Spanned;

impl Validator<'_> {
    /// The columns the export does not write (see the module doc).
    pub(super) fn columns(&mut self, at: &At<'_>, dataset: Dataset, decoding: Option<&Decoding>) -> Vec<String> {
        let e = at.raw;
        if let (Some(_), Some(x)) = (&e.columns, &e.exclude_columns) {
            self.err(
                x.span(),
                at.key("exclude_columns"),
                "this export has `columns` too: choose its columns with one of them (`columns`: exactly these; `exclude_columns`: all but these)",
            );
        }
        let tables = export_columns(dataset, decoding);
        let mut dropped = Vec::new();
        for (key, list) in [("columns", &e.columns), ("exclude_columns", &e.exclude_columns)] {
            let Some(list) = list else { continue };
            dropped = self.column_list(at, dataset, &tables, key, list);
            self.variants_kept(at, decoding, key, list, &dropped);
        }
        dropped
    }

    /// Refuses a selection that leaves out a column `u256` adds: the two
    /// keys would say opposite things of it.
    fn variants_kept(
        &mut self,
        at: &At<'_>,
        decoding: Option<&Decoding>,
        key: &str,
        list: &Spanned<Vec<Spanned<String>>>,
        dropped: &[String],
    ) {
        let Some(d) = decoding else { return };
        let mut variants: Vec<String> = d.tables.iter().flat_map(|t| t.variant_columns(d.u256)).collect();
        variants.dedup();
        let left_out: Vec<&String> = variants.iter().filter(|c| dropped.contains(c)).collect();
        if left_out.is_empty() {
            return;
        }
        let said = if key == "columns" { "does not list" } else { "leaves out" };
        self.err(
            list.span(),
            at.key(key),
            format!(
                "`u256` adds {} and `{key}` {said} {}: list the `u256` columns to write, or take their kind out of `u256`",
                left_out.iter().map(|c| c.as_str()).collect::<Vec<_>>().join(", "),
                if left_out.len() == 1 { "it" } else { "them" }
            ),
        );
    }

    /// The columns `list` (the value of `key`) leaves out of `tables`
    /// (each table's name and columns), in table order.
    fn column_list(
        &mut self,
        at: &At<'_>,
        dataset: Dataset,
        tables: &[(String, Vec<String>)],
        key: &str,
        list: &Spanned<Vec<Spanned<String>>>,
    ) -> Vec<String> {
        let mut all: Vec<&str> = Vec::new();
        for c in tables.iter().flat_map(|(_, columns)| columns) {
            if !all.contains(&c.as_str()) {
                all.push(c);
            }
        }
        let names = self.list(&Some(list.clone()), &at.key(key), all.len()).unwrap_or_default();
        let kept = dataset.kept_columns();
        let mut named: Vec<&str> = Vec::new();
        for n in &names {
            let name = n.get_ref().trim();
            if !all.contains(&name) {
                self.err(
                    n.span(),
                    at.key(key),
                    format!(
                        "`{}` is not a column of {}{}",
                        super::short(name),
                        listing(dataset, tables),
                        crate::spec::shape::nearest(name, all.iter().copied())
                            .map(|c| format!("; did you mean `{c}`?"))
                            .unwrap_or_default()
                    ),
                );
            } else if key == "exclude_columns" && kept.contains(&name) {
                self.err(n.span(), at.key(key), kept_message(dataset, tables, name));
            } else if !named.contains(&name) {
                named.push(name);
            }
        }
        let drops = |c: &str| !kept.contains(&c) && (named.contains(&c) != (key == "columns"));
        all.iter().filter(|c| drops(c)).map(|c| c.to_string()).collect()
    }

    /// Refuses exports that write one table with other columns (see the
    /// module doc), naming both.
    pub(super) fn same_columns(&mut self, raw: &[Spanned<RawExport>], exports: &[Export]) {
        for (j, b) in exports.iter().enumerate() {
            let tb = b.tables();
            let clash = exports[..j].iter().find_map(|a| {
                a.tables()
                    .into_iter()
                    .find(|t| tb.contains(t) && a.dropped_from(t) != b.dropped_from(t))
                    .map(|t| (a, t))
            });
            let Some((a, table)) = clash else { continue };
            let span: Range<usize> = raw.get(b.index).map_or(0..0, |r| {
                let r = r.get_ref();
                r.columns
                    .as_ref()
                    .or(r.exclude_columns.as_ref())
                    .map(Spanned::span)
                    .or_else(|| r.dataset.as_ref().map(Spanned::span))
                    .unwrap_or(0..0)
            });
            let shown = |e: &Export| {
                let dropped = e.dropped_from(&table);
                if dropped.is_empty() {
                    "every column".to_string()
                } else {
                    format!("all but {}", dropped.join(", "))
                }
            };
            self.err(
                span,
                format!("export[{}]", b.index),
                format!(
                    "writes table {table} with {}, and export[{}] writes it with {}: a table's files hold one set of columns; choose the same columns in both",
                    shown(b),
                    a.index,
                    shown(a)
                ),
            );
        }
    }
}

/// Each table an export of `dataset` writes, with its columns: the
/// dataset's, or its decoded tables' (and the dataset's with `also_raw`).
/// A decoded table keeps what `events` keeps: its identity's key, sort and
/// date columns have the same names.
fn export_columns(dataset: Dataset, decoding: Option<&Decoding>) -> Vec<(String, Vec<String>)> {
    match decoding {
        None => crate::spec::decoding::table_columns(dataset, &[], Default::default(), true),
        Some(d) => crate::spec::decoding::table_columns(dataset, &d.tables, d.u256, d.also_raw),
    }
}

/// `dataset` and its columns, or each table of a decoding export and its
/// columns.
fn listing(dataset: Dataset, tables: &[(String, Vec<String>)]) -> String {
    match tables {
        [(name, columns)] if name == dataset.name() => format!("{dataset}; its columns: {}", columns.join(", ")),
        _ => format!(
            "this export's tables; their columns: {}",
            tables
                .iter()
                .map(|(t, columns)| format!("{t}: {}", columns.join(", ")))
                .collect::<Vec<_>>()
                .join("; ")
        ),
    }
}

/// Why `name` cannot be left out of the export's tables.
fn kept_message(dataset: Dataset, tables: &[(String, Vec<String>)], name: &str) -> String {
    let kept = dataset.kept_columns();
    let whose = match tables {
        [(t, _)] => t.clone(),
        _ => "every table of this export".to_string(),
    };
    let mut free: Vec<&str> = Vec::new();
    for c in tables.iter().flat_map(|(_, columns)| columns) {
        if !kept.contains(&c.as_str()) && !free.contains(&c.as_str()) {
            free.push(c);
        }
    }
    format!(
        "`{name}` is always written: {whose} keeps {} (its key, sort, partition and date columns) whatever the selection; the columns it may leave out: {}",
        kept.join(", "),
        free.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use crate::spec::Spec;

    fn spec(exports: &str) -> String {
        format!("name = \"c\"\n[source]\nbase_url = \"sim\"\n[output]\nuri = \"o\"\n{exports}")
    }

    const BLOCKS: &str = "[[export]]\ndataset = \"blocks\"\nchains = [\"base\"]\nwindow = \"100..199\"\n";

    #[test]
    fn both_forms_of_one_selection_are_one_selection() {
        let only = Spec::parse("c.toml", &spec(&format!("{BLOCKS}columns = [\"hash\", \"miner\", \"number\"]\n"))).unwrap();
        let dropped = &only.exports[0].dropped_columns;
        // The kept columns are written though not listed.
        for kept in ["chain", "number", "timestamp", "hash", "miner"] {
            assert!(!dropped.iter().any(|c| c == kept), "{kept}: {dropped:?}");
        }
        let except = format!(
            "{BLOCKS}exclude_columns = [{}]\n",
            dropped.iter().map(|c| format!("\"{c}\"")).collect::<Vec<_>>().join(", ")
        );
        let except = Spec::parse("c.toml", &spec(&except)).unwrap();
        assert_eq!(&except.exports[0].dropped_columns, dropped);
        let none = Spec::parse("c.toml", &spec(BLOCKS)).unwrap();
        assert!(none.exports[0].dropped_columns.is_empty());
    }

    #[test]
    fn every_refusal_is_reported_at_once_with_the_datasets_columns() {
        let text = spec(&format!(
            "{BLOCKS}exclude_columns = [\"logs_bloom\", \"number\", \"bloom\"]\n[[export]]\ndataset = \"events\"\nchains = [\"base\"]\nwindow = \"100..199\"\ncolumns = [\"data\"]\nexclude_columns = [\"topics\"]\n"
        ));
        let errs = Spec::parse("c.toml", &text).unwrap_err().0;
        let shown: Vec<String> = errs.iter().map(ToString::to_string).collect();
        assert_eq!(errs.len(), 3, "{shown:#?}");
        assert!(
            shown[0]
                .starts_with("c.toml:10:34: export[0].exclude_columns: `number` is always written: blocks keeps chain, number, timestamp"),
            "{shown:#?}"
        );
        assert!(
            shown[1].starts_with(
                "c.toml:10:44: export[0].exclude_columns: `bloom` is not a column of blocks; its columns: chain, base_fee_per_gas,"
            ),
            "{shown:#?}"
        );
        assert!(
            shown[2].contains("export[1].exclude_columns: this export has `columns` too"),
            "{shown:#?}"
        );
    }

    #[test]
    fn exports_writing_one_table_choose_the_same_columns() {
        let other = "[[export]]\ndataset = \"blocks\"\nchains = [\"base\"]\nwindow = \"300..399\"\n";
        let text = spec(&format!("{BLOCKS}exclude_columns = [\"logs_bloom\"]\n{other}"));
        let errs = Spec::parse("c.toml", &text).unwrap_err().0;
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert!(
            errs[0]
                .message
                .contains("writes table blocks with every column, and export[0] writes it with all but logs_bloom"),
            "{errs:?}"
        );
        let text = spec(&format!("{BLOCKS}exclude_columns = [\"logs_bloom\"]\n{other}columns = [{}]\n", {
            let all = crate::vocab::Dataset::Blocks.columns();
            all.iter()
                .filter(|c| **c != "logs_bloom")
                .map(|c| format!("\"{c}\""))
                .collect::<Vec<_>>()
                .join(", ")
        }));
        Spec::parse("c.toml", &text).unwrap();
    }

    const TRANSFERS: &str = "[[export]]\ndataset = \"erc20_transfers\"\nchains = [\"base\"]\nwindow = \"100..199\"\n";

    #[test]
    fn a_decoding_export_chooses_among_its_tables_columns() {
        let text = spec(&format!(
            "{TRANSFERS}also_raw = true\nexclude_columns = [\"value_f64\", \"data\", \"transaction_index\"]\n"
        ));
        let s = Spec::parse("c.toml", &text).unwrap();
        let e = &s.exports[0];
        assert_eq!(e.dropped_from("erc20_transfers"), ["transaction_index", "value_f64"]);
        assert_eq!(e.dropped_from("events"), ["data", "transaction_index"]);
        let shown = s.selected_columns();
        assert_eq!(
            shown["erc20_transfers"],
            [
                "chain",
                "block_number",
                "block_timestamp",
                "transaction_hash",
                "log_index",
                "contract_address",
                "from",
                "to",
                "value"
            ]
        );
        assert!(!shown["events"].contains(&"data".to_string()), "{shown:?}");
        // `columns` names them alike; the identity columns are kept.
        let only = spec(&format!("{TRANSFERS}columns = [\"from\", \"value\"]\n"));
        let only = Spec::parse("c.toml", &only).unwrap();
        assert_eq!(
            only.selected_columns()["erc20_transfers"],
            ["chain", "block_number", "block_timestamp", "log_index", "from", "value"]
        );
    }

    #[test]
    fn a_decoding_export_is_refused_what_its_tables_lack_keep_or_u256_adds() {
        let text = spec(&format!(
            "{TRANSFERS}exclude_columns = [\"data\", \"log_index\"]\n[[export]]\ndataset = \"erc20_approvals\"\nchains = [\"base\"]\nwindow = \"100..199\"\nu256 = [\"decimal38\"]\ncolumns = [\"value\"]\n"
        ));
        let errs = Spec::parse("c.toml", &text).unwrap_err().0;
        let shown: Vec<String> = errs.iter().map(ToString::to_string).collect();
        assert_eq!(errs.len(), 3, "{shown:#?}");
        assert!(
            shown[0].contains("`data` is not a column of this export's tables; their columns: erc20_transfers: chain, block_number,"),
            "{shown:#?}"
        );
        assert!(
            shown[1].contains("`log_index` is always written: erc20_transfers keeps"),
            "{shown:#?}"
        );
        assert!(
            shown[2].contains("export[1].columns: `u256` adds value_decimal38 and `columns` does not list it"),
            "{shown:#?}"
        );
    }

    #[test]
    fn a_raw_table_two_exports_write_holds_one_set_of_columns_decoding_or_not() {
        let events = "[[export]]\ndataset = \"events\"\nchains = [\"base\"]\nwindow = \"300..399\"\nexclude_columns = [\"data\"]\n";
        // The raw table loses `data` in both: the decoded table's own
        // columns do not count.
        let same = spec(&format!(
            "{TRANSFERS}also_raw = true\nexclude_columns = [\"data\", \"value_f64\"]\n{events}"
        ));
        Spec::parse("c.toml", &same).unwrap();
        let other = spec(&format!("{TRANSFERS}also_raw = true\nexclude_columns = [\"value_f64\"]\n{events}"));
        let errs = Spec::parse("c.toml", &other).unwrap_err().0;
        assert!(
            errs[0]
                .message
                .contains("writes table events with all but data, and export[0] writes it with every column"),
            "{errs:?}"
        );
    }
}
