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
use crate::spec::Export;
use crate::spec::raw::RawExport;
use crate::vocab::Dataset;
use std::ops::Range;
use toml::Spanned;

impl Validator<'_> {
    /// The columns the export does not write (see the module doc).
    pub(super) fn columns(&mut self, at: &At<'_>, dataset: Dataset, decoding: bool) -> Vec<String> {
        let e = at.raw;
        if let (Some(_), Some(x)) = (&e.columns, &e.exclude_columns) {
            self.err(
                x.span(),
                at.key("exclude_columns"),
                "this export has `columns` too: choose its columns with one of them (`columns`: exactly these; `exclude_columns`: all but these)",
            );
        }
        let mut dropped = Vec::new();
        for (key, list) in [("columns", &e.columns), ("exclude_columns", &e.exclude_columns)] {
            let Some(list) = list else { continue };
            if decoding {
                self.err(
                    list.span(),
                    at.key(key),
                    "applies to the tables of a raw export (blocks, events, portfolio, tokens): a decoding export's columns are its event's parameters, and `u256` adds the wide ones",
                );
                continue;
            }
            dropped = self.column_list(at, dataset, key, list);
        }
        dropped
    }

    /// The columns `list` (the value of `key`) leaves out of `dataset`'s.
    fn column_list(&mut self, at: &At<'_>, dataset: Dataset, key: &str, list: &Spanned<Vec<Spanned<String>>>) -> Vec<String> {
        let names = self
            .list(&Some(list.clone()), &at.key(key), dataset.columns().len())
            .unwrap_or_default();
        let all = dataset.columns();
        let kept = dataset.kept_columns();
        let mut named: Vec<&str> = Vec::new();
        for n in &names {
            let name = n.get_ref().trim();
            if !all.contains(&name) {
                self.err(
                    n.span(),
                    at.key(key),
                    format!(
                        "`{}` is not a column of {dataset}; its columns: {}",
                        super::short(name),
                        all.join(", ")
                    ),
                );
            } else if key == "exclude_columns" && kept.contains(&name) {
                self.err(n.span(), at.key(key), kept_message(dataset, name));
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
                    .find(|t| tb.contains(t) && a.dropped_columns != b.dropped_columns)
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
                if e.dropped_columns.is_empty() {
                    "every column".to_string()
                } else {
                    format!("all but {}", e.dropped_columns.join(", "))
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

/// Why `name` cannot be left out of `dataset`'s table.
fn kept_message(dataset: Dataset, name: &str) -> String {
    format!(
        "`{name}` is always written: {dataset} keeps {} (its key, sort, partition and date columns) whatever the selection; the columns it may leave out: {}",
        dataset.kept_columns().join(", "),
        dataset
            .columns()
            .iter()
            .filter(|c| !dataset.kept_columns().contains(c))
            .copied()
            .collect::<Vec<_>>()
            .join(", ")
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

    #[test]
    fn a_decoding_export_takes_no_column_selection() {
        let text =
            spec("[[export]]\ndataset = \"erc20_transfers\"\nchains = [\"base\"]\nwindow = \"100..199\"\nexclude_columns = [\"data\"]\n");
        let errs = Spec::parse("c.toml", &text).unwrap_err().0;
        assert!(errs[0].message.contains("a decoding export's columns"), "{errs:?}");
    }
}
