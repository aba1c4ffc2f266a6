//! A change of the output as typed values: what comparing a spec with a
//! job's recorded identity finds that is made from the stored files with
//! no request ([`FormatChange`]: the format from and to, and each layout
//! or derived-table key changed, [`LayoutChange`]). Deciding, recording
//! (`migration.json`) and carrying out a change read these types, never
//! the text of a message.
//!
//! # Text
//!
//! A [`LayoutChange`] is shown as one line, `output.<key>: was <v>, now
//! <v>` or `export[<i>].<key>: was <v>, now <v>` (values as JSON, `unset`
//! for none); `migration.json` records the lines of its change in
//! `layout` in this form, and [`LayoutChange`]'s `FromStr` reads them back
//! (what a 0.2.0 build recorded included), refusing a line of any other
//! form.

use super::OutputFormat;
use std::fmt;

/// How a key that is not set is shown.
pub(crate) const UNSET: &str = "unset";

/// An `[output]` key of how the stored files are laid out and encoded: a
/// change of one is made by rewriting the stored files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LayoutKey {
    /// `output.partition_by`.
    PartitionBy,
    /// `output.bloom_filters`.
    BloomFilters,
    /// `output.compression`.
    Compression,
    /// `output.row_group_rows`.
    RowGroupRows,
    /// `output.hash_encoding`.
    HashEncoding,
}

impl LayoutKey {
    /// Every layout key, in the order changes are listed.
    pub const ALL: [LayoutKey; 5] = [
        LayoutKey::PartitionBy,
        LayoutKey::BloomFilters,
        LayoutKey::Compression,
        LayoutKey::RowGroupRows,
        LayoutKey::HashEncoding,
    ];

    /// The key's name under `[output]`.
    pub const fn name(self) -> &'static str {
        match self {
            LayoutKey::PartitionBy => "partition_by",
            LayoutKey::BloomFilters => "bloom_filters",
            LayoutKey::Compression => "compression",
            LayoutKey::RowGroupRows => "row_group_rows",
            LayoutKey::HashEncoding => "hash_encoding",
        }
    }

    /// The key named `name` under `[output]`.
    pub fn named(name: &str) -> Option<LayoutKey> {
        LayoutKey::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Whether a change of this key changes a table's partition columns or
    /// a column's type (a table format's metadata, not only its files).
    pub fn changes_columns(self) -> bool {
        matches!(self, LayoutKey::PartitionBy | LayoutKey::HashEncoding)
    }
}

/// One key changed that rewriting the stored files makes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LayoutChange {
    /// An `[output]` layout key.
    Output {
        /// The key.
        key: LayoutKey,
        /// Its recorded value, shown.
        was: String,
        /// The spec's, shown.
        now: String,
    },
    /// An export leaves out columns it wrote (`columns`,
    /// `exclude_columns`; shown as the columns not written): its tables'
    /// files are written again without them, and where the format records
    /// a table's schema, the schema loses them.
    Columns {
        /// The export's index.
        export: usize,
        /// The columns it did not write, shown.
        was: String,
        /// The columns it does not write now, shown.
        now: String,
    },
    /// A key of an export that decides the tables derived from its stored
    /// rows (`crate::spec::ExportIdentity::derivable`).
    Derived {
        /// The export's index.
        export: usize,
        /// The key (`decode`, `u256`, …).
        key: String,
        /// Its recorded value, shown.
        was: String,
        /// The spec's, shown.
        now: String,
    },
}

impl LayoutChange {
    /// Whether this changes what readers read (derived tables: new rows or
    /// new values), rather than only how the same rows are stored.
    pub fn is_derived(&self) -> bool {
        matches!(self, LayoutChange::Derived { .. })
    }

    /// Whether this changes a table's partition columns, a column's type,
    /// or which columns it has.
    pub fn changes_columns(&self) -> bool {
        match self {
            LayoutChange::Output { key, .. } => key.changes_columns(),
            LayoutChange::Columns { .. } => true,
            LayoutChange::Derived { .. } => false,
        }
    }
}

impl fmt::Display for LayoutChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LayoutChange::Output { key, was, now } => write!(f, "output.{}: was {was}, now {now}", key.name()),
            LayoutChange::Columns { export, was, now } => {
                write!(f, "export[{export}].{}: was {was}, now {now}", super::identity::COLUMNS_KEY)
            }
            LayoutChange::Derived { export, key, was, now } => write!(f, "export[{export}].{key}: was {was}, now {now}"),
        }
    }
}

impl std::str::FromStr for LayoutChange {
    type Err = String;

    fn from_str(line: &str) -> Result<LayoutChange, String> {
        let bad = || format!("`{line}` is no change of a layout key (`output.<key>: was …, now …`, or `export[<i>].<key>: …`)");
        let (name, values) = line.split_once(": was ").ok_or_else(bad)?;
        // `was` is JSON or `unset`: read as far as it goes, so a value
        // holding `, now ` cannot split the line in the wrong place.
        let was_len = if values.starts_with(UNSET) {
            UNSET.len()
        } else {
            let mut read = serde_json::Deserializer::from_str(values).into_iter::<serde_json::Value>();
            read.next().and_then(Result::ok).ok_or_else(bad)?;
            read.byte_offset()
        };
        let (was, rest) = values.split_at(was_len);
        let now = rest.strip_prefix(", now ").ok_or_else(bad)?;
        let (was, now) = (was.to_string(), now.to_string());
        if let Some(key) = name.strip_prefix("output.") {
            let key = LayoutKey::named(key).ok_or_else(bad)?;
            return Ok(LayoutChange::Output { key, was, now });
        }
        let (export, key) = name.strip_prefix("export[").and_then(|r| r.split_once("].")).ok_or_else(bad)?;
        let export = export.parse().map_err(|_| bad())?;
        if key.is_empty() {
            return Err(bad());
        }
        if key == super::identity::COLUMNS_KEY {
            return Ok(LayoutChange::Columns { export, was, now });
        }
        Ok(LayoutChange::Derived {
            export,
            key: key.to_string(),
            was,
            now,
        })
    }
}

/// Lines of [`LayoutChange`]s as `migration.json` records them (`layout`:
/// a list of strings).
pub mod lines {
    use super::LayoutChange;
    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes each change as its line.
    pub fn serialize<S: Serializer>(changes: &[LayoutChange], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(changes.iter().map(|c| c.to_string()))
    }

    /// Reads each line back, refusing one of another form.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<LayoutChange>, D::Error> {
        Vec::<String>::deserialize(d)?
            .iter()
            .map(|l| l.parse().map_err(serde::de::Error::custom))
            .collect()
    }
}

/// A change of the output's format or layout, to make from the stored rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatChange {
    /// The format the job's files are in.
    pub from: OutputFormat,
    /// The spec's (the same as `from` when only the layout changes).
    pub to: OutputFormat,
    /// Changed layout keys: the stored files are rewritten into the
    /// spec's layout.
    pub layout: Vec<LayoutChange>,
}

impl FormatChange {
    /// Whether the output's format changes (else only its layout).
    pub fn converts(&self) -> bool {
        self.from != self.to
    }

    /// The layout keys changed, one line a key, joined by `; `.
    pub fn layout_lines(&self) -> String {
        lines_of(&self.layout)
    }
}

/// `changes`, one line a change, joined by `; `.
pub fn lines_of(changes: &[LayoutChange]) -> String {
    changes.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_reads_back_from_its_line_as_it_was() {
        let changes = [
            LayoutChange::Output {
                key: LayoutKey::PartitionBy,
                was: r#"["chain","date"]"#.into(),
                now: r#"["chain"]"#.into(),
            },
            LayoutChange::Output {
                key: LayoutKey::BloomFilters,
                was: "unset".into(),
                now: r#"["a, now b"]"#.into(),
            },
            LayoutChange::Derived {
                export: 12,
                key: "u256".into(),
                was: r#""decimal""#.into(),
                now: r#""text""#.into(),
            },
            LayoutChange::Columns {
                export: 2,
                was: "unset".into(),
                now: r#"["extra_data","logs_bloom"]"#.into(),
            },
        ];
        for c in changes {
            assert_eq!(c.to_string().parse::<LayoutChange>().as_ref(), Ok(&c), "{c}");
        }
        assert_eq!(
            LayoutChange::Output {
                key: LayoutKey::HashEncoding,
                was: r#""hex""#.into(),
                now: r#""binary""#.into()
            }
            .to_string(),
            r#"output.hash_encoding: was "hex", now "binary""#
        );
    }

    #[test]
    fn a_line_of_another_form_is_refused() {
        for line in [
            "output.format: was parquet, now delta",
            "output.partition_by was x, now y",
            "export[x].decode: was a, now b",
            "export[1]: was a, now b",
            "export[1].: was a, now b",
            "something else",
            "output.compression: was zstd, now snappy",
        ] {
            assert!(line.parse::<LayoutChange>().is_err(), "{line}");
        }
    }

    #[test]
    fn only_partition_columns_and_encodings_change_columns() {
        let changed: Vec<LayoutKey> = LayoutKey::ALL.into_iter().filter(|k| k.changes_columns()).collect();
        assert_eq!(changed, [LayoutKey::PartitionBy, LayoutKey::HashEncoding]);
        for k in LayoutKey::ALL {
            assert_eq!(LayoutKey::named(k.name()), Some(k));
        }
    }
}
